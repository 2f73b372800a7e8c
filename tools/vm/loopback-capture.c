/* Captures ALSA's loopback card and logs when each beep starts, on CLOCK_MONOTONIC.
 *
 *   loopback-capture LOG SECONDS [DEVICE]     (DEVICE: hw:Loopback,1,0)
 *
 * Waits until something plays on the other side of the loopback (its status file says RUNNING),
 * opens the capture with that stream's format (S16_LE interleaved; rate and channels as the
 * playback has them), and reads it for SECONDS. snd-aloop moves a sample to the capture side when
 * the playback's hardware pointer passes it, which is when a card would play it. After each read,
 * snd_pcm_status gives the hardware pointer's timestamp (CLOCK_MONOTONIC, taken when the pointer
 * moved) and how many frames were captured but not read yet: frame k of the capture was therefore
 * played at  htstamp - (read + avail - k) / rate.
 * Each line of LOG: `onset_ns level` (tools/lipsync-offsets.py reads it); a beep is a sample above
 * 1000 after at least 0.1 s below it (a beep lasts 1/30 s; a seek can bring the next one 0.13 s
 * after the last). Exit status 1 when the device cannot be opened or read.
 * Built by tools/vm/test-lipsync.sh: cc -O2 -o loopback-capture loopback-capture.c -lasound
 */
#include <alsa/asoundlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int playing(const char *status_path) {
    char line[256];
    FILE *f = fopen(status_path, "r");
    int running = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "RUNNING")) running = 1;
    fclose(f);
    return running;
}

static int64_t ns_of(snd_htimestamp_t t) { return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec; }

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: loopback-capture LOG SECONDS [DEVICE]\n"); return 2; }
    const char *device = argc > 3 ? argv[3] : "hw:Loopback,1,0";
    double seconds = atof(argv[2]);
    FILE *log = fopen(argv[1], "w");
    if (!log) { perror(argv[1]); return 1; }
    /* the playback side of the same cable: card Loopback, device 0, substream 0 */
    for (int i = 0; !playing("/proc/asound/Loopback/pcm0p/sub0/status"); i++) {
        if (i > 30000) { fprintf(stderr, "loopback-capture: nothing played on hw:Loopback,0,0 within 300 s\n"); return 1; }
        usleep(10000);
    }
    snd_pcm_t *pcm;
    int r = snd_pcm_open(&pcm, device, SND_PCM_STREAM_CAPTURE, 0);
    if (r < 0) { fprintf(stderr, "loopback-capture: %s: %s\n", device, snd_strerror(r)); return 1; }
    snd_pcm_hw_params_t *hw;
    snd_pcm_hw_params_alloca(&hw);
    unsigned rate = 48000, channels = 2;
    snd_pcm_hw_params_any(pcm, hw);
    snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED);
    if ((r = snd_pcm_hw_params_set_format(pcm, hw, SND_PCM_FORMAT_S16_LE)) < 0
        || (r = snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, 0)) < 0
        || (r = snd_pcm_hw_params_set_channels_near(pcm, hw, &channels)) < 0
        || (r = snd_pcm_hw_params(pcm, hw)) < 0) {
        fprintf(stderr, "loopback-capture: %s: hw params: %s\n", device, snd_strerror(r));
        return 1;
    }
    snd_pcm_sw_params_t *sw;
    snd_pcm_sw_params_alloca(&sw);
    snd_pcm_sw_params_current(pcm, sw);
    snd_pcm_sw_params_set_tstamp_mode(pcm, sw, SND_PCM_TSTAMP_ENABLE);
    snd_pcm_sw_params_set_tstamp_type(pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC);
    if ((r = snd_pcm_sw_params(pcm, sw)) < 0) {
        fprintf(stderr, "loopback-capture: %s: sw params: %s\n", device, snd_strerror(r));
        return 1;
    }
    snd_pcm_uframes_t period;
    snd_pcm_hw_params_get_period_size(hw, &period, 0);
    fprintf(stderr, "loopback-capture: %s: %u Hz, %u channels, period %lu frames\n", device, rate, channels,
            (unsigned long)period);
    int16_t *buf = malloc(period * channels * sizeof(int16_t));
    snd_pcm_status_t *st;
    snd_pcm_status_alloca(&st);
    int64_t total = (int64_t)(seconds * rate), read = 0, last_loud = -(int64_t)rate, onsets = 0;
    while (read < total) {
        snd_pcm_sframes_t n = snd_pcm_readi(pcm, buf, period);
        if (n == -EPIPE) { fprintf(stderr, "loopback-capture: overrun at frame %lld\n", (long long)read); snd_pcm_prepare(pcm); continue; }
        if (n < 0) { fprintf(stderr, "loopback-capture: read: %s\n", snd_strerror((int)n)); return 1; }
        if ((r = snd_pcm_status(pcm, st)) < 0) { fprintf(stderr, "loopback-capture: status: %s\n", snd_strerror(r)); return 1; }
        snd_htimestamp_t ts;
        snd_pcm_status_get_htstamp(st, &ts);
        int64_t head = read + n + snd_pcm_status_get_avail(st); /* frames captured when ts was taken */
        for (snd_pcm_sframes_t i = 0; i < n; i++) {
            int16_t v = buf[i * channels];
            int64_t k = read + i;
            if (v > 1000 || v < -1000) {
                if (k - last_loud > (int64_t)rate / 10) {
                    int64_t at = ns_of(ts) - (head - k) * 1000000000 / rate;
                    fprintf(log, "%lld %d\n", (long long)at, v);
                    fflush(log);
                    onsets++;
                }
                last_loud = k;
            }
        }
        read += n;
    }
    fprintf(stderr, "loopback-capture: %lld frames, %lld beeps\n", (long long)read, (long long)onsets);
    snd_pcm_close(pcm);
    fclose(log);
    return 0;
}
