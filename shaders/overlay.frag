#version 300 es
// An RGBA image over the video: straight (not premultiplied) alpha times u_opacity, blended
// with SRC_ALPHA, ONE_MINUS_SRC_ALPHA. GLSL ES 3.00 as stored, 1.00 on GLES 2.
precision mediump float;
#if __VERSION__ >= 300
#define TEX texture
#define VARYING in
out vec4 o_color;
#else
#define TEX texture2D
#define VARYING varying
#define o_color gl_FragColor
#endif
uniform sampler2D u_overlay;
uniform float u_opacity;
VARYING vec2 v_uv;
void main() {
    vec4 c = TEX(u_overlay, v_uv);
    o_color = vec4(c.rgb, c.a * u_opacity);
}
