#ifndef SCANOUT_CALSA_SHIM_H
#define SCANOUT_CALSA_SHIM_H
// ALSA's PCM API (snd_pcm_*) and the device name hints (snd_device_name_hint).
#include <alsa/asoundlib.h>
#endif
