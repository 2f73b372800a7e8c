#ifndef SCANOUT_SHIMS_H
#define SCANOUT_SHIMS_H
#include <stdint.h>

/// Receives one formatted FFmpeg log line. `context` is the item name of the object that logged
/// ("h264", "mov,mp4,m4a,3gp,3g2,mj2", ...) or an empty string; `line` has no trailing newline.
/// `owner` is the `opaque` field of the AVCodecContext or AVFormatContext that logged
/// (frame-threading copies of a codec context share it), or NULL for any other logger.
typedef void (*scanout_log_sink)(int level, const char *context, const char *line, void *owner);

/// Routes av_log through `sink` (NULL restores FFmpeg's default callback). Lines above
/// `max_level` (AV_LOG_* numbering) are dropped before formatting. Thread-safe: FFmpeg may log
/// from its decoding threads, and the sink is called on whatever thread logged.
void scanout_install_log_sink(scanout_log_sink sink, int max_level);

/// Sets the level filter of the installed sink.
void scanout_set_log_level(int max_level);

/// The `VADisplay` of a VA-API device made by `av_hwdevice_ctx_create(AV_HWDEVICE_TYPE_VAAPI)`:
/// `device` is that `AVBufferRef *`. The display stays owned by the device (valid while a
/// reference to it lives). Typed `void *` so that this header needs neither FFmpeg's nor
/// libva's (`AVVAAPIDeviceContext` lives in libavutil/hwcontext_vaapi.h, which Swift does not
/// import, because it would pull libva's types into the FFmpeg module as well).
void *scanout_vaapi_device_display(const void *device);

/// An anonymous memory file (`memfd_create`, close-on-exec), or -1 with errno set: the buffers
/// of the software stand-in for VA-API's DMA-BUF export.
int scanout_memfd_create(const char *name);
#include "CScanoutCUDA.h"
#endif
