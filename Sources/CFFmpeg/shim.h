#ifndef SCANOUT_CFFMPEG_SHIM_H
#define SCANOUT_CFFMPEG_SHIM_H
// What Swift cannot import from FFmpeg's headers: function-like and cast macros.
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libavutil/display.h>
#include <libavutil/md5.h>
#include <libavutil/opt.h>
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersrc.h>
#include <libavfilter/buffersink.h>
#include <libavutil/channel_layout.h>
#include <libavutil/samplefmt.h>
#include <libavutil/encryption_info.h>
#include <libavutil/mastering_display_metadata.h>

static inline int scanout_averror(int e) { return AVERROR(e); }
static const int SCANOUT_AVERROR_EOF = AVERROR_EOF;
static const int SCANOUT_AVERROR_EAGAIN = AVERROR(EAGAIN);
static const int SCANOUT_AVERROR_INVALIDDATA = AVERROR_INVALIDDATA;
static const int SCANOUT_AVERROR_DECODER_NOT_FOUND = AVERROR_DECODER_NOT_FOUND;
static const int SCANOUT_AVERROR_EXIT = AVERROR_EXIT;
static const int64_t SCANOUT_AV_NOPTS_VALUE = AV_NOPTS_VALUE;
static const int SCANOUT_AV_TIME_BASE = AV_TIME_BASE;
static inline AVRational scanout_av_time_base_q(void) { return AV_TIME_BASE_Q; }
static inline unsigned int scanout_mktag(char a, char b, char c, char d) { return MKTAG(a, b, c, d); }
static inline int scanout_ffalign(int x, int a) { return FFALIGN(x, a); }
#endif
