// A stand-in for NVIDIA's driver libraries with no GPU behind it, so that tests reach every
// reason Scanout gives for NVDEC being unavailable. Built by the tests twice:
//   cc -shared -fPIC -o DIR/libcuda.so.1 fake-cuda.c               (the CUDA driver API subset)
//   cc -shared -fPIC -DNVCUVID -o DIR/libnvcuvid.so.1 fake-cuda.c  (NVDEC's capability query)
// and put first on LD_LIBRARY_PATH. Behaviour from the environment:
//   FAKE_CUDA_INIT=N     cuInit returns N (default 0)
//   FAKE_CUDA_DEVICES=N  cuDeviceGetCount reports N (default 1)
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

typedef int CUresult;
static int env(const char *name, int fallback) {
    const char *v = getenv(name);
    return v ? atoi(v) : fallback;
}

#ifdef NVCUVID
CUresult cuvidGetDecoderCaps(void *caps) { (void)caps; return 999; }
#else
CUresult cuInit(unsigned int flags) { (void)flags; return env("FAKE_CUDA_INIT", 0); }
CUresult cuDeviceGetCount(int *count) { *count = env("FAKE_CUDA_DEVICES", 1); return 0; }
CUresult cuDeviceGet(int *device, int ordinal) { *device = ordinal; return ordinal < env("FAKE_CUDA_DEVICES", 1) ? 0 : 101; }
CUresult cuDeviceGetName(char *name, int len, int device) { snprintf(name, (size_t)len, "Fake CUDA device %d", device); return 0; }
CUresult cuGetErrorName(CUresult error, const char **name) {
    switch (error) {
    case 100: *name = "CUDA_ERROR_NO_DEVICE"; return 0;
    case 999: *name = "CUDA_ERROR_UNKNOWN"; return 0;
    default: return 1;
    }
}
CUresult cuCtxPushCurrent_v2(void *ctx) { (void)ctx; return 0; }
CUresult cuCtxPopCurrent_v2(void **ctx) { *ctx = 0; return 0; }
CUresult cuMemcpy2D_v2(const void *copy) { (void)copy; return 999; }
#endif
