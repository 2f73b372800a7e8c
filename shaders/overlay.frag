#version 300 es
// An RGBA image over the video: straight (not premultiplied) alpha times u_opacity, blended
// with SRC_ALPHA, ONE_MINUS_SRC_ALPHA. GLSL ES 3.00 as stored, 1.00 on GLES 2.
// On a 10-bit HDR target (u_graphics 1: PQ, 2: HLG) the image's sRGB colours become HDR
// graphics as HDRGraphics makes them on the CPU: BT.1886 display light, BT.709 primaries in
// BT.2020, white at 203 cd/m² in PQ or at 75 % signal in HLG (ITU-R BT.2408).
#ifdef GL_FRAGMENT_PRECISION_HIGH
precision highp float;
#else
precision mediump float;
#endif
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
uniform int u_graphics;
// BT.709 primaries in BT.2020, linear light (HDRGraphics' matrix); with u_graphics only.
uniform mat3 u_toBT2020;
VARYING vec2 v_uv;

vec3 pqSignal(vec3 y) {
    vec3 p = pow(max(y, vec3(0.0)), vec3(2610.0 / 16384.0));
    return pow((vec3(3424.0 / 4096.0) + 2413.0 / 4096.0 * 32.0 * p) / (vec3(1.0) + 2392.0 / 4096.0 * 32.0 * p), vec3(2523.0 / 4096.0 * 128.0));
}

float hlgSignal(float e) {
    float a = 0.17883277, b = 1.0 - 4.0 * a, c = 0.5 - a * log(4.0 * a);
    return e <= 1.0 / 12.0 ? sqrt(3.0 * e) : a * log(12.0 * e - b) + c;
}

void main() {
    vec4 c = TEX(u_overlay, v_uv);
    vec3 rgb = c.rgb;
    if (u_graphics != 0) {
        vec3 l = pow(rgb, vec3(2.4));
        vec3 w = u_toBT2020 * l;
        rgb = u_graphics == 1 ? pqSignal(w * (203.0 / 10000.0))
            : vec3(hlgSignal(w.r * 0.2646), hlgSignal(w.g * 0.2646), hlgSignal(w.b * 0.2646));
    }
    o_color = vec4(rgb, c.a * u_opacity);
}
