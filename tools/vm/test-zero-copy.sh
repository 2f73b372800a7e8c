#!/usr/bin/env bash
# The hardware path with no CPU copy, on the real vkms driver: in the guest, the software stand-in
# for VA-API (SCANOUT_FAULTS=hw-standin) exports each decoded picture into GBM buffer objects of
# /dev/dri/card0 (real DMA-BUFs), and `scanout play --output kms --renderer gl --player-type hw`
# imports them per plane through EGL on GBM and draws them into the scanout buffers. The summary's
# `copies:` line must say 0 downloads, 0 uploads and one import per frame presented, and every
# writeback capture must equal the headless GLES render of its frame (`scanout selftest captures`),
# each frame once, in order. 4 frames: GLES on llvmpipe in the emulated CPU takes seconds a frame.
#
# Builds nothing: run `swift build` first. Ends with `zero-copy: N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
frames=${SCANOUT_ZERO_COPY_FRAMES:-4}
source tools/vm/step-lib.sh
step_begin zero-copy
frame_clip "$frames" "$work/clip.mp4"
cmd="echo '## play'; SCANOUT_FAULTS=hw-standin $bin play '$work/clip.mp4' --output kms --mode 640x480@60 --renderer gl --player-type hw --capture '$work/captures' 2>&1 | $quiet; echo \"## play status \${PIPESTATUS[0]}\"; "
cmd+="$bin selftest captures '$work/captures' --input '$work/clip.mp4' --size 640x480 --renderer gl 2>&1 | $quiet; echo \"## check status \${PIPESTATUS[0]}\"; "
guest_run 600
check "play exited 0" grep -q '^## play status 0$' <<<"$out"
check "the stand-in decoded (hw player type)" grep -q 'software stand-in for VA-API' <<<"$out"
check "$frames frames presented" grep -q "^summary: $frames frames presented, 0 dropped" <<<"$out"
check "no download, no upload, one import per frame" \
  grep -q "^copies: 0.00 CPU copies/frame (0 downloads, 0 uploads, 0 GPU copies, $frames imports)$" <<<"$out"
check "every capture equals the headless GLES render, each frame once" grep -q '^## check status 0$' <<<"$out"
(( vm != 0 )) && { echo "test-zero-copy: the guest run failed (status $vm)" >&2; failed=$((failed + 1)); }
echo "zero-copy: $passed passed, $failed failed ($((SECONDS - start)) s)"
(( failed == 0 ))
