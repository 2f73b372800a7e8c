#version 300 es
// One quad for the video or an overlay: a_pos runs over the unit square; u_rect is the
// destination rectangle in output pixels (x, y, width, height, rows counted from the top,
// which is GL's row 0: readback returns row 0 first); u_output is the output size.
// GLSL ES 3.00 as stored; GLSL ES 1.00 on a GLES 2 context (the renderer replaces #version).
#if __VERSION__ >= 300
#define ATTRIBUTE in
#define VARYING out
#else
#define ATTRIBUTE attribute
#define VARYING varying
#endif
precision highp float;
ATTRIBUTE vec2 a_pos;
uniform vec4 u_rect;
uniform vec2 u_output;
VARYING vec2 v_uv;
void main() {
    vec2 p = u_rect.xy + a_pos * u_rect.zw;
    gl_Position = vec4(p / u_output * 2.0 - 1.0, 0.0, 1.0);
    v_uv = a_pos;
}
