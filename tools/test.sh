#!/usr/bin/env bash
# The test command from a clean clone: install what is needed, generate the fixtures, build, run
# Scanout against the real vkms KMS driver in a QEMU guest (tools/vm: DRM discovery, DMA-BUF
# frames from GBM buffers through EGL on GBM, presentation, layouts composed on the screen, the
# hardware path with no CPU copy, the kiosk service's content policy and overlay, HDMI-CEC standby
# and wake on vivid's emulated CEC bus, the systemd unit under a real systemd;
# SCANOUT_SKIP_VM=1 skips it), run every Swift test, run four `serve` members of a sync group in a
# network namespace for 30 s (lock, a rejoin, a failover under jitter and loss;
# SCANOUT_SKIP_SYNC=1 skips it), send 5 group commands through a mosquitto broker to 10 `serve`
# boxes, each of which must switch (tools/fleet-bench.py; SCANOUT_SKIP_FLEET=1 skips it), drive
# the management page in headless Chromium (tools/page-test.py: no console error, a first load
# under 300 ms, a playlist edit plays, the snapshot moves, no serious accessibility violation;
# SCANOUT_SKIP_PAGE=1 skips it), fuzz the control API of a live `scanout serve` with schemathesis
# for about 2.5 minutes (tools/api-fuzz.sh: no 5xx the API document does not list, no answer
# outside it; SCANOUT_SKIP_FUZZ=1 skips it), then soak the service for 5 minutes (tools/soak.sh:
# 20 API clients and 5 event streams against `scanout serve`; no request may fail, no event be
# lost, fds and RSS may not grow; SCANOUT_SKIP_SOAK=1 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/make-fixtures.sh .fixtures
swift build --build-tests
if [[ ${SCANOUT_SKIP_VM:-0} != 1 ]]; then
  vm_start=$SECONDS
  for step in selftest test-scanout test-dmabuf test-present test-layout test-zero-copy test-serve-policy test-cec test-hdr test-systemd; do
    step_start=$SECONDS
    tools/vm/$step.sh
    echo "vm step $step: $((SECONDS - step_start)) s"
  done
  echo "vm steps: $((SECONDS - vm_start)) s in all"
fi
swift test --skip-build
if [[ ${SCANOUT_SKIP_SYNC:-0} != 1 ]]; then
  # Screens in lockstep: 4 members in a network namespace through a relay with 5 ms ± 2 ms and
  # 1 % loss; a restart at 10 s, the leader killed at 20 s (tools/sync-bench.py --check).
  python3 tools/sync-bench.py --scanout .build/debug/scanout --members 4 --seconds 30 --delay-ms 5 --jitter-ms 2 --loss 0.01 \
    --rejoin 2@10 --failover-at 20 --check
fi
if [[ ${SCANOUT_SKIP_FLEET:-0} != 1 ]]; then
  # A fleet through MQTT: 10 boxes and a mosquitto broker; 5 group commands, each box must switch.
  python3 tools/fleet-bench.py --scanout .build/debug/scanout --boxes 10 --rounds 5 --all-switch
fi
if [[ ${SCANOUT_SKIP_PAGE:-0} != 1 ]]; then
  # The management page (GET /) in headless Chromium through selenium, axe-core's rules included.
  page_venv=$(tools/setup-page-test.sh)
  "$page_venv/bin/python" tools/page-test.py --scanout .build/debug/scanout --fixtures .fixtures
fi
if [[ ${SCANOUT_SKIP_FUZZ:-0} != 1 ]]; then
  tools/api-fuzz.sh
fi
if [[ ${SCANOUT_SKIP_SOAK:-0} != 1 ]]; then
  tools/soak.sh --minutes "${SCANOUT_SOAK_MINUTES:-5}"
fi
