#define _GNU_SOURCE
#include "CScanoutCUDA.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <ffnvcodec/dynlink_cuda.h>
#include <ffnvcodec/dynlink_cuviddec.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_cuda.h>
#include <libavutil/frame.h>

// CUresult values ffnvcodec's subset of the enumeration leaves out (cuda.h's numbering).
#define SCANOUT_CU_NOT_INITIALIZED 3
#define SCANOUT_CU_NOT_SUPPORTED 801

// Entry points, filled once by load_cuda (under pthread_once) and read-only afterwards.
static struct {
    tcuInit *init;
    tcuDeviceGetCount *device_count;
    tcuDeviceGet *device_get;
    tcuDeviceGetName *device_name;
    tcuGetErrorName *error_name;
    tcuCtxPushCurrent_v2 *push;
    tcuCtxPopCurrent_v2 *pop;
    tcuMemcpy2D_v2 *memcpy2d;
    tcuGraphicsGLRegisterImage *gl_register;
    tcuGraphicsUnregisterResource *unregister;
    tcuGraphicsMapResources *map;
    tcuGraphicsUnmapResources *unmap;
    tcuGraphicsSubResourceGetMappedArray *mapped_array;
} cu;
static char cuda_error[512];
static int cuda_status = -1;
static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;

static void load_cuda(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(cuda_error, sizeof cuda_error, "%s", e ? e : "libcuda.so.1: cannot be loaded");
        return;
    }
#define REQUIRE(field, name) \
    if (!(cu.field = (void *)dlsym(lib, name))) { \
        snprintf(cuda_error, sizeof cuda_error, "libcuda.so.1 lacks %s", name); \
        memset(&cu, 0, sizeof cu); dlclose(lib); return; }
    REQUIRE(init, "cuInit")
    REQUIRE(device_count, "cuDeviceGetCount")
    REQUIRE(device_get, "cuDeviceGet")
    REQUIRE(device_name, "cuDeviceGetName")
    REQUIRE(error_name, "cuGetErrorName")
    REQUIRE(push, "cuCtxPushCurrent_v2")
    REQUIRE(pop, "cuCtxPopCurrent_v2")
    REQUIRE(memcpy2d, "cuMemcpy2D_v2")
#undef REQUIRE
    // Interop is optional: without it NVDEC frames are downloaded for GL.
    cu.gl_register = (void *)dlsym(lib, "cuGraphicsGLRegisterImage");
    cu.unregister = (void *)dlsym(lib, "cuGraphicsUnregisterResource");
    cu.map = (void *)dlsym(lib, "cuGraphicsMapResources");
    cu.unmap = (void *)dlsym(lib, "cuGraphicsUnmapResources");
    cu.mapped_array = (void *)dlsym(lib, "cuGraphicsSubResourceGetMappedArray");
    cuda_status = 0;  // the library stays loaded for the life of the process
}

int scanout_cuda_load(char *why, size_t why_len) {
    pthread_once(&cuda_once, load_cuda);
    if (cuda_status != 0 && why && why_len) snprintf(why, why_len, "%s", cuda_error);
    return cuda_status;
}

int scanout_cuda_has_gl_interop(void) {
    return cuda_status == 0 && cu.gl_register && cu.unregister && cu.map && cu.unmap && cu.mapped_array;
}

#define LOADED_OR(value) if (cuda_status != 0) return (value)

int scanout_cuda_init(void) { LOADED_OR((CUresult)SCANOUT_CU_NOT_INITIALIZED); return cu.init(0); }

int scanout_cuda_device_count(int *count) { LOADED_OR((CUresult)SCANOUT_CU_NOT_INITIALIZED); return cu.device_count(count); }

int scanout_cuda_device_name(int ordinal, char *name, int len) {
    LOADED_OR((CUresult)SCANOUT_CU_NOT_INITIALIZED);
    CUdevice dev;
    CUresult r = cu.device_get(&dev, ordinal);
    if (r != CUDA_SUCCESS) return r;
    return cu.device_name(name, len, dev);
}

const char *scanout_cuda_error_name(int status) {
    if (cuda_status != 0) return NULL;
    const char *name = NULL;
    if (cu.error_name((CUresult)status, &name) != CUDA_SUCCESS) return NULL;
    return name;
}

void *scanout_cuda_device_context(const void *device) {
    if (!device) return NULL;
    const AVBufferRef *ref = device;
    const AVHWDeviceContext *ctx = (const AVHWDeviceContext *)ref->data;
    if (!ctx || ctx->type != AV_HWDEVICE_TYPE_CUDA || !ctx->hwctx) return NULL;
    return ((const AVCUDADeviceContext *)ctx->hwctx)->cuda_ctx;
}

int scanout_hwframe_sw_format(const void *frame) {
    const AVFrame *f = frame;
    if (!f || !f->hw_frames_ctx) return -1;
    return ((const AVHWFramesContext *)f->hw_frames_ctx->data)->sw_format;
}

static tcuvidGetDecoderCaps *get_caps;
static char nvcuvid_error[512];
static int nvcuvid_status = -1;
static pthread_once_t nvcuvid_once = PTHREAD_ONCE_INIT;

static void load_nvcuvid(void) {
    void *lib = dlopen("libnvcuvid.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(nvcuvid_error, sizeof nvcuvid_error, "%s", e ? e : "libnvcuvid.so.1: cannot be loaded");
        return;
    }
    get_caps = (void *)dlsym(lib, "cuvidGetDecoderCaps");
    if (!get_caps) {
        snprintf(nvcuvid_error, sizeof nvcuvid_error, "libnvcuvid.so.1 lacks cuvidGetDecoderCaps");
        dlclose(lib);
        return;
    }
    nvcuvid_status = 0;
}

int scanout_nvcuvid_load(char *why, size_t why_len) {
    pthread_once(&nvcuvid_once, load_nvcuvid);
    if (nvcuvid_status != 0 && why && why_len) snprintf(why, why_len, "%s", nvcuvid_error);
    return nvcuvid_status;
}

int scanout_nvdec_caps_query(void *context, int codec, int chroma, int bit_depth_minus8, scanout_nvdec_caps *caps) {
    LOADED_OR((CUresult)SCANOUT_CU_NOT_INITIALIZED);
    if (nvcuvid_status != 0) return (CUresult)SCANOUT_CU_NOT_INITIALIZED;
    CUVIDDECODECAPS c;
    memset(&c, 0, sizeof c);
    c.eCodecType = (cudaVideoCodec)codec;
    c.eChromaFormat = (cudaVideoChromaFormat)chroma;
    c.nBitDepthMinus8 = (unsigned int)bit_depth_minus8;
    CUresult r = cu.push((CUcontext)context);
    if (r != CUDA_SUCCESS) return r;
    r = get_caps(&c);
    CUcontext dummy;
    cu.pop(&dummy);
    if (r != CUDA_SUCCESS) return r;
    caps->supported = c.bIsSupported;
    caps->max_width = c.nMaxWidth;
    caps->max_height = c.nMaxHeight;
    caps->max_mb_count = c.nMaxMBCount;
    caps->min_width = c.nMinWidth;
    caps->min_height = c.nMinHeight;
    caps->output_format_mask = c.nOutputFormatMask;
    return CUDA_SUCCESS;
}

int scanout_cuda_gl_register(void *context, unsigned int texture, void **resource) {
    LOADED_OR((CUresult)SCANOUT_CU_NOT_INITIALIZED);
    if (!scanout_cuda_has_gl_interop()) return (CUresult)SCANOUT_CU_NOT_SUPPORTED;
    CUresult r = cu.push((CUcontext)context);
    if (r != CUDA_SUCCESS) return r;
    CUgraphicsResource res = NULL;
    r = cu.gl_register(&res, texture, 0x0DE1 /* GL_TEXTURE_2D */, CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD);
    CUcontext dummy;
    cu.pop(&dummy);
    if (r == CUDA_SUCCESS) *resource = res;
    return r;
}

int scanout_cuda_gl_unregister(void *context, void *resource) {
    LOADED_OR((CUresult)SCANOUT_CU_NOT_INITIALIZED);
    if (!scanout_cuda_has_gl_interop()) return (CUresult)SCANOUT_CU_NOT_SUPPORTED;
    CUresult r = cu.push((CUcontext)context);
    if (r != CUDA_SUCCESS) return r;
    r = cu.unregister((CUgraphicsResource)resource);
    CUcontext dummy;
    cu.pop(&dummy);
    return r;
}

int scanout_cuda_copy_to_gl(void *context, const scanout_cuda_plane_copy *planes, int count, const char **failed_step) {
    *failed_step = "libcuda";
    LOADED_OR((CUresult)SCANOUT_CU_NOT_INITIALIZED);
    if (!scanout_cuda_has_gl_interop() || count < 1 || count > 4) return (CUresult)SCANOUT_CU_NOT_SUPPORTED;
    CUgraphicsResource res[4];
    for (int i = 0; i < count; i++) res[i] = (CUgraphicsResource)planes[i].resource;
    *failed_step = "cuCtxPushCurrent";
    CUresult r = cu.push((CUcontext)context);
    if (r != CUDA_SUCCESS) return r;
    *failed_step = "cuGraphicsMapResources";
    r = cu.map((unsigned int)count, res, NULL);
    if (r == CUDA_SUCCESS) {
        for (int i = 0; i < count && r == CUDA_SUCCESS; i++) {
            CUarray array = NULL;
            *failed_step = "cuGraphicsSubResourceGetMappedArray";
            r = cu.mapped_array(&array, res[i], 0, 0);
            if (r != CUDA_SUCCESS) break;
            CUDA_MEMCPY2D copy;
            memset(&copy, 0, sizeof copy);
            copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
            copy.srcDevice = (CUdeviceptr)planes[i].src_device;
            copy.srcPitch = planes[i].src_pitch;
            copy.dstMemoryType = CU_MEMORYTYPE_ARRAY;
            copy.dstArray = array;
            copy.WidthInBytes = planes[i].width_bytes;
            copy.Height = planes[i].height;
            *failed_step = "cuMemcpy2D";
            r = cu.memcpy2d(&copy);
        }
        // Unmapping orders the copies before any GL use of the textures.
        CUresult u = cu.unmap((unsigned int)count, res, NULL);
        if (r == CUDA_SUCCESS && u != CUDA_SUCCESS) { r = u; *failed_step = "cuGraphicsUnmapResources"; }
    }
    CUcontext dummy;
    cu.pop(&dummy);
    if (r == CUDA_SUCCESS) *failed_step = NULL;
    return r;
}
