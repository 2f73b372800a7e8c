#!/usr/bin/env bash
# Installs the Debian packages Scanout builds, tests and plays with, plus any package named as an
# argument. Idempotent: apt runs only when a package is missing. Needs root (or sudo) on Debian 12;
# Swift 6 must already be on PATH.
set -euo pipefail
PKGS=(
  pkg-config python3
  ffmpeg libavformat-dev libavcodec-dev libavutil-dev libswscale-dev   # decode, convert, PNG/Y4M
  libva-dev libdrm-dev libgbm-dev                                      # VA-API, KMS, GBM
  libffmpeg-nvenc-dev gcc                                              # NVDEC: CUDA declarations (libcuda is dlopened); a fake libcuda in the tests
  libegl-dev libgles-dev libegl-mesa0 libgl1-mesa-dri                  # EGL/GLES (Mesa, llvmpipe)
  glslang-tools                                                        # shader validation (tests)
  libasound2-dev libavfilter-dev libswresample-dev alsa-utils        # audio: ALSA output, resample, atempo
  libass-dev fonts-dejavu-core                                         # subtitles: libass, default font
  libsqlite3-dev                                                       # the offline store (GRDB)
  python3-venv                                                         # tools/api-fuzz.sh, tools/page-test.py: venvs of their own
  chromium chromium-driver                                             # tools/page-test.py: the management page in a headless browser
  iproute2                                                             # network namespaces of the multicast and sync tests
  libmosquitto-dev mosquitto mosquitto-clients openssl                 # the fleet through MQTT: the client; a broker, its clients and a TLS certificate in the tests
)
PKGS+=("$@")
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=; [[ $(id -u) == 0 ]] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v swift >/dev/null || { echo "setup: swift is not on PATH (Swift 6.x toolchain needed)" >&2; exit 1; }
