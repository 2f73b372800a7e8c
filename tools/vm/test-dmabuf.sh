#!/usr/bin/env bash
# The DMA-BUF import path without a GPU: in the vkms guest, on the GBM EGL display of
# /dev/dri/card0 (Mesa's kms_swrast, which offers EGL_EXT_image_dma_buf_import), each chosen
# frame is rendered by texture upload and through GBM buffers (R8 + GR88 for nv12, R16 + GR1616
# for p010) exported as DMA-BUFs and imported one EGLImage per plane; the largest channel
# difference must be <= 1, on GLES 3 and on the GLES 2 path (--gles 2). Then the single-image fallback: with the per-plane formats refused
# (--refuse, fault injection), each frame must be imported as one NV12 / P010 EGLImage and drawn
# through samplerExternalOES (its pixels are printed, not judged: Mesa 22.3's llvmpipe samples a
# whole YUV image wrongly).
#
# Builds nothing: run `swift build` first. Prints each frame's line and ends with
# `dmabuf: N passed, M failed`; exits 0 only when nothing failed.
#   SCANOUT_DMABUF_FRAMES  frame indices (default 0,5,12)
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=.build/debug/scanout
frames=${SCANOUT_DMABUF_FRAMES:-0,5,12}
# input | extra options | what each frame's line must say
runs=(
  ".fixtures/counter.mp4||per-plane"
  ".fixtures/hevc10.mkv||per-plane"
  ".fixtures/counter.mp4|--gles 2|per-plane"
  ".fixtures/hevc10.mkv|--gles 2|per-plane"
  ".fixtures/counter.mp4|--refuse R8,GR88|single"
  ".fixtures/hevc10.mkv|--refuse R16,GR32|single"
)
if [[ ! -x $bin ]]; then
  echo "test-dmabuf: $bin not built (run swift build first)" >&2
  echo "dmabuf: 0 passed, 1 failed"
  exit 1
fi
cmd=""
for run in "${runs[@]}"; do
  IFS='|' read -r f opts kind <<<"$run"
  cmd+="echo '## $kind $f $opts'; $bin selftest dmabuf '$f' --frames '$frames' $opts 2>&1 | grep -v -e '^MESA-LOADER: failed to open vkms' -e '^failed to load driver: vkms' -e '^kmsro: driver missing'; echo \"## status \${PIPESTATUS[0]}\"; "
done
out=$(tools/vm/run.sh "$cmd")
vm=$?
printf '%s\n' "$out"
passed=0 failed=0 kind=""
expected=$(( ${#runs[@]} * $(tr ',' '\n' <<<"$frames" | grep -c .) ))
while IFS= read -r line; do
  case $line in
    "## per-plane "*) kind=per-plane ;;
    "## single "*) kind=single ;;
    frame\ *": one external image, drawn ok"*)
      if [[ $kind == single ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi ;;
    frame\ *": max diff "*" ok")
      if [[ $kind == per-plane ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi ;;
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
if (( statuses != ${#runs[@]} && failed == 0 )); then failed=1; fi
echo "dmabuf: $passed passed, $failed failed"
(( failed == 0 && vm == 0 ))
