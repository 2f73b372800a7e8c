#!/bin/bash
# The guest half of tools/vm/test-systemd.sh, run by systemd's scanout-vm-command.service in the
# guest from the repository root: installs dist/scanout.service as a kiosk would (its `scanout`
# user, the config, a drop-in pointing ExecStart at the host's build), then drives it with
# systemctl and reads the answers back from systemd, the journal and the control API. Prints one
# `KEY: VALUE` line per figure; test-systemd.sh checks them.
#   $1  the scratch directory shared with the host (the clip is there)
set -uo pipefail
work=$1
bin=$PWD/.build/debug/scanout
unit=scanout.service
dropins=/etc/systemd/system/$unit.d
api() { curl -s --max-time 20 --unix-socket /run/scanout/scanout.sock "http://localhost$1"; }
# field KEY: the value of KEY in the JSON object on stdin (a string or a number; "?" when absent)
field() { local v; v=$(sed -nE 's/.*"'"$1"'" *: *"?([^",}]*).*/\1/p' | head -n1); echo "${v:-?}"; }
prop() { systemctl show -p "$1" --value $unit; }
health() { api /health | field state; }
# at NAME: when a part began, in seconds of this script (guest time)
at() { echo "at-$1: $SECONDS s"; }
presented() { api /stats | field framesPresented; }
# waits up to $1 s for /health to say playing
wait_playing() { local i; for ((i = 0; i < $1; i++)); do [[ $(health) == playing ]] && return 0; sleep 1; done; return 1; }
# vkms's atomic state in debugfs: the framebuffer of the first plane on crtc-0, the first connector on it
state=/sys/kernel/debug/dri/0/state
primary_fb() { awk '/^plane\[/{p=1; c=0; next} /^[a-z]/{p=0} p && /crtc=crtc-0/{c=1} p && c && /fb=/{print $1; exit}' $state; }
crtc_connector() { awk '/^connector\[/{c=$2} c && /crtc=crtc-0/{print c; exit}' $state; }

# ---- what a kiosk's packages provide: the render group (udev's package), the video group on the
# card (udev's 50-udev-default.rules; the guest runs no udev), the scanout system user.
getent group render >/dev/null || groupadd --system render
chgrp video /dev/dri/card0 && chmod 0660 /dev/dri/card0
useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --groups video,render scanout
mkdir -p /etc/scanout /srv/scanout
install -m 0644 "$work/clip.mp4" /srv/scanout/clip.mp4
cat > /etc/scanout/scanout.json <<'JSON'
{"output": "kms", "repeat": "all", "scaling": "fit", "unixSocket": "/run/scanout/scanout.sock", "playlist": ["/srv/scanout/clip.mp4"]}
JSON
install -m 0644 dist/scanout.service /etc/systemd/system/$unit
mkdir -p $dropins
# The host's debug build; the CPU renderer (GLES on llvmpipe under TCG takes seconds a frame).
cat > $dropins/10-vm.conf <<EOF
[Service]
ExecStart=
ExecStart=$bin serve --config /etc/scanout/scanout.json --renderer cpu
EOF
systemctl daemon-reload

# ---- 1. start returns after READY=1, with a frame on screen
at start
t0=$(date +%s%N)
systemctl start $unit; echo "start-status: $?"
t1=$(date +%s%N)
# read at once, before anything else can happen: READY=1 must already have come
echo "start-frames: $(presented)"
echo "start-health: $(health)"
echo "start-state: $(prop ActiveState)/$(prop SubState) in $(((t1 - t0) / 1000000)) ms"
echo "start-status-text: $(prop StatusText)"
echo "start-journal: $(journalctl -u $unit -b --no-pager -o cat | grep -v "^ " | tail -n 8 | paste -sd "|")"
echo "start-user: $(ps -o user= -p "$(prop MainPID)")"

# ---- 2. the hardened service: its exposure as systemd rates the running unit, and it plays on vkms
at security
echo "security: $(systemd-analyze security --no-pager $unit 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')"
echo "device-policy: $(prop DevicePolicy) $(prop DeviceAllow | tr '\n' ' ')"
# the framebuffers the primary plane showed in 8 looks (page flips alternate between them)
f1=$(presented); fbs=$(for i in $(seq 8); do primary_fb; sleep 0.4; done | sort -u | tr '\n' ' '); f2=$(presented)
echo "playing: frames $f1 -> $f2, crtc-0 primary showed $(wc -w <<<"$fbs") framebuffers (${fbs% }), on $(crtc_connector)"
echo "kms-log: $(journalctl -u $unit -b --no-pager -o cat | grep -c 'output unavailable') fallbacks to headless"
echo "pid1-nvidia: $(journalctl -b _PID=1 --no-pager -o cat | grep -ci nvidia) messages"   # DeviceAllow=char-nvidia* on a machine without
restarts0=$(prop NRestarts)

# ---- 3. reload: the config file read again, same process
at reload
pid=$(prop MainPID)
sed -i 's/"scaling": "fit"/"scaling": "fill"/' /etc/scanout/scanout.json
systemctl reload $unit; echo "reload-status: $?"
for i in $(seq 20); do [[ $(api /config | field scaling) == fill ]] && break; sleep 1; done
echo "reload: pid $pid -> $(prop MainPID), scaling $(api /config | field scaling), restarts $restarts0 -> $(prop NRestarts), $(health)"

# ---- 4. the watchdog: a player loop that hangs gets the service killed and restarted
at watchdog
cat > $dropins/20-hang.conf <<'EOF'
[Service]
Environment=SCANOUT_FAULTS=hang-loop@30
WatchdogSec=6
EOF
systemctl daemon-reload
systemctl restart $unit
r=$(prop NRestarts)
for i in $(seq 120); do (($(prop NRestarts) > r)) && break; sleep 1; done
echo "watchdog: restarts $r -> $(prop NRestarts) in ${i} s"
echo "watchdog-journal: $(journalctl -u $unit -b --no-pager -o cat | grep -m1 -i 'watchdog timeout')"
echo "watchdog-kill: $(journalctl -u $unit -b --no-pager -o cat | sed -n '/Watchdog timeout/,/Scheduled restart job/p' | grep -v '^<\|^ \|^scanout:' | tail -n +2 | head -n 3 | paste -sd '|')"
# what the process itself printed between SIGABRT and its end (Swift's crash handler, if anything)
echo "watchdog-abort: $(journalctl -u $unit -b --no-pager -o cat | sed -n '/with signal SIGABRT/,/Scheduled restart job/p' | grep -m2 -e 'Signal 6' -e 'Program crashed' -e 'Backtrac' | paste -sd '|')"
echo "watchdog-fault: $(journalctl -u $unit -b --no-pager -o cat | grep -c 'hang-loop@30: the player loop stops here') hangs logged"
rm $dropins/20-hang.conf
systemctl daemon-reload
systemctl restart $unit
wait_playing 60; echo "after-watchdog: $(health), watchdog $(prop WatchdogUSec)"

# ---- 5. SIGKILL: Restart=always brings it back
at sigkill
pid=$(prop MainPID); r=$(prop NRestarts)
systemctl kill -s KILL $unit
for i in $(seq 60); do p=$(prop MainPID); [[ $p != 0 && $p != "$pid" && $(prop ActiveState) == active ]] && break; sleep 1; done
wait_playing 60
echo "sigkill-journal: $(journalctl -u $unit -b --no-pager -o cat | grep -m1 'status=9/KILL')"
echo "sigkill: pid $pid -> $(prop MainPID), restarts $r -> $(prop NRestarts), result $(journalctl -u $unit -b --no-pager -o cat | grep -c 'status=9/KILL') killed, $(health) after ${i} s"

# ---- 6. disk full while capturing: a 1 MiB tmpfs for the writeback captures
at capture
mkdir -p /srv/capture
mount -t tmpfs -o size=1m,mode=0755 capture /srv/capture
chown scanout:scanout /srv/capture
cat > $dropins/30-capture.conf <<'EOF'
[Service]
ReadWritePaths=/srv/capture
EOF
sed -i 's|"output": "kms",|"output": "kms", "capture": "/srv/capture",|' /etc/scanout/scanout.json
systemctl daemon-reload
systemctl restart $unit; echo "capture-start: $?"
pid=$(prop MainPID); r=$(prop NRestarts)
for i in $(seq 120); do journalctl -u $unit -b --no-pager -o cat | grep -q 'capture stopped' && break; sleep 1; done
c1=$(ls /srv/capture | wc -l); f1=$(presented); sleep 5; c2=$(ls /srv/capture | wc -l); f2=$(presented)
echo "capture-full: $(df --output=avail -k /srv/capture | tail -1 | tr -d ' ') KiB free, captures $c1 -> $c2, frames $f1 -> $f2"
echo "capture-report: $(journalctl -u $unit -b --no-pager -o cat | grep -c 'capture stopped') logged: $(journalctl -u $unit -b --no-pager -o cat | grep -m1 'capture stopped')"
echo "capture-service: pid $pid -> $(prop MainPID), restarts $r -> $(prop NRestarts), $(health)"

at stop
systemctl stop $unit; echo "stop: $? $(prop Result)"
at end
echo "boot: $(systemd-analyze time --no-pager 2>&1 | head -n1)"
