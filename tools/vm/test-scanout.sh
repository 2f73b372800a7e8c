#!/usr/bin/env bash
# Scanout against the real vkms driver: runs the built `scanout probe` in the guest and checks that
# the output selector finds the vkms card and its connected Virtual-1 connector through libdrm.
# Needs a debug build (swift build) and tools/vm/setup.sh. Exits non-zero on any failed check.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${SCANOUT_BIN:-.build/debug/scanout}
[[ -x $BIN ]] || { echo "vm test: $BIN is missing (run swift build first)" >&2; exit 1; }
out=$(tools/vm/run.sh "$BIN probe")
echo "$out" | sed 's/^/  guest: /'
pass=0 fail=0
check() { if grep -qE "$2" <<<"$out"; then echo "ok   $1"; pass=$((pass + 1)); else echo "FAIL $1"; fail=$((fail + 1)); fi; }
check "the vkms card is listed with its driver"    '/dev/dri/card0: driver vkms'
check "its Virtual-1 connector is connected"       'connected: Virtual-1'
check "the output choice names the screen"         'screens found on /dev/dri/card0 \(Virtual-1\)'
check "the primary plane is listed with its formats" 'plane [0-9]+ primary, CRTCs 0x1: XR24'
check "content protection is reported per connector" 'content protection: not supported \(no property\)'
check "EGL on GBM offers DMA-BUF import"             'egl \(gbm /dev/dri/card0\): .*dma-buf import: yes'
echo "vm: $pass passed, $fail failed"
((fail == 0))
