#version 300 es
// Packed RGB (rgb24, rgba) to the output: u_map takes an output pixel to a position in the
// stored picture, in pixels; the sampler's filter (nearest at 1:1, linear when scaling) does the
// rest. With `#define EXTERNAL` inserted after the #version line: a whole Y'CbCr DMA-BUF imported
// as one EGLImage, which the driver converts to RGB as it samples (GL_OES_EGL_image_external; the
// fallback when per-plane import is refused). GLSL ES 3.00 as stored, 1.00 on GLES 2.
#ifdef EXTERNAL
#if __VERSION__ >= 300
#extension GL_OES_EGL_image_external_essl3 : require
#else
#extension GL_OES_EGL_image_external : require
#endif
#define SAMPLER samplerExternalOES
#else
#define SAMPLER sampler2D
#endif
precision highp float;
#if __VERSION__ >= 300
#define TEX texture
out vec4 o_color;
#else
#define TEX texture2D
#define o_color gl_FragColor
#endif
uniform highp SAMPLER u_image;
uniform mat3 u_map;
uniform vec2 u_size;
void main() {
    vec2 p = (u_map * vec3(gl_FragCoord.xy, 1.0)).xy;
    o_color = vec4(TEX(u_image, p / u_size).rgb, 1.0);
}
