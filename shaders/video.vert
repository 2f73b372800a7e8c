#version 300 es
// One quad for the video or an overlay: a_pos runs over the unit square; u_rect is the
// destination rectangle in output pixels (x, y, width, height, rows counted from the top,
// which is GL's row 0: readback returns row 0 first); u_output is the output size.
precision highp float;
in vec2 a_pos;
uniform vec4 u_rect;
uniform vec2 u_output;
out vec2 v_uv;
void main() {
    vec2 p = u_rect.xy + a_pos * u_rect.zw;
    gl_Position = vec4(p / u_output * 2.0 - 1.0, 0.0, 1.0);
    v_uv = a_pos;
}
