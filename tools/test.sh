#!/usr/bin/env bash
# The test command from a clean clone: install what is needed, generate the fixtures, build, run
# Scanout against the real vkms KMS driver in a QEMU guest (tools/vm: DRM discovery, DMA-BUF
# frames from GBM buffers through EGL on GBM, presentation, the hardware path with no CPU copy,
# the kiosk service's content policy and overlay;
# SCANOUT_SKIP_VM=1 skips it), then run every Swift test.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/make-fixtures.sh .fixtures
swift build --build-tests
if [[ ${SCANOUT_SKIP_VM:-0} != 1 ]]; then
  vm_start=$SECONDS
  for step in selftest test-scanout test-dmabuf test-present test-zero-copy test-serve-policy; do
    step_start=$SECONDS
    tools/vm/$step.sh
    echo "vm step $step: $((SECONDS - step_start)) s"
  done
  echo "vm steps: $((SECONDS - vm_start)) s in all"
fi
swift test --skip-build
