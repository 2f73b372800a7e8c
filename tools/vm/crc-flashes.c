/* Logs when a bright frame reaches vkms's screen, for any player: the CRTC's CRCs, one per vblank.
 *
 *   crc-flashes LOG SECONDS [CARD]     (CARD: 0, the vkms card in the guest)
 *
 * Turns on vkms's CRC source (`/sys/kernel/debug/dri/CARD/crtc-0/crc/control` = "auto"): from then
 * on vkms composes every vblank and writes `frame_count crc` to `crc/data`, where frame_count is
 * the CRTC's vblank counter. The most frequent CRC is the black screen; a vblank whose CRC
 * differs from it after at least 0.25 s of black is a flash reaching the screen (the clip is
 * flash-beep.mp4: black, one white frame every 2 s; every black frame of it decodes to the same
 * pixels, so the black screen is one CRC for a given player). The vblank counter becomes CLOCK_MONOTONIC
 * through DRM_IOCTL_WAIT_VBLANK (a relative wait of 0 returns the latest vblank's count and
 * timestamp, monotonic) asked after each read: t(frame) = t(latest) - (latest - frame) * period,
 * the period measured between the first answer and the latest. Each line of LOG:
 * `onset_ns frame_count` (tools/lipsync-offsets.py --crc reads it), written after SECONDS or on
 * SIGINT/SIGTERM. vkms stops computing CRCs when the data file is closed; the file ends when the
 * CRTC goes off or through a modeset (a player starting), and is opened again then. Exit status
 * 1 when the card cannot be opened or the CRC data never could.
 * Built by tools/vm/test-lipsync.sh: cc -O2 -o crc-flashes crc-flashes.c -I/usr/include/libdrm -ldrm
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The latest vblank's count and CLOCK_MONOTONIC ns; 0 when the ioctl failed. */
static int latest_vblank(int fd, uint32_t *seq, int64_t *ns) {
    drmVBlank v;
    memset(&v, 0, sizeof v);
    v.request.type = DRM_VBLANK_RELATIVE;
    v.request.sequence = 0;
    if (drmWaitVBlank(fd, &v) != 0) return 0;
    *seq = v.reply.sequence;
    *ns = (int64_t)v.reply.tval_sec * 1000000000 + (int64_t)v.reply.tval_usec * 1000;
    return 1;
}

#define MAXV 20000

/* Turns the CRTC's CRC source on and opens its data; NULL while it cannot (the CRTC is off). */
static FILE *open_crc(const char *card) {
    char path[256];
    snprintf(path, sizeof path, "/sys/kernel/debug/dri/%s/crtc-0/crc/control", card);
    FILE *control = fopen(path, "w");
    if (!control) return NULL;
    int ok = fputs("auto", control) >= 0;
    if (fclose(control) != 0 || !ok) return NULL;
    snprintf(path, sizeof path, "/sys/kernel/debug/dri/%s/crtc-0/crc/data", card);
    return fopen(path, "r");
}

/* SIGINT or SIGTERM ends the reading early (the read is interrupted: no SA_RESTART); the flashes
 * found so far are still logged. */
static volatile sig_atomic_t stop;
static void on_signal(int s) { (void)s; stop = 1; }

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: crc-flashes LOG SECONDS [CARD]\n"); return 2; }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    double seconds = atof(argv[2]);
    const char *card = argc > 3 ? argv[3] : "0";
    char path[256];
    snprintf(path, sizeof path, "/dev/dri/card%s", card);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) { perror(path); return 1; }
    /* The first process to open a card with no master becomes its master: given up at once, for
     * the player that starts next. */
    drmDropMaster(fd);
    FILE *log = fopen(argv[1], "w");
    if (!log) { perror(argv[1]); return 1; }
    /* Every vblank's count, CRC and time, kept; the flashes are found at the end, once the
     * black screen's CRC is known (the most frequent). */
    static uint32_t frames[MAXV], crcs[MAXV];
    static int64_t times[MAXV];
    int n = 0, opens = 0;
    uint32_t seq0 = 0, seq;
    int64_t t0 = 0, t;
    int have0 = 0;
    int64_t end = now_ns() + (int64_t)(seconds * 1e9);
    char line[128];
    FILE *data = NULL;
    while (!stop && n < MAXV && now_ns() < end) {
        /* The data file ends when the CRTC goes off or through a modeset (a player starting or
         * stopping): opened again until the end, the CRTC's vblank count going on across. */
        if (!data) {
            data = open_crc(card);
            if (!data) { usleep(20000); continue; }
            opens++;
        }
        if (!fgets(line, sizeof line, data)) {
            fclose(data);
            data = NULL;
            continue;
        }
        unsigned long f, c;
        if (sscanf(line, "%lx %lx", &f, &c) != 2) continue;
        if (!latest_vblank(fd, &seq, &t)) continue;
        if (!have0) { seq0 = seq; t0 = t; have0 = 1; }
        frames[n] = (uint32_t)f;
        crcs[n] = (uint32_t)c;
        /* The period from the first answer to this one; the first reads use the mode's 60 Hz. */
        double period = seq - seq0 > 60 ? (double)(t - t0) / (seq - seq0) : 16683350.0;
        times[n] = t - (int64_t)((double)(int32_t)(seq - (uint32_t)f) * period);
        n++;
    }
    if (data) fclose(data);
    if (!opens) { fprintf(stderr, "crc-flashes: /sys/kernel/debug/dri/%s/crtc-0/crc: could not be opened\n", card); return 1; }
    /* The black screen: the most frequent CRC. */
    uint32_t black = 0;
    int best = 0;
    for (int i = 0; i < n; i++) {
        int c = 0;
        for (int j = 0; j < n; j++) c += crcs[j] == crcs[i];
        if (c > best) { best = c; black = crcs[i]; if (best > n / 2) break; }
    }
    int64_t last_bright = -1000000000000LL;
    int onsets = 0;
    for (int i = 0; i < n; i++) {
        if (crcs[i] == black) continue;
        if (times[i] - last_bright > 250000000LL) {
            fprintf(log, "%lld %u\n", (long long)times[i], frames[i]);
            onsets++;
        }
        last_bright = times[i];
    }
    fprintf(stderr, "crc-flashes: %d vblanks read (%d opens), %d flashes (black CRC %08x on %d)\n", n, opens, onsets, black, best);
    fclose(log);
    close(fd);
    return 0;
}
