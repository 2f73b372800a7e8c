# Sourced by the guest steps (test-present.sh, test-zero-copy.sh), from the repository root.

# step_begin NAME: sets `bin` (the debug build of scanout, or $SCANOUT_VM_BIN: a path under the
# repository, e.g. .build/release/scanout) and `work` (a scratch directory removed on exit,
# shared with the guest); without a build, prints why and `NAME: 0 passed, 1 failed` and exits 1.
step_begin() {
  bin=${SCANOUT_VM_BIN:-.build/debug/scanout}
  work=$(mktemp -d "${TMPDIR:-/tmp}/scanout-$1.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  if [[ ! -x $bin ]]; then
    echo "test-$1: $bin not built (run swift build first)" >&2
    echo "$1: 0 passed, 1 failed"; exit 1
  fi
}

# Clips whose frames carry their frame number as a binary code (the top 32 rows: bit k of N is a
# white or black block 32 pixels wide at x = 32k), which `scanout selftest captures` reads back
# from each writeback capture.
frame_band="geq=lum='if(lt(Y,32),if(mod(floor(N/pow(2,floor(X/32))),2),235,16),lum(X,Y))':cb='if(lt(Y,32),128,cb(X,Y))':cr='if(lt(Y,32),128,cr(X,Y))'"

# frame_clip FRAMES OUT: a 320x240 60 fps H.264 clip (yuv420p, B-frames, bit-exact) of FRAMES frames.
frame_clip() {
  ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i "testsrc2=size=320x240:rate=60,format=yuv420p,$frame_band,trim=end_frame=$1" \
    -c:v libx264 -threads 1 -preset veryfast -g 12 -bf 2 -pix_fmt yuv420p -fflags +bitexact -flags:v +bitexact "$2"
}

# A filter for guest command lines: drops what Mesa prints in the guest when it looks for a vkms
# driver before kms_swrast (harmless).
quiet='grep -v -e "^MESA-LOADER: failed to open vkms" -e "^failed to load driver: vkms" -e "^kmsro: driver missing"'

# guest_run TIMEOUT: runs $cmd in the guest (its writable share: $work), prints what it printed,
# and sets `out` (that output), `vm` (the run's exit status) and the counts `check` keeps.
guest_run() {
  out=$(SCANOUT_VM_OUT=$work SCANOUT_VM_TIMEOUT=${SCANOUT_VM_TIMEOUT:-$1} tools/vm/run.sh "$cmd")
  vm=$?
  printf '%s\n' "$out"
  passed=0 failed=0
}

# check DESCRIPTION TEST...: runs the test; counts it passed, or failed with "FAIL DESCRIPTION".
check() {
  local what=$1; shift
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $what" >&2; fi
}
