#ifndef SCANOUT_CUDA_H
#define SCANOUT_CUDA_H
#include <stddef.h>
#include <stdint.h>

// The CUDA driver API (libcuda.so.1) and NVDEC's capability query (libnvcuvid.so.1), reached at
// run time with dlopen, never linked: machines without NVIDIA's driver build and run the same
// binary, and say "no libcuda" when asked for NVDEC. Types are FFmpeg's ffnvcodec declarations
// (Debian's libffmpeg-nvenc-dev), kept inside cuda.c: this header uses plain C types only.
// Every function returning int returns a CUresult (0 = CUDA_SUCCESS) unless it says otherwise.

/// Loads libcuda.so.1 and the entry points Scanout uses, once per process (thread-safe). Returns
/// 0, or -1 with the reason (dlerror's text, or the missing symbol) copied into `why`.
int scanout_cuda_load(char *why, size_t why_len);
/// Whether the CUDA–GL interop entry points were found (loaded with the rest; optional).
int scanout_cuda_has_gl_interop(void);
/// cuInit(0).
int scanout_cuda_init(void);
/// cuDeviceGetCount.
int scanout_cuda_device_count(int *count);
/// cuDeviceGet + cuDeviceGetName for device `ordinal`.
int scanout_cuda_device_name(int ordinal, char *name, int len);
/// cuGetErrorName's text for `status`, or NULL when libcuda is not loaded or does not know it.
const char *scanout_cuda_error_name(int status);

/// The CUDA context of a device made by av_hwdevice_ctx_create(AV_HWDEVICE_TYPE_CUDA); `device`
/// is that AVBufferRef *. Owned by the device. NULL for any other device.
void *scanout_cuda_device_context(const void *device);
/// The software pixel format (AVPixelFormat) of a hardware frame's frames context, or -1.
int scanout_hwframe_sw_format(const void *frame);

/// Loads libnvcuvid.so.1's cuvidGetDecoderCaps once. 0, or -1 with the reason in `why`.
int scanout_nvcuvid_load(char *why, size_t why_len);

/// What NVDEC can decode for one codec, chroma format and bit depth (cuvidGetDecoderCaps).
typedef struct scanout_nvdec_caps {
    int supported;
    unsigned int max_width, max_height, max_mb_count;
    unsigned int min_width, min_height;
    unsigned int output_format_mask;
} scanout_nvdec_caps;

/// cuvidGetDecoderCaps with `context` pushed current. `codec` is cudaVideoCodec's numbering
/// (H264 = 4, HEVC = 8, VP8 = 9, VP9 = 10, AV1 = 11, MPEG2 = 1), `chroma` cudaVideoChromaFormat's
/// (4:2:0 = 1).
int scanout_nvdec_caps_query(void *context, int codec, int chroma, int bit_depth_minus8, scanout_nvdec_caps *caps);

/// Registers GL texture `texture` (GL_TEXTURE_2D) with CUDA for writing (cuGraphicsGLRegisterImage,
/// write-discard), with `context` current; the resource comes back in `resource`.
int scanout_cuda_gl_register(void *context, unsigned int texture, void **resource);
/// cuGraphicsUnregisterResource with `context` current.
int scanout_cuda_gl_unregister(void *context, void *resource);

/// One plane to copy device-to-array: from a device pointer with a pitch, `width_bytes` by
/// `height` rows, into the array of registered resource `resource`.
typedef struct scanout_cuda_plane_copy {
    uint64_t src_device;
    size_t src_pitch;
    size_t width_bytes;
    size_t height;
    void *resource;
} scanout_cuda_plane_copy;

/// With `context` current: maps the planes' resources, copies each plane device-to-array
/// (cuMemcpy2D, on the GPU; nothing passes through CPU memory) and unmaps them, so that GL sees
/// the picture once this returns. On failure, `failed_step` names the call that failed.
int scanout_cuda_copy_to_gl(void *context, const scanout_cuda_plane_copy *planes, int count, const char **failed_step);
#endif
