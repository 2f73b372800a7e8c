#!/usr/bin/env bash
# Installs the peers `scanout bench --compare` runs (mpv, GStreamer with its libav plugins; ffmpeg
# comes with tools/setup.sh) and makes the benchmark clips. Part of the benchmark set-up, not of the
# tests. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
PKGS=(mpv gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-libav)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup-bench: installing ${missing[*]}" >&2
  SUDO=; [[ $(id -u) == 0 ]] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
tools/make-clips.sh .clips "$@"
