#version 300 es
// Packed RGB (rgb24, rgba) to the output: u_map takes an output pixel to a position in the
// stored picture, in pixels; the sampler's filter (nearest at 1:1, linear when scaling) does the rest.
precision highp float;
uniform highp sampler2D u_image;
uniform mat3 u_map;
uniform vec2 u_size;
out vec4 o_color;
void main() {
    vec2 p = (u_map * vec3(gl_FragCoord.xy, 1.0)).xy;
    o_color = vec4(texture(u_image, p / u_size).rgb, 1.0);
}
