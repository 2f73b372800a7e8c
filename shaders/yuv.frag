#version 300 es
// Y'CbCr to R'G'B'. Three planes (yuv420p, yuv420p10le, yuv444p, ...) by default; two planes
// with interleaved Cb Cr (nv12, p010le) when the renderer inserts `#define SEMI_PLANAR` after the
// #version line. One file, so that both layouts share every line of the conversion.
precision highp float;
precision highp int;
uniform highp sampler2D u_planeY;
#ifdef SEMI_PLANAR
uniform highp sampler2D u_planeUV;
#else
uniform highp sampler2D u_planeU;
uniform highp sampler2D u_planeV;
#endif
// u_map takes an output pixel (gl_FragCoord) to a position in the stored luma plane, in pixels
// (rotation, mirror and scaling folded in). Every plane is read with texelFetch and filtered
// here, so that 16-bit samples stored as byte pairs filter like any other.
uniform mat3 u_map;
uniform ivec2 u_lumaSize;
uniform ivec2 u_chromaSize;
// 0: samples are normalised texels (R8/RG8/R16/RG16); 1: 16-bit samples stored as byte pairs
// (low, high) in RG8 (one component) or RGBA8 (two components).
uniform int u_bytePairs;
// A texel's normalised value times u_rawMax is the stored sample (255 or 65535); divided by
// u_shift (1, or 64 for P010's high-aligned 10 bits) it is the code value.
uniform float u_rawMax;
uniform float u_shift;
// Code value to normalised Y' in [0,1] and Cb/Cr in [-0.5,0.5]: (code - offset) * scale.
uniform vec2 u_yRange;
uniform vec2 u_cRange;
// Y'CbCr to R'G'B' (column-major: rgb = u_matrix * vec3(y, cb, cr)).
uniform mat3 u_matrix;
// 0: luma nearest (1:1 output); 1: bilinear.
uniform int u_lumaFilter;
// 0: chroma nearest, each sample covering its 2x2 block (swscale's unscaled yuv420p path);
// 1: swscale's generic path: cubic (Keys, a = -0.6), centred siting, along the picture's
//    upright vertical axis (u_cubicAxis: 0 = stored y, 1 = stored x), nearest along the other;
// 2: bilinear, MPEG-2/H.264 siting (co-sited horizontally, centred vertically), for scaled output.
uniform int u_chromaMode;
uniform int u_cubicAxis;
// 1: round luma and chroma to 8 bits and clip them to 0...255 before the matrix, as swscale's
// generic path does on its way to 8-bit RGB (its vertical filter ends in 8-bit Y, U, V).
uniform int u_quantize8;
// 2^(bits - 8): one 8-bit step in code values.
uniform float u_step8;
// 1: convert like swscale's table-driven yuv2rgb (libswscale/yuv2rgb.c) in integers: 8-bit Y, U, V
// index a luma table through per-chroma offsets. u_swsCoeffs: crv, cbu, cgu, cgv already divided
// by u_swsLuma.x; u_swsLuma: cy, table offset (326 limited, 384 full), oy (all 16.16 fixed point).
uniform int u_tableMath;
uniform ivec4 u_swsCoeffs;
uniform ivec3 u_swsLuma;
// 1 (with u_chromaMode 1 and u_tableMath 1): reproduce swscale's vertical chroma filter exactly, in
// integers, for an exact 2:1 upscale (an even number of upright rows, at least 16, chroma rows half
// as many): its 12-bit taps (initFilter, SWS_BICUBIC|SWS_BITEXACT, x86 alignment), the 15-bit
// intermediate (code << (15 - bits), u_exactScale) and (sum + (1 << 18)) >> 19 in yuv2rgb_X.
// u_cubicFlip: 1 where the upright rows run against the stored axis.
uniform int u_cubicExact;
uniform int u_cubicFlip;
uniform int u_exactScale;

vec3 swsConvertInt(int y, ivec2 uv);

int swsTable(int index) {
    return clamp((index * u_swsLuma.x - (384 << 16) - u_swsLuma.z + 32768) >> 16, 0, 255);
}

vec3 swsConvert(float yCode, vec2 cCode) {
    int y = int(clamp(floor(yCode / u_step8 + 0.5), 0.0, 255.0));
    ivec2 uv = ivec2(clamp(floor(cCode / u_step8 + 0.5), 0.0, 255.0));
    return swsConvertInt(y, uv);
}

vec3 swsConvertInt(int y, ivec2 uv) {
    int u = clamp(uv.x, 0, 255);
    int v = clamp(uv.y, 0, 255);
    int base = u_swsLuma.y + y;
    int r = swsTable(base + ((v * u_swsCoeffs.x) >> 16) - (u_swsCoeffs.x >> 9));
    int g = swsTable(base + ((u * u_swsCoeffs.z) >> 16) - (u_swsCoeffs.z >> 9) + ((v * u_swsCoeffs.w) >> 16) - (u_swsCoeffs.w >> 9));
    int b = swsTable(base + ((u * u_swsCoeffs.y) >> 16) - (u_swsCoeffs.y >> 9));
    return vec3(float(r), float(g), float(b)) / 255.0;
}
out vec4 o_color;

float decode1(vec4 t) {
    float raw = u_bytePairs == 1 ? (t.r + t.g * 256.0) * 255.0 : t.r * u_rawMax;
    // The stored sample is an integer: undo the normalisation's rounding.
    return floor(raw + 0.5) / u_shift;
}

vec2 decode2(vec4 t) {
    vec2 raw = u_bytePairs == 1 ? vec2(t.r + t.g * 256.0, t.b + t.a * 256.0) * 255.0 : t.rg * u_rawMax;
    return floor(raw + 0.5) / u_shift;
}

vec2 chromaAt(ivec2 p) {
    ivec2 q = clamp(p, ivec2(0), u_chromaSize - 1);
#ifdef SEMI_PLANAR
    return decode2(texelFetch(u_planeUV, q, 0));
#else
    return vec2(decode1(texelFetch(u_planeU, q, 0)), decode1(texelFetch(u_planeV, q, 0)));
#endif
}

float lumaAt(ivec2 p) {
    return decode1(texelFetch(u_planeY, clamp(p, ivec2(0), u_lumaSize - 1), 0));
}

float luma(vec2 p) {
    if (u_lumaFilter == 0) return lumaAt(ivec2(floor(p)));
    vec2 q = p - 0.5;
    ivec2 i = ivec2(floor(q));
    vec2 f = q - floor(q);
    float a = mix(lumaAt(i), lumaAt(i + ivec2(1, 0)), f.x);
    float b = mix(lumaAt(i + ivec2(0, 1)), lumaAt(i + ivec2(1, 1)), f.x);
    return mix(a, b, f.y);
}

// Keys cubic, a = -0.6 (swscale's SWS_BICUBIC with its default parameters).
float cubicWeight(float x) {
    float a = -0.6;
    x = abs(x);
    if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
    if (x < 2.0) return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
    return 0.0;
}

vec2 chroma(vec2 p) {
    vec2 ratio = vec2(u_chromaSize) / vec2(u_lumaSize);
    vec2 c = p * ratio;
    if (u_chromaMode == 0) return chromaAt(ivec2(floor(c)));
    if (u_chromaMode == 1) {
        float along = (u_cubicAxis == 0 ? c.y : c.x) - 0.5;
        int across = int(floor(u_cubicAxis == 0 ? c.x : c.y));
        float base = floor(along);
        float f = along - base;
        vec2 sum = vec2(0.0);
        for (int k = -1; k <= 2; k++) {
            int idx = int(base) + k;
            ivec2 t = u_cubicAxis == 0 ? ivec2(across, idx) : ivec2(idx, across);
            sum += chromaAt(t) * cubicWeight(float(k) - f);
        }
        return sum;
    }
    vec2 q = c - vec2(0.5 * ratio.x, 0.5);
    ivec2 i = ivec2(floor(q));
    vec2 f = q - floor(q);
    vec2 a = mix(chromaAt(i), chromaAt(i + ivec2(1, 0)), f.x);
    vec2 b = mix(chromaAt(i + ivec2(0, 1)), chromaAt(i + ivec2(1, 1)), f.x);
    return mix(a, b, f.y);
}

// 8-bit Cb, Cr as swscale's generic path makes them for an exact 2:1 vertical upscale (u_cubicExact).
ivec2 chromaExact8(vec2 p) {
    vec2 c = p * vec2(u_chromaSize) / vec2(u_lumaSize);
    int n = u_cubicAxis == 0 ? u_lumaSize.y : u_lumaSize.x;
    int cn = n / 2;
    int s = clamp(int(floor(u_cubicAxis == 0 ? p.y : p.x)), 0, n - 1);
    int across = int(floor(u_cubicAxis == 0 ? c.x : c.y));
    int i = u_cubicFlip == 1 ? n - 1 - s : s;
    int m = i / 2;
    int first;
    ivec4 w;
    if (i == 0) { first = 0; w = ivec4(4432, -336, 0, 0); }
    else if (i == 2) { first = 0; w = ivec4(959, 3473, -336, 0); }
    else if ((i & 1) == 1) { first = m - 1; w = ivec4(-346, 3572, 985, -115); }
    else { first = m - 2; w = ivec4(-115, 985, 3572, -346); }
    ivec2 sum = ivec2(0);
    for (int k = 0; k < 4; k++) {
        int r = clamp(first + k, 0, cn - 1);
        int idx = u_cubicFlip == 1 ? cn - 1 - r : r;
        ivec2 code = ivec2(chromaAt(u_cubicAxis == 0 ? ivec2(across, idx) : ivec2(idx, across)));
        sum += code * w[k];
    }
    return (sum * u_exactScale + (1 << 18)) >> 19;
}

void main() {
    vec2 p = (u_map * vec3(gl_FragCoord.xy, 1.0)).xy;
    float yCode = luma(p);
    if (u_cubicExact == 1 && u_chromaMode == 1 && u_tableMath == 1) {
        int y8 = int(clamp(floor(yCode / u_step8 + 0.5), 0.0, 255.0));
        o_color = vec4(swsConvertInt(y8, chromaExact8(p)), 1.0);
        return;
    }
    vec2 cCode = chroma(p);
    if (u_tableMath == 1) {
        o_color = vec4(swsConvert(yCode, cCode), 1.0);
        return;
    }
    if (u_quantize8 == 1) {
        yCode = clamp(floor(yCode / u_step8 + 0.5), 0.0, 255.0) * u_step8;
        cCode = clamp(floor(cCode / u_step8 + 0.5), 0.0, 255.0) * u_step8;
    }
    float y = (yCode - u_yRange.x) * u_yRange.y;
    vec2 cbcr = (cCode - u_cRange.x) * u_cRange.y;
    o_color = vec4(clamp(u_matrix * vec3(y, cbcr), 0.0, 1.0), 1.0);
}
