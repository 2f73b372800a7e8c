#!/usr/bin/env bash
# The DMA-BUF import path without a GPU: in the vkms guest, on the GBM EGL display of
# /dev/dri/card0 (Mesa's kms_swrast, which offers EGL_EXT_image_dma_buf_import), each chosen
# frame is rendered by texture upload and through GBM buffers (R8 + GR88 for nv12, R16 + GR1616
# for p010) exported as DMA-BUFs and imported one EGLImage per plane; the largest channel
# difference must be <= 1.
#
# Builds nothing: run `swift build` first. Prints each frame's difference and ends with
# `dmabuf: N passed, M failed`; exits 0 only when nothing failed.
#   SCANOUT_DMABUF_FRAMES  frame indices (default 0,5,12)
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=.build/debug/scanout
frames=${SCANOUT_DMABUF_FRAMES:-0,5,12}
inputs=(.fixtures/counter.mp4 .fixtures/hevc10.mkv)
if [[ ! -x $bin ]]; then
  echo "test-dmabuf: $bin not built (run swift build first)" >&2
  echo "dmabuf: 0 passed, 1 failed"
  exit 1
fi
cmd=""
for f in "${inputs[@]}"; do
  cmd+="echo '## $f'; $bin selftest dmabuf '$f' --frames '$frames' 2>&1 | grep -v -e '^MESA-LOADER: failed to open vkms' -e '^failed to load driver: vkms' -e '^kmsro: driver missing'; echo \"## status \${PIPESTATUS[0]}\"; "
done
out=$(tools/vm/run.sh "$cmd")
vm=$?
printf '%s\n' "$out"
passed=0 failed=0
expected=$(( ${#inputs[@]} * $(tr ',' '\n' <<<"$frames" | grep -c .) ))
while IFS= read -r line; do
  case $line in
    frame\ *": max diff "*" ok") passed=$((passed + 1)) ;;
    frame\ *": max diff "*) failed=$((failed + 1)) ;;
  esac
done <<<"$out"
statuses=$(grep -c '^## status 0$' <<<"$out")
if (( vm != 0 )); then
  echo "test-dmabuf: the guest run failed (status $vm)" >&2
fi
# Frames that never printed (a command that failed early) count as failed.
missing=$(( expected - passed - failed ))
(( missing > 0 )) && failed=$((failed + missing))
if (( statuses != ${#inputs[@]} && failed == 0 )); then failed=1; fi
echo "dmabuf: $passed passed, $failed failed"
(( failed == 0 && vm == 0 ))
