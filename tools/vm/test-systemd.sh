#!/usr/bin/env bash
# dist/scanout.service under a real systemd: the guest boots with systemd as PID 1
# (SCANOUT_VM_INIT=systemd), installs the unit as a kiosk would (the `scanout` user, a kiosk
# config playing a clip on vkms's Virtual-1 with the CPU renderer, a drop-in pointing ExecStart at
# the host's build) and test-systemd-guest.sh drives it with systemctl:
#   1. `systemctl start` returns once READY=1 came: a frame is already presented, /health playing;
#   2. `systemd-analyze security` rates the running unit <= 4.0, and the hardened service
#      (DevicePolicy=closed, DeviceAllow=char-drm) plays on Virtual-1: frames presented rise and
#      the primary plane of its CRTC flips between framebuffers (vkms's state in debugfs);
#   3. `systemctl reload` re-reads the config (a new scaling in GET /config), same MainPID;
#   4. with SCANOUT_FAULTS=hang-loop@30 and WatchdogSec=6 (a drop-in), systemd's watchdog kills
#      the hung service and restarts it (NRestarts rises, the journal names the watchdog);
#   5. `systemctl kill -s KILL` → restarted by Restart=always, /health playing again;
#   6. capture into a 1 MiB tmpfs: the disk fills, the service keeps playing (frames presented
#      rise, same MainPID), and says "capture stopped" once.
#
# Builds nothing: run `swift build` first. Ends with `systemd: N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/vm/step-lib.sh
step_begin systemd
ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i "testsrc2=size=320x240:rate=30,format=yuv420p,trim=end_frame=60" \
  -c:v libx264 -threads 1 -preset ultrafast -pix_fmt yuv420p "$work/clip.mp4"
cmd="bash tools/vm/test-systemd-guest.sh '$work'"
SCANOUT_VM_INIT=systemd guest_run 900

# value KEY: what the guest printed after "KEY: "
value() { sed -n "s/^$1: //p" <<<"$out" | head -n1; }
# matches KEY REGEX: the value of KEY matches the extended regex (BASH_REMATCH kept)
matches() { [[ $(value "$1") =~ $2 ]]; }
rising() { matches "$1" "$2" && (( BASH_REMATCH[2] > BASH_REMATCH[1] )); }

check "1. systemctl start returns 0 with the unit active/running" \
  bash -c '[[ $(sed -n "s/^start-status: //p" <<<"$1") == 0 ]] && grep -q "^start-state: active/running in" <<<"$1"' _ "$out"
check "1. a frame was presented when systemctl start returned (READY=1 after the first frame)" matches start-frames '^[1-9][0-9]*$'
check "1. /health answers playing when systemctl start returned" matches start-health '^playing$'
check "1. runs as the scanout user" matches start-user '^scanout$'
check "2. systemd-analyze security (at run time) rates the unit <= 4.0" \
  bash -c 's=$(sed -n "s/^security: //p" <<<"$1"); [[ -n $s ]] && awk -v s="$s" "BEGIN {exit !(s <= 4.0)}"' _ "$out"
check "2. DevicePolicy=closed, the DRM class allowed" matches device-policy '^closed .*char-drm rw'
check "2. the hardened service presents frames on Virtual-1 (frames rise, the primary plane flips)" \
  bash -c '[[ $(sed -n "s/^playing: //p" <<<"$1") =~ ^frames\ ([0-9]+)\ -\>\ ([0-9]+),\ crtc-0\ primary\ showed\ ([0-9]+)\ framebuffers.*,\ on\ Virtual-1$ ]] \
    && (( BASH_REMATCH[2] > BASH_REMATCH[1] && BASH_REMATCH[3] >= 2 ))' _ "$out"
check "2. KMS opened (no fallback to the headless output)" matches kms-log '^0 fallbacks'
check "2. no systemd message about the NVIDIA device classes" matches pid1-nvidia '^0 messages'
check "3. systemctl reload: the new scaling applied, MainPID and NRestarts unchanged, playing" \
  bash -c '[[ $(sed -n "s/^reload: //p" <<<"$1") =~ ^pid\ ([0-9]+)\ -\>\ ([0-9]+),\ scaling\ fill,\ restarts\ ([0-9]+)\ -\>\ ([0-9]+),\ playing$ ]] \
    && (( BASH_REMATCH[1] == BASH_REMATCH[2] && BASH_REMATCH[3] == BASH_REMATCH[4] ))' _ "$out"
check "4. the hung loop: the watchdog restarts the service (NRestarts rises)" rising watchdog '^restarts ([0-9]+) -> ([0-9]+) '
check "4. the journal shows systemd's watchdog timeout" matches watchdog-journal '[Ww]atchdog timeout'
check "4. the injected hang is logged" matches watchdog-fault '^[1-9][0-9]* hangs'
check "4. without the fault it plays again" matches after-watchdog '^playing, watchdog 10s$'
check "5. SIGKILL: restarted by Restart=always (new MainPID, NRestarts rises), playing again" \
  bash -c '[[ $(sed -n "s/^sigkill: //p" <<<"$1") =~ ^pid\ ([0-9]+)\ -\>\ ([0-9]+),\ restarts\ ([0-9]+)\ -\>\ ([0-9]+),\ result\ [1-9][0-9]*\ killed,\ playing ]] \
    && (( BASH_REMATCH[1] != BASH_REMATCH[2] && BASH_REMATCH[4] > BASH_REMATCH[3] ))' _ "$out"
check "6. disk full: the captures stop, the frames presented keep rising" \
  bash -c '[[ $(sed -n "s/^capture-full: //p" <<<"$1") =~ captures\ ([0-9]+)\ -\>\ ([0-9]+),\ frames\ ([0-9]+)\ -\>\ ([0-9]+)$ ]] \
    && (( BASH_REMATCH[1] >= 1 && BASH_REMATCH[1] == BASH_REMATCH[2] && BASH_REMATCH[4] > BASH_REMATCH[3] ))' _ "$out"
check "6. the capture failure is reported once" matches capture-report '^1 logged: .*capture stopped'
check "6. no crash: same MainPID, no restart, playing" \
  bash -c '[[ $(sed -n "s/^capture-service: //p" <<<"$1") =~ ^pid\ ([0-9]+)\ -\>\ ([0-9]+),\ restarts\ ([0-9]+)\ -\>\ ([0-9]+),\ playing$ ]] \
    && (( BASH_REMATCH[1] == BASH_REMATCH[2] && BASH_REMATCH[3] == BASH_REMATCH[4] ))' _ "$out"
check "systemctl stop: clean (Result=success)" matches stop '^0 success$'
(( vm != 0 )) && { echo "test-systemd: the guest run failed (status $vm)" >&2; failed=$((failed + 1)); }
echo "systemd: $passed passed, $failed failed ($((SECONDS - start)) s)"
(( failed == 0 ))
