#define _GNU_SOURCE
#include "CScanoutShims.h"
#include <sys/mman.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <libavutil/log.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vaapi.h>

static _Atomic(scanout_log_sink) current_sink = NULL;
static atomic_int current_level = AV_LOG_WARNING;

static void scanout_log_trampoline(void *avcl, int level, const char *fmt, va_list vl) {
    if (level > atomic_load(&current_level)) return;
    scanout_log_sink sink = atomic_load(&current_sink);
    if (!sink) return;
    char line[1024];
    int print_prefix = 0;
    // av_log_format_line2 takes the va_list by value; copy so the caller's list stays intact.
    va_list copy;
    va_copy(copy, vl);
    av_log_format_line2(NULL, level, fmt, copy, line, sizeof line, &print_prefix);
    va_end(copy);
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    if (n == 0) return;
    const char *context = "";
    void *owner = NULL;
    if (avcl) {
        AVClass *cls = *(AVClass **)avcl;
        if (cls && cls->item_name) context = cls->item_name(avcl);
        if (cls && cls->class_name && strcmp(cls->class_name, "AVCodecContext") == 0)
            owner = ((AVCodecContext *)avcl)->opaque;
        else if (cls && cls->class_name && strcmp(cls->class_name, "AVFormatContext") == 0)
            owner = ((AVFormatContext *)avcl)->opaque;
    }
    sink(level, context ? context : "", line, owner);
}

void scanout_install_log_sink(scanout_log_sink sink, int max_level) {
    atomic_store(&current_level, max_level);
    atomic_store(&current_sink, sink);
    av_log_set_callback(sink ? scanout_log_trampoline : av_log_default_callback);
}

void scanout_set_log_level(int max_level) { atomic_store(&current_level, max_level); }

void *scanout_vaapi_device_display(const void *device) {
    if (!device) return NULL;
    const AVBufferRef *ref = device;
    const AVHWDeviceContext *ctx = (const AVHWDeviceContext *)ref->data;
    if (!ctx || ctx->type != AV_HWDEVICE_TYPE_VAAPI || !ctx->hwctx) return NULL;
    return ((const AVVAAPIDeviceContext *)ctx->hwctx)->display;
}

int scanout_memfd_create(const char *name) { return memfd_create(name, MFD_CLOEXEC); }
