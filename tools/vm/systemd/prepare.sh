#!/bin/busybox sh
# Run by the guest's /init (busybox sh, before it hands PID 1 to systemd) on the guest root $1:
# installs the units that run the command, with its stdout/stderr on the virtio-serial ports
# $2/$3, and masks what makes no sense in a guest that lives for one command (generators reading
# the host's fstab, getty, timers, network waits, persistent journal, ...). All of it lands in the
# overlay's tmpfs and vanishes with the VM. Busybox applets only: a host binary would be loaded
# over 9p, which costs seconds under TCG.
set -eu
R=$1
here=$(dirname "$0")
units=$R/etc/systemd/system
cp "$here/scanout-vm.target" "$here/scanout-vm-command.service" "$units/"
mkdir -p "$units/scanout-vm-command.service.d"
printf '[Service]\nStandardOutput=file:%s\nStandardError=file:%s\n' "$2" "$3" \
  > "$units/scanout-vm-command.service.d/ports.conf"

# No generator: the host's fstab, init.d scripts, getty on the console, ... are not the guest's.
mkdir -p "$R/etc/systemd/system-generators"
for g in "$R"/lib/systemd/system-generators/*; do
  ln -sf /dev/null "$R/etc/systemd/system-generators/${g##*/}"
done
# Units of sysinit.target and basic.target that only cost boot time here: the guest has no
# persistent state, no hardware to set up beyond what /init loaded, no network, no console login.
for u in \
  systemd-timesyncd.service systemd-pstore.service systemd-random-seed.service \
  systemd-journal-flush.service systemd-machine-id-commit.service systemd-firstboot.service \
  systemd-repart.service systemd-pcrphase.service systemd-pcrphase-sysinit.service \
  systemd-binfmt.service proc-sys-fs-binfmt_misc.automount systemd-sysctl.service \
  systemd-modules-load.service kmod-static-nodes.service systemd-sysusers.service \
  systemd-tmpfiles-setup.service systemd-tmpfiles-setup-dev.service systemd-tmpfiles-clean.timer \
  systemd-update-utmp.service systemd-remount-fs.service systemd-ask-password-console.path \
  dev-hugepages.mount dev-mqueue.mount sys-fs-fuse-connections.mount sys-kernel-config.mount \
  sys-kernel-debug.mount sys-kernel-tracing.mount \
  timers.target getty.target network-online.target systemd-networkd-wait-online.service \
  networking.service; do
  ln -sf /dev/null "$units/$u"
done
# The journal stays in /run (read with journalctl during the command, then lost).
mkdir -p "$R/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=volatile\n' > "$R/etc/systemd/journald.conf.d/scanout-vm.conf"
# The host root may come from a container image: its marker would make systemd think it runs in
# a container (no autofs, other defaults). The guest is a virtual machine.
rm -f "$R/.dockerenv" "$R/run/.containerenv"
