#version 300 es
// Y'CbCr to R'G'B'. One file, so that every layout and mode shares every line of the conversion;
// the renderer compiles one program per combination it draws (GLRenderer.YUVProgramKey), each
// with `#define NAME 1` lines inserted after the #version line:
//   SEMI_PLANAR       two planes with interleaved Cb Cr (nv12, p010le); three planes otherwise.
//   BYTE_PAIRS        16-bit samples stored as byte pairs (low, high): RG8 or LUMINANCE_ALPHA
//                     (one component), RGBA8 (two; on GLES 2 two LUMINANCE_ALPHA texels instead).
//   LUMINANCE_ALPHA   two-channel 8-bit textures are LUMINANCE_ALPHA (second value in .a, GLES 2
//                     uploads); RG (second value in .g) otherwise.
//   LUMA_BILINEAR     bilinear luma (scaled output); nearest otherwise (drawn at the stored size).
//   CHROMA_NEAREST    each chroma sample covers its block (swscale's unscaled yuv420p path);
//   CHROMA_CUBIC      swscale's generic path: cubic (Keys, a = -0.6), centred siting, along the
//                     picture's upright vertical axis (u_cubicAxis), nearest along the other;
//   CHROMA_CUBIC_EXACT  CHROMA_CUBIC with swscale's exact 12-bit taps (see chromaExact8);
//   CHROMA_BILINEAR   bilinear, MPEG-2/H.264 siting (co-sited horizontally, centred
//                     vertically), for scaled output where CHROMA_SCALED_EXACT cannot be used;
//   CHROMA_SCALED_EXACT  luma and chroma scaled as swscale's SWS_BICUBIC | SWS_BITEXACT path
//                     does to packed 32-bit RGB, integer step by integer step (scaledCodes);
//                     8-bit samples only;
//   CHROMA_SCALED_FULL  the same with full-resolution chroma and yuv2rgb_full's arithmetic,
//                     which swscale uses for an odd output width. Exactly one CHROMA_ define is set.
//   TABLE_MATH        convert like swscale's table-driven yuv2rgb (libswscale/yuv2rgb.c).
//   TONE_MAP          a PQ (or, with TONE_HLG, HLG) picture tone mapped to SDR BT.709 as
//                     CPUToneMapper does it (see toneMap), with one TONE_<CURVE> define for the
//                     curve; the code values keep every bit up to the matrix (no 8-bit step).
//                     Only with CHROMA_NEAREST, CHROMA_CUBIC or CHROMA_BILINEAR, without TABLE_MATH.
//   DEEP              the picture's own R'G'B' for a 10-bit target (XRGB2101010, RGB10_A2): the
//                     float matrix with every bit of the code values kept, no 8-bit step; the same
//                     chroma modes as TONE_MAP, and never with it.
// Compile-time choices rather than uniform branches: a software rasteriser (llvmpipe) runs both
// sides of a branch on every pixel, texture reads included, and a GPU gains registers.
//
// Two dialects from one source: GLSL ES 3.00 as stored, GLSL ES 1.00 when the renderer replaces
// the #version line on a GLES 2 context. Hence no texelFetch (every plane is NEAREST-filtered and
// read at texel centres) and no integer operators: swscale's integer steps are done in floats
// holding exact integers (float32 holds integers up to 2^24 exactly; see mulShr16). Needs highp
// floats in fragment shaders, which the renderer checks on GLES 2.
precision highp float;
precision highp int;
#if __VERSION__ >= 300
#define TEX texture
out vec4 o_color;
#else
#define TEX texture2D
#define o_color gl_FragColor
#endif
uniform highp sampler2D u_planeY;
#ifdef SEMI_PLANAR
uniform highp sampler2D u_planeUV;
#else
uniform highp sampler2D u_planeU;
uniform highp sampler2D u_planeV;
#endif
#ifdef CHROMA_SCALED_FULL
#define CHROMA_SCALED_EXACT 1
#endif
#if !defined(CHROMA_NEAREST) && !defined(CHROMA_CUBIC) && !defined(CHROMA_CUBIC_EXACT) && !defined(CHROMA_BILINEAR) && !defined(CHROMA_SCALED_EXACT)
#error "one CHROMA_ define is required"
#endif
#if (defined(CHROMA_CUBIC_EXACT) || defined(CHROMA_SCALED_EXACT)) && !defined(TABLE_MATH)
#error "the exact chroma modes need TABLE_MATH"
#endif
#if (defined(TONE_MAP) || defined(DEEP)) && (defined(TABLE_MATH) || defined(CHROMA_CUBIC_EXACT) || defined(CHROMA_SCALED_EXACT))
#error "TONE_MAP and DEEP convert with the float matrix: no TABLE_MATH, no exact chroma mode"
#endif
#if defined(TONE_MAP) && defined(DEEP)
#error "DEEP keeps the HDR signal: no TONE_MAP"
#endif
#if defined(TONE_MAP) && !defined(TONE_HABLE) && !defined(TONE_MOBIUS) && !defined(TONE_REINHARD) && !defined(TONE_CLIP) && !defined(TONE_LINEAR) && !defined(TONE_BT2390)
#error "TONE_MAP needs one TONE_<CURVE> define"
#endif
// u_map takes an output pixel (gl_FragCoord) to a position in the stored luma plane, in pixels
// (rotation, mirror and scaling folded in). Every plane is read texel by texel and filtered
// here, so that 16-bit samples stored as byte pairs filter like any other.
uniform mat3 u_map;
// Plane sizes in texels (whole numbers).
uniform vec2 u_lumaSize;
uniform vec2 u_chromaSize;
// Without BYTE_PAIRS a texel's normalised value times u_rawMax is the stored sample (255 or
// 65535). A sample divided by u_shift (1, or 64 for P010's high-aligned 10 bits) is its code value.
uniform float u_rawMax;
uniform float u_shift;
// Code value to normalised Y' in [0,1] and Cb/Cr in [-0.5,0.5]: (code - offset) * scale.
uniform vec2 u_yRange;
uniform vec2 u_cRange;
// Y'CbCr to R'G'B' (column-major: rgb = u_matrix * vec3(y, cb, cr)).
uniform mat3 u_matrix;
// The cubic's axis: 0 = stored y, 1 = stored x.
uniform int u_cubicAxis;
// 2^(bits - 8): one 8-bit step in code values.
uniform float u_step8;
// TABLE_MATH: 8-bit Y, U, V index a luma table through per-chroma offsets. u_swsCoeffs: crv,
// cbu, cgu, cgv already divided by u_swsLuma.x; u_swsLuma: cy (16.16 fixed point), table offset
// (326 limited, 384 full), and the luma offset oy in whole units (16 limited, 0 full). All whole
// numbers.
uniform vec4 u_swsCoeffs;
uniform vec3 u_swsLuma;
// CHROMA_CUBIC_EXACT reproduces swscale's vertical chroma filter exactly for an exact 2:1
// upscale (an even number of upright rows, at least 16, chroma rows half as many): its 12-bit
// taps (initFilter, SWS_BICUBIC|SWS_BITEXACT, x86 alignment), the 15-bit intermediate
// (code * 2^(15 - bits), u_exactScale) and (sum + 2^18) >> 19 in yuv2rgb_X.
// u_cubicFlip: 1 where the upright rows run against the stored axis.
uniform int u_cubicFlip;
uniform float u_exactScale;

// (a * b + add) >> 16 for whole numbers 0 <= a < 2^11, |b| < 2^20, 0 <= add < 2^16, without
// losing a bit: b = 256 bHi + bLo, a bHi = 256 pHi + pLo, so a b = 65536 pHi + 256 pLo + a bLo,
// and every partial value stays below 2^24.
float mulShr16(float a, float b, float add) {
    float bHi = floor(b / 256.0);
    float bLo = b - bHi * 256.0;
    float p = a * bHi;
    float pHi = floor(p / 256.0);
    return pHi + floor(((p - pHi * 256.0) * 256.0 + a * bLo + add) / 65536.0);
}

float swsTable(float index) {
    return clamp(mulShr16(index, u_swsLuma.x, 32768.0) - 384.0 - u_swsLuma.z, 0.0, 255.0);
}

// One chroma term of a table index: (c * coeff) >> 16 minus coeff >> 9.
float swsTerm(float c, float coeff) {
    return mulShr16(c, coeff, 0.0) - floor(coeff / 512.0);
}

vec3 swsConvertCodes(float y, vec2 uv) {
    float u = clamp(uv.x, 0.0, 255.0);
    float v = clamp(uv.y, 0.0, 255.0);
    float base = u_swsLuma.y + y;
    float r = swsTable(base + swsTerm(v, u_swsCoeffs.x));
    float g = swsTable(base + swsTerm(u, u_swsCoeffs.z) + swsTerm(v, u_swsCoeffs.w));
    float b = swsTable(base + swsTerm(u, u_swsCoeffs.y));
    return vec3(r, g, b) / 255.0;
}

float to8(float code) {
    return clamp(floor(code / u_step8 + 0.5), 0.0, 255.0);
}

vec4 fetch(sampler2D plane, vec2 texel, vec2 size) {
    return TEX(plane, (texel + 0.5) / size);
}

#ifdef LUMINANCE_ALPHA
#define SECOND(t) t.a
#define PAIR(t) t.ra
#else
#define SECOND(t) t.g
#define PAIR(t) t.rg
#endif

float decode1(vec4 t) {
#ifdef BYTE_PAIRS
    float raw = (t.r + SECOND(t) * 256.0) * 255.0;
#else
    float raw = t.r * u_rawMax;
#endif
    // Code values are integers: undo the normalisation's rounding (after the shift, so that a
    // sampler that reads 16-bit texels with less precision still lands on P010's code).
    return floor(raw / u_shift + 0.5);
}

vec2 decode2(vec4 t) {
#ifdef BYTE_PAIRS
    vec2 raw = vec2(t.r + t.g * 256.0, t.b + t.a * 256.0) * 255.0;
#else
    vec2 raw = PAIR(t) * u_rawMax;
#endif
    return floor(raw / u_shift + 0.5);
}

vec2 chromaAt(vec2 p) {
    vec2 q = clamp(p, vec2(0.0), u_chromaSize - 1.0);
#if defined(SEMI_PLANAR) && defined(BYTE_PAIRS) && defined(LUMINANCE_ALPHA)
    // GLES 2 byte pairs: one LUMINANCE_ALPHA texel per component, Cb then Cr.
    vec2 size = vec2(2.0 * u_chromaSize.x, u_chromaSize.y);
    return vec2(decode1(fetch(u_planeUV, vec2(2.0 * q.x, q.y), size)), decode1(fetch(u_planeUV, vec2(2.0 * q.x + 1.0, q.y), size)));
#elif defined(SEMI_PLANAR)
    return decode2(fetch(u_planeUV, q, u_chromaSize));
#else
    return vec2(decode1(fetch(u_planeU, q, u_chromaSize)), decode1(fetch(u_planeV, q, u_chromaSize)));
#endif
}

float lumaAt(vec2 p) {
    return decode1(fetch(u_planeY, clamp(p, vec2(0.0), u_lumaSize - 1.0), u_lumaSize));
}

float luma(vec2 p) {
#ifndef LUMA_BILINEAR
    return lumaAt(floor(p));
#else
    vec2 q = p - 0.5;
    vec2 i = floor(q);
    vec2 f = q - i;
    float a = mix(lumaAt(i), lumaAt(i + vec2(1.0, 0.0)), f.x);
    float b = mix(lumaAt(i + vec2(0.0, 1.0)), lumaAt(i + vec2(1.0, 1.0)), f.x);
    return mix(a, b, f.y);
#endif
}

// Keys cubic, a = -0.6 (swscale's SWS_BICUBIC with its default parameters).
float cubicWeight(float x) {
    float a = -0.6;
    x = abs(x);
    if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
    if (x < 2.0) return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
    return 0.0;
}

// The chroma sample at `index` along the cubic's axis and `across` it.
vec2 chromaAlong(float index, float across) {
    return chromaAt(u_cubicAxis == 0 ? vec2(across, index) : vec2(index, across));
}

vec2 chroma(vec2 p) {
    vec2 ratio = u_chromaSize / u_lumaSize;
    vec2 c = p * ratio;
#if defined(CHROMA_NEAREST)
    return chromaAt(floor(c));
#elif defined(CHROMA_CUBIC)
    float along = (u_cubicAxis == 0 ? c.y : c.x) - 0.5;
    float across = floor(u_cubicAxis == 0 ? c.x : c.y);
    float base = floor(along);
    float f = along - base;
    vec2 sum = vec2(0.0);
    for (int k = -1; k <= 2; k++) {
        sum += chromaAlong(base + float(k), across) * cubicWeight(float(k) - f);
    }
    return sum;
#else
    vec2 q = c - vec2(0.5 * ratio.x, 0.5);
    vec2 i = floor(q);
    vec2 f = q - i;
    vec2 a = mix(chromaAt(i), chromaAt(i + vec2(1.0, 0.0)), f.x);
    vec2 b = mix(chromaAt(i + vec2(0.0, 1.0)), chromaAt(i + vec2(1.0, 1.0)), f.x);
    return mix(a, b, f.y);
#endif
}

// One tap of chromaExact8: the 15-bit intermediate x = code * u_exactScale (< 2^15) split as
// 256 xHi + xLo, each part times the weight summed apart, so that no sum passes 2^24.
void exactTap(float row, float across, float chromaRows, float weight, inout vec2 hi, inout vec2 lo) {
    float r = clamp(row, 0.0, chromaRows - 1.0);
    float index = u_cubicFlip == 1 ? chromaRows - 1.0 - r : r;
    vec2 x = chromaAlong(index, across) * u_exactScale;
    vec2 xHi = floor(x / 256.0);
    hi += xHi * weight;
    lo += (x - xHi * 256.0) * weight;
}

// 8-bit Cb, Cr as swscale's generic path makes them for an exact 2:1 vertical upscale.
vec2 chromaExact8(vec2 p) {
    vec2 c = p * u_chromaSize / u_lumaSize;
    float n = u_cubicAxis == 0 ? u_lumaSize.y : u_lumaSize.x;
    float chromaRows = floor(n / 2.0);
    float s = clamp(floor(u_cubicAxis == 0 ? p.y : p.x), 0.0, n - 1.0);
    float across = floor(u_cubicAxis == 0 ? c.x : c.y);
    float i = u_cubicFlip == 1 ? n - 1.0 - s : s;
    float m = floor(i / 2.0);
    float first;
    vec4 w;
    if (i == 0.0) { first = 0.0; w = vec4(4432.0, -336.0, 0.0, 0.0); }
    else if (i == 2.0) { first = 0.0; w = vec4(959.0, 3473.0, -336.0, 0.0); }
    else if (i - 2.0 * m == 1.0) { first = m - 1.0; w = vec4(-346.0, 3572.0, 985.0, -115.0); }
    else { first = m - 2.0; w = vec4(-115.0, 985.0, 3572.0, -346.0); }
    vec2 hi = vec2(0.0);
    vec2 lo = vec2(0.0);
    exactTap(first, across, chromaRows, w.x, hi, lo);
    exactTap(first + 1.0, across, chromaRows, w.y, hi, lo);
    exactTap(first + 2.0, across, chromaRows, w.z, hi, lo);
    exactTap(first + 3.0, across, chromaRows, w.w, hi, lo);
    // (256 hi + lo + 2^18) >> 19 with hi = 2048 q + r: q + ((256 r + lo + 2^18) >> 19).
    vec2 q = floor(hi / 2048.0);
    return q + floor(((hi - q * 2048.0) * 256.0 + lo + 262144.0) / 524288.0);
}

#ifdef CHROMA_SCALED_EXACT
// The taps of ScalerTaps, in an RGBA8 texture holding one whole number per texel as
// R * 256 + G - 32768. Four filters (luma across, chroma across, luma down, chroma down), each a
// row of first input positions (one column per output position) followed by one row per tap,
// starting at row u_tapRows[k], u_tapCounts[k] taps.
uniform highp sampler2D u_taps;
uniform vec2 u_tapsSize;
uniform vec4 u_tapRows;
uniform vec4 u_tapCounts;
// The scaled picture's top-left corner in the output, in pixels.
uniform vec2 u_dstOrigin;
// A sample centre of the upright picture (as the CPU compositor turns its planes before
// scaling) to the stored plane, in texels: luma, and chroma at chroma size.
uniform mat3 u_lumaUpright;
uniform mat3 u_chromaUpright;
#define MAX_TAPS 256
#ifdef CHROMA_SCALED_FULL
#define FULL_CHROMA 1
#endif

float tapValue(float column, float row) {
    vec4 t = TEX(u_taps, (vec2(column, row) + 0.5) / u_tapsSize);
    return floor(t.r * 255.0 + 0.5) * 256.0 + floor(t.g * 255.0 + 0.5) - 32768.0;
}

float lumaUpright(float x, float y) {
    vec2 s = (u_lumaUpright * vec3(x + 0.5, y + 0.5, 1.0)).xy;
    return decode1(TEX(u_planeY, s / u_lumaSize));
}

vec2 chromaUpright(float x, float y) {
    vec2 s = (u_chromaUpright * vec3(x + 0.5, y + 0.5, 1.0)).xy / u_chromaSize;
#ifdef SEMI_PLANAR
    return decode2(TEX(u_planeUV, s));
#else
    return vec2(decode1(TEX(u_planeU, s)), decode1(TEX(u_planeV, s)));
#endif
}

// hScale8To15 for output column x of upright row y: min((sum of sample * weight) >> 7, 2^15 - 1).
// The sum of 8-bit samples times 14-bit weights stays below 2^24.
float lumaAcross(float x, float y) {
    float first = tapValue(x, u_tapRows.x);
    float sum = 0.0;
    for (int k = 0; k < MAX_TAPS; k++) {
        if (float(k) >= u_tapCounts.x) break;
        sum += lumaUpright(first + float(k), y) * tapValue(x, u_tapRows.x + 1.0 + float(k));
    }
    return min(floor(sum / 128.0), 32767.0);
}

vec2 chromaAcross(float x, float y) {
    float first = tapValue(x, u_tapRows.y);
    vec2 sum = vec2(0.0);
    for (int k = 0; k < MAX_TAPS; k++) {
        if (float(k) >= u_tapCounts.y) break;
        sum += chromaUpright(first + float(k), y) * tapValue(x, u_tapRows.y + 1.0 + float(k));
    }
    return min(floor(sum / 128.0), vec2(32767.0));
}

// One vertical tap, its 15-bit value split as 256 xHi + xLo (as exactTap), so that no sum
// passes 2^24.
void addTap(vec2 x, float weight, inout vec2 hi, inout vec2 lo) {
    vec2 xHi = floor(x / 256.0);
    hi += xHi * weight;
    lo += (x - xHi * 256.0) * weight;
}

// (256 hi + lo + add) >> n for n >= 8, with hi = 2^(n-8) q + r: q + ((256 r + lo + add) >> n).
vec2 shrN(vec2 hi, vec2 lo, float add, float n) {
    float unit = exp2(n - 8.0);
    vec2 q = floor(hi / unit);
    return q + floor(((hi - q * unit) * 256.0 + lo + add) / exp2(n));
}

#ifdef FULL_CHROMA
// Full-resolution chroma (swscale's choice for an odd output width): yuv2rgb_full's rounding
// ((sum + 2^9) >> 10) and its 32-bit arithmetic (yuv2rgb_write_full), not the tables.
#define DOWN_SHIFT 10.0
#define DOWN_ADD 512.0
#else
#define DOWN_SHIFT 19.0
#define DOWN_ADD 262144.0
#endif

// The vertical filter of output row y over the horizontal results at luma column x or chroma
// column x: (sum + DOWN_ADD) >> DOWN_SHIFT, as yuv2rgb_X and yuv2rgb_full_X do.
vec2 lumaDown(float x, float y) {
    float first = tapValue(y, u_tapRows.z);
    vec2 hi = vec2(0.0), lo = vec2(0.0);
    for (int k = 0; k < MAX_TAPS; k++) {
        if (float(k) >= u_tapCounts.z) break;
        addTap(vec2(lumaAcross(x, first + float(k))), tapValue(y, u_tapRows.z + 1.0 + float(k)), hi, lo);
    }
    return shrN(hi, lo, DOWN_ADD, DOWN_SHIFT);
}

vec2 chromaDown(float x, float y) {
    float first = tapValue(y, u_tapRows.w);
    vec2 hi = vec2(0.0), lo = vec2(0.0);
    for (int k = 0; k < MAX_TAPS; k++) {
        if (float(k) >= u_tapCounts.w) break;
        addTap(chromaAcross(x, first + float(k)), tapValue(y, u_tapRows.w + 1.0 + float(k)), hi, lo);
    }
    return shrN(hi, lo, DOWN_ADD, DOWN_SHIFT);
}

#ifdef FULL_CHROMA
// yuv2rgb_full's constants: v2r, v2g, u2g, u2b; the luma coefficient and offset.
uniform vec4 u_fullCoeffs;
uniform vec2 u_fullLuma;

// Adds t * 2^k (t whole, |t| < 2^23; k = 0, 6 or 12) to acc = (q, r), a whole number held as
// q * 2^22 + r with 0 <= r < 2^22: every part stays an exact float.
void addShifted(float t, float k, inout vec2 acc) {
    float unit = exp2(22.0 - k);
    float q = floor(t / unit);
    acc += vec2(q, (t - q * unit) * exp2(k));
    float carry = floor(acc.y / 4194304.0);
    acc += vec2(carry, -carry * 4194304.0);
}

// Adds a * b (|a| < 2^18, |b| < 2^15) to acc: a = 4096 aH + aL, b = 64 bH + bL.
void addProduct(float a, float b, inout vec2 acc) {
    float aH = floor(a / 4096.0);
    float aL = a - aH * 4096.0;
    float bH = floor(b / 64.0);
    float bL = b - bH * 64.0;
    addShifted(aH * b, 12.0, acc);
    addShifted(aL * bH, 6.0, acc);
    addShifted(aL * bL, 0.0, acc);
}

// One channel: the 32-bit sum (wrapped as a C int does), clipped to 30 bits, >> 22.
float fullChannel(vec2 acc) {
    float q = acc.x - 1024.0 * floor((acc.x + 512.0) / 1024.0);
    return clamp(q, 0.0, 255.0);
}

vec3 fullColour(float y, vec2 uv) {
    vec2 base = vec2(0.0);
    addProduct(y - u_fullLuma.y, u_fullLuma.x, base);
    addShifted(2097152.0, 0.0, base);
    vec2 r = base, g = base, b = base;
    addProduct(uv.y, u_fullCoeffs.x, r);
    addProduct(uv.y, u_fullCoeffs.y, g);
    addProduct(uv.x, u_fullCoeffs.z, g);
    addProduct(uv.x, u_fullCoeffs.w, b);
    return vec3(fullChannel(r), fullChannel(g), fullChannel(b)) / 255.0;
}
#endif

// The colour of output pixel `frag` as swscale makes it: the horizontal scalers, then the
// vertical routine swscale picks for the row (its _1 routine where luma is one tap and chroma
// one tap or a two-tap blend; _2 where both are two-tap blends; _X otherwise), then its
// conversion. With half-resolution chroma a pair of pixels shares one chroma sample.
vec3 scaledColour(vec2 frag) {
    vec2 d = floor(frag) - u_dstOrigin;
#ifdef FULL_CHROMA
    float cx = d.x;
#else
    float cx = floor(d.x / 2.0);
#endif
    float nL = u_tapCounts.z;
    float nC = u_tapCounts.w;
    float pL = tapValue(d.y, u_tapRows.z);
    float pC = tapValue(d.y, u_tapRows.w);
    float l0 = tapValue(d.y, u_tapRows.z + 1.0);
    float c0 = tapValue(d.y, u_tapRows.w + 1.0);
    float l1 = nL >= 2.0 ? tapValue(d.y, u_tapRows.z + 2.0) : 0.0;
    float c1 = nC >= 2.0 ? tapValue(d.y, u_tapRows.w + 2.0) : 0.0;
    bool chromaBlend = nC == 2.0 && c0 + c1 == 4096.0 && c1 >= 0.0;
    float y;
    vec2 uv;
    if (nL == 1.0 && (nC == 1.0 || chromaBlend)) {
        float h = lumaAcross(d.x, pL);
        vec2 u0 = chromaAcross(cx, pC);
        bool two = nC == 2.0 && c1 >= 2048.0;
        vec2 u1 = two ? chromaAcross(cx, pC + 1.0) : vec2(0.0);
#ifdef FULL_CHROMA
        y = h * 4.0;
        uv = two ? (u0 + u1 - 32768.0) * 2.0 : (u0 - 16384.0) * 4.0;
#else
        y = floor((h + 64.0) / 128.0);
        uv = two ? floor((u0 + u1 + 128.0) / 256.0) : floor((u0 + 64.0) / 128.0);
#endif
    } else if (nL == 2.0 && l0 + l1 == 4096.0 && l1 >= 0.0 && chromaBlend) {
        vec2 hi = vec2(0.0), lo = vec2(0.0);
        addTap(vec2(lumaAcross(d.x, pL)), l0, hi, lo);
        addTap(vec2(lumaAcross(d.x, pL + 1.0)), l1, hi, lo);
        y = shrN(hi, lo, 0.0, DOWN_SHIFT).x;
        hi = vec2(0.0);
        lo = vec2(0.0);
        addTap(chromaAcross(cx, pC), c0, hi, lo);
        addTap(chromaAcross(cx, pC + 1.0), c1, hi, lo);
        uv = shrN(hi, lo, 0.0, DOWN_SHIFT);
#ifdef FULL_CHROMA
        uv -= 65536.0;
#endif
    } else {
        y = lumaDown(d.x, d.y).x;
        uv = chromaDown(cx, d.y);
#ifdef FULL_CHROMA
        uv -= 65536.0;
#endif
    }
#ifdef FULL_CHROMA
    return fullColour(y, uv);
#else
    return swsConvertCodes(y, uv);
#endif
}
#endif

#ifdef TONE_MAP
// Tone mapping, the arithmetic of ToneMapping.swift (HDRTransfer, ToneCurve) in single
// precision: the transfer's EOTF per component to linear light with reference white (100 cd/m²)
// at 1, the primaries to BT.709, the curve on the brightest component scaling all three, then
// BT.709's signal x^(1/2.4). u_toBT709: linear light to BT.709 (column-major). u_peak: the
// signal's peak in units of reference white. u_curve: the curve's constants worked out for that
// peak (hable: 1 / hable(peak); mobius: p, q and the scale; bt2390: the peak's PQ code, the
// target's PQ code relative to it, and the knee). u_desat: FFmpeg's desat threshold (0: off).
uniform mat3 u_toBT709;
uniform float u_peak;
uniform vec4 u_curve;
uniform float u_desat;

// SMPTE ST 2084 in cd/m² / 100 (HDRTransfer.nits(pq:)).
vec3 pqLinear(vec3 e) {
    vec3 p = pow(max(e, vec3(0.0)), vec3(1.0 / 78.84375));
    return 100.0 * pow(max(p - 0.8359375, vec3(0.0)) / (18.8515625 - 18.6875 * p), vec3(1.0 / 0.1593017578125));
}

// HDRTransfer.pq(nits:): cd/m² to a PQ code value.
float pqCode(float nits) {
    float y = pow(max(nits, 0.0) / 10000.0, 0.1593017578125);
    return pow((0.8359375 + 18.8515625 * y) / (1.0 + 18.6875 * y), 78.84375);
}

// ARIB STD-B67's inverse OETF, then the 1.2 power per component for a 1000 cd/m² display
// (HDRTransfer.hlgDisplay, zimg's default).
vec3 hlgLinear(vec3 e) {
    vec3 x = max(e, vec3(0.0));
    vec3 low = x * x / 3.0;
    vec3 high = (exp((x - 0.55991073) / 0.17883277) + 0.28466892) / 12.0;
    // Both pieces meet at 0.5 (1/12), so which one takes 0.5 itself does not matter.
    vec3 scene = mix(low, high, step(vec3(0.5), x));
    return pow(max(scene, vec3(1e-30)), vec3(1.2)) * 10.0;
}

float hable(float x) {
    return (x * (x * 0.15 + 0.05) + 0.004) / (x * (x * 0.15 + 0.5) + 0.06) - 0.02 / 0.3;
}

// ToneCurve.map: the value to scale a pixel to whose brightest component is x.
float curve(float x) {
#if defined(TONE_HABLE)
    return hable(x) * u_curve.x;
#elif defined(TONE_MOBIUS)
    return x <= 0.3 ? x : u_curve.z * (x + u_curve.x) / (x + u_curve.y);
#elif defined(TONE_REINHARD)
    return x / (x + 1.0) * (u_peak + 1.0) / u_peak;
#elif defined(TONE_CLIP)
    return clamp(x, 0.0, 1.0);
#elif defined(TONE_LINEAR)
    return x / u_peak;
#else
    // BT.2390's EETF in PQ code values relative to the peak's (ToneCurve.bt2390).
    if (u_peak <= 1.0) return clamp(x, 0.0, 1.0);
    float e1 = min(pqCode(x * 100.0) / u_curve.x, 1.0);
    float maxLum = u_curve.y;
    float knee = u_curve.z;
    float e2 = e1;
    if (e1 > knee) {
        float t = (e1 - knee) / (1.0 - knee);
        float t2 = t * t;
        float t3 = t2 * t;
        e2 = (2.0 * t3 - 3.0 * t2 + 1.0) * knee + (t3 - 2.0 * t2 + t) * (1.0 - knee) + (-2.0 * t3 + 3.0 * t2) * maxLum;
    }
    return pqLinear(vec3(e2 * u_curve.x)).x;
#endif
}

// Non-linear R'G'B' in [0, 1] (PQ or HLG coded, the stream's primaries) to the SDR BT.709 signal.
vec3 toneMap(vec3 signal) {
#ifdef TONE_HLG
    vec3 c = u_toBT709 * hlgLinear(signal);
#else
    vec3 c = u_toBT709 * pqLinear(signal);
#endif
    if (u_desat > 0.0) {
        // FFmpeg's desat: toward luma by how far luma is over the threshold.
        float luma = dot(c, vec3(0.2126, 0.7152, 0.0722));
        float over = max(luma - u_desat, 1e-6) / max(luma, 1e-6);
        c += (vec3(luma) - c) * over;
    }
    float sig = max(max(c.r, c.g), max(c.b, 1e-6));
    c *= curve(sig) / sig;
    return pow(clamp(c, 0.0, 1.0), vec3(1.0 / 2.4));
}
#endif

void main() {
#if defined(TONE_MAP) || defined(DEEP)
    vec2 p = (u_map * vec3(gl_FragCoord.xy, 1.0)).xy;
    float y = (luma(p) - u_yRange.x) * u_yRange.y;
    vec2 cbcr = (chroma(p) - u_cRange.x) * u_cRange.y;
    vec3 rgb = clamp(u_matrix * vec3(y, cbcr), 0.0, 1.0);
#ifdef TONE_MAP
    o_color = vec4(toneMap(rgb), 1.0);
#else
    o_color = vec4(rgb, 1.0);
#endif
#elif defined(CHROMA_SCALED_EXACT)
    o_color = vec4(scaledColour(gl_FragCoord.xy), 1.0);
#else
    vec2 p = (u_map * vec3(gl_FragCoord.xy, 1.0)).xy;
    float yCode = luma(p);
#if defined(CHROMA_CUBIC_EXACT)
    o_color = vec4(swsConvertCodes(to8(yCode), chromaExact8(p)), 1.0);
#elif defined(TABLE_MATH)
    vec2 cCode = chroma(p);
    o_color = vec4(swsConvertCodes(to8(yCode), vec2(to8(cCode.x), to8(cCode.y))), 1.0);
#else
    vec2 cCode = chroma(p);
#ifdef CHROMA_CUBIC
    // Rounded to 8 bits and clipped before the matrix, as swscale's generic path does on its
    // way to 8-bit RGB (its vertical filter ends in 8-bit Y, U, V).
    yCode = to8(yCode) * u_step8;
    cCode = vec2(to8(cCode.x), to8(cCode.y)) * u_step8;
#endif
    float y = (yCode - u_yRange.x) * u_yRange.y;
    vec2 cbcr = (cCode - u_cRange.x) * u_cRange.y;
    o_color = vec4(clamp(u_matrix * vec3(y, cbcr), 0.0, 1.0), 1.0);
#endif
#endif
}
