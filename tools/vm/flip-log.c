/* Logs when each white frame of a KMS client (mpv --vo=drm) reaches the screen: an LD_PRELOAD
 * library for the lip-sync step's mpv run (test-lipsync.sh), since mpv logs no per-frame
 * presentation times.
 *
 *   LD_PRELOAD=/path/flip-log.so FLIP_LOG=FILE mpv --vo=drm ...
 *
 * It wraps three libdrm calls:
 *   drmModePageFlip, drmModeAtomicCommit   before a commit with a page-flip event goes, the
 *       framebuffer it puts on screen (the FB_ID of an atomic request) is read at its centre: the
 *       client has drawn it. drmModeGetFB gives the buffer's handle (the client is DRM master),
 *       DRM_IOCTL_MODE_MAP_DUMB and mmap a read-only view of it, kept per framebuffer.
 *   drmHandleEvent   the client's page-flip handlers are wrapped: a flip's timestamp (the vblank
 *       it latched at, CLOCK_MONOTONIC) is logged when the frame it showed was white.
 * Each line of FILE is `MEDIA NS 0`, in the format of `scanout --present-log` that
 * tools/lipsync-offsets.py reads: MEDIA = 2k for the k-th white frame (the clip's flashes are 2 s
 * apart; the pairing with the beeps goes by time, not by MEDIA), NS the flip's time, 0: no aim.
 * Only dumb buffers (mpv's --vo=drm) can be read; other framebuffers count as not white.
 * Built by test-lipsync.sh: cc -O2 -shared -fPIC -o flip-log.so flip-log.c -ldl $(pkg-config --cflags --libs libdrm)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

/* libdrm's atomic request (xf86drmMode.c; unchanged since atomic support came in 2.4.62). */
struct item { uint32_t object_id, property_id; uint64_t value; uint32_t cursor; };
struct request { uint32_t cursor, size_items; struct item *items; };

static FILE *out;
static int flashes;
/* Whether each committed flip, in order, showed a white frame (a ring: one CRTC, few in flight). */
static int pending[64];
static unsigned head, tail;
static struct { uint32_t fb; const uint8_t *pixel; } views[16];
static uint32_t fb_id_props[16];
static int nprops;
static drmEventContext *client;

static void log_open(void) {
    if (out) return;
    const char *path = getenv("FLIP_LOG");
    out = fopen(path ? path : "/dev/null", "w");
}

/* The centre pixel of framebuffer `fb` (XRGB8888), mapped once; NULL when it cannot be read. */
static const uint8_t *centre(int fd, uint32_t fb) {
    for (int i = 0; i < 16; i++) if (views[i].fb == fb) return views[i].pixel;
    const uint8_t *pixel = NULL;
    drmModeFBPtr info = drmModeGetFB(fd, fb);
    if (info && info->handle && info->bpp == 32) {
        struct drm_mode_map_dumb map = { .handle = info->handle };
        if (drmIoctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &map) == 0) {
            size_t size = (size_t)info->pitch * info->height;
            uint8_t *base = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, map.offset);
            if (base != MAP_FAILED) pixel = base + (size_t)(info->height / 2) * info->pitch + (size_t)(info->width / 2) * 4;
        }
    }
    if (info) drmModeFreeFB(info);
    for (int i = 0; i < 16; i++) if (!views[i].fb) { views[i].fb = fb; views[i].pixel = pixel; break; }
    return pixel;
}

static void committed(int fd, uint32_t fb) {
    const uint8_t *p = fb ? centre(fd, fb) : NULL;
    pending[tail++ % 64] = p && p[0] > 200 && p[1] > 200 && p[2] > 200;
}

static void flipped(unsigned sec, unsigned usec) {
    if (head == tail) return;
    int white = pending[head++ % 64];
    if (!white) return;
    log_open();
    fprintf(out, "%d %llu 0\n", 2 * flashes++, (unsigned long long)sec * 1000000000ull + usec * 1000ull);
    fflush(out);
}

int drmModePageFlip(int fd, uint32_t crtc, uint32_t fb, uint32_t flags, void *data) {
    static int (*real)(int, uint32_t, uint32_t, uint32_t, void *);
    if (!real) real = dlsym(RTLD_NEXT, "drmModePageFlip");
    int r = real(fd, crtc, fb, flags, data);
    if (r == 0 && (flags & DRM_MODE_PAGE_FLIP_EVENT)) committed(fd, fb);
    return r;
}

static int is_fb_id(int fd, uint32_t prop) {
    for (int i = 0; i < nprops; i++) if (fb_id_props[i] == prop) return 1;
    drmModePropertyPtr p = drmModeGetProperty(fd, prop);
    int yes = p && strcmp(p->name, "FB_ID") == 0;
    if (p) drmModeFreeProperty(p);
    if (yes && nprops < 16) fb_id_props[nprops++] = prop;
    return yes;
}

int drmModeAtomicCommit(int fd, drmModeAtomicReqPtr req, uint32_t flags, void *data) {
    static int (*real)(int, drmModeAtomicReqPtr, uint32_t, void *);
    if (!real) real = dlsym(RTLD_NEXT, "drmModeAtomicCommit");
    uint32_t fb = 0;
    if (!(flags & DRM_MODE_ATOMIC_TEST_ONLY) && (flags & DRM_MODE_PAGE_FLIP_EVENT)) {
        struct request *r = (struct request *)req;
        for (uint32_t i = 0; i < r->cursor; i++)
            if (r->items[i].value && is_fb_id(fd, r->items[i].property_id)) fb = (uint32_t)r->items[i].value;
    }
    int r = real(fd, req, flags, data);
    if (r == 0 && !(flags & DRM_MODE_ATOMIC_TEST_ONLY) && (flags & DRM_MODE_PAGE_FLIP_EVENT)) committed(fd, fb);
    return r;
}

static void on_flip(int fd, unsigned seq, unsigned sec, unsigned usec, void *data) {
    flipped(sec, usec);
    if (client->page_flip_handler) client->page_flip_handler(fd, seq, sec, usec, data);
}

static void on_flip2(int fd, unsigned seq, unsigned sec, unsigned usec, unsigned crtc, void *data) {
    flipped(sec, usec);
    if (client->page_flip_handler2) client->page_flip_handler2(fd, seq, sec, usec, crtc, data);
}

int drmHandleEvent(int fd, drmEventContextPtr ctx) {
    static int (*real)(int, drmEventContextPtr);
    if (!real) real = dlsym(RTLD_NEXT, "drmHandleEvent");
    drmEventContext ours = *ctx;
    client = ctx;
    if (ctx->page_flip_handler) ours.page_flip_handler = on_flip;
    if (ctx->version >= 3 && ctx->page_flip_handler2) ours.page_flip_handler2 = on_flip2;
    return real(fd, &ours);
}
