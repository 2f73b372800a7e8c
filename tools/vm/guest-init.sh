#!/bin/busybox sh
# /init of the Scanout test VM's initramfs (copied there by setup.sh; busybox sh, not bash).
# Loads the modules, builds the guest root (host root over 9p, read-only, under a tmpfs overlay),
# runs the command that run.sh left in the control share, records its exit status there, and
# powers off. Its own messages go to the serial console, which run.sh keeps in console.log.
# With `scanout.init=systemd` on the kernel command line (run.sh, SCANOUT_VM_INIT=systemd), it
# hands PID 1 to the guest root's systemd instead, which runs the command as a unit (see
# tools/vm/systemd/).
/bin/busybox --install -s /bin
export PATH=/bin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

say() { echo "scanout-vm: $*"; }
die() { say "FATAL: $*"; poweroff -f; }

# modules.list: "file.ko [params]" lines, dependencies first (see setup.sh)
while read -r ko params; do
  # shellcheck disable=SC2086 # params are separate words on purpose
  insmod "/lib/modules/$ko" $params || die "insmod $ko failed"
done < /modules.list

NINEP="trans=virtio,version=9p2000.L,msize=512000"
mkdir -p /lower /rw /newroot
# cache=loose: the host root does not change under a run, and it makes lookups much cheaper
mount -t 9p -o "$NINEP,ro,cache=loose" hostroot /lower || die "mounting the host root failed"
mount -t tmpfs -o mode=0755 rw /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot \
  || die "overlay over the host root failed"

R=/newroot
mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs devtmpfs $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts devpts $R/dev/pts
mount -t tmpfs -o mode=1777 shm $R/dev/shm
mount -t debugfs debugfs $R/sys/kernel/debug 2>/dev/null || true
# /tmp, /run, /var stay on the overlay: the guest sees the host's files there too (a caller may
# work under /tmp), and its writes land in the tmpfs upper layer.
CTL=$R/run/scanout/ctl
INIT=busybox
case " $(cat /proc/cmdline) " in *" scanout.init=systemd "*) INIT=systemd ;; esac
if [ $INIT = systemd ]; then
  # systemd wants /run a tmpfs of its own (it keeps one it finds mounted), and the control share
  # outside /run/scanout, which a unit's RuntimeDirectory=scanout creates and removes.
  mount -t tmpfs -o mode=0755,nosuid,nodev run $R/run
  CTL=$R/run/scanout-vm
fi
mkdir -p $CTL
mount -t 9p -o "$NINEP" scanout_ctl $CTL || die "mounting the control share failed"

# The writable $OUT share: mounted at the same absolute path the host uses (see run.sh).
OUT_PATH=$(cat $CTL/out_path)
mkdir -p "$R$OUT_PATH"
mount -t 9p -o "$NINEP" scanout_out "$R$OUT_PATH" || die "mounting the out share failed"

# stdout/stderr: virtio-serial ports (not ttys: no CR/LF translation, isatty() is false as in CI),
# found by the names run.sh gave them.
STDOUT=/dev/null STDERR=/dev/null
for p in /sys/class/virtio-ports/*; do
  case "$(cat "$p/name")" in
    scanout.stdout) STDOUT=/dev/${p##*/} ;;
    scanout.stderr) STDERR=/dev/${p##*/} ;;
  esac
done
[ "$STDOUT" != /dev/null ] || say "no stdout port; the command's output is lost"

[ -e /dev/dri/card0 ] || say "warning: /dev/dri/card0 is missing (vkms did not bind?)"
[ -e /proc/asound/Loopback ] || say "warning: no ALSA Loopback card (snd-aloop did not load?)"

if [ $INIT = systemd ]; then
  # prepare.sh (from the control share) writes the units that run the command, masks what makes
  # no sense in the guest; then systemd becomes PID 1 in the overlay root.
  sh $CTL/systemd/prepare.sh $R "$STDOUT" "$STDERR" || die "preparing systemd failed"
  say "handing PID 1 to systemd"
  umount /proc /sys
  umount /dev
  exec switch_root $R /lib/systemd/systemd --unit=scanout-vm.target
fi

say "running the command"
chroot $R /bin/bash /run/scanout/ctl/cmd.sh < /dev/null > "$STDOUT" 2> "$STDERR"
echo $? > $CTL/status
sync
say "command exited with $(cat $CTL/status); powering off"
poweroff -f
