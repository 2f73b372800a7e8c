#version 300 es
// An RGBA image over the video: straight (not premultiplied) alpha times u_opacity, blended
// with SRC_ALPHA, ONE_MINUS_SRC_ALPHA.
precision mediump float;
uniform sampler2D u_overlay;
uniform float u_opacity;
in vec2 v_uv;
out vec4 o_color;
void main() {
    vec4 c = texture(u_overlay, v_uv);
    o_color = vec4(c.rgb, c.a * u_opacity);
}
