#!/usr/bin/env bash
# Runs COMMAND (with bash) inside the Scanout test VM: Debian's 6.1 kernel under QEMU TCG with the
# real vkms driver loaded (writeback enabled), the host's root filesystem mounted read-only over 9p
# under a tmpfs overlay (so the guest sees the same files and tools, and may write, but its writes
# vanish), in the caller's working directory. Prints the command's stdout on stdout and its stderr
# on stderr, and exits with its exit status.
#
#   tools/vm/run.sh 'modetest -M vkms -c'
#
# Environment:
#   SCANOUT_VM_TIMEOUT  seconds before QEMU is killed (default 300); exit status 124 then
#   SCANOUT_VM_OUT      host directory shared WRITABLE with the guest at the same path; the command
#                       finds it in $OUT. Unset: $OUT is a scratch directory that is thrown away.
#   SCANOUT_VM_ENV      names of extra variables to pass into the guest (space-separated);
#                       PATH, HOME, LANG, LC_ALL, USER and TERM always pass
#   SCANOUT_VM_MEM      guest memory (default 1G)
#   SCANOUT_VM_CPUS     guest CPUs (default 1; more run as threads of their own: multi-threaded TCG)
#   SCANOUT_VM_CACHE    the cache setup.sh built (default /var/cache/scanout-vm)
#   SCANOUT_VM_VERBOSE  1: print the guest console (kernel + init messages) on stderr afterwards
#   SCANOUT_VM_INIT     busybox (default): the initramfs's /init runs the command itself;
#                       systemd: the guest root's systemd becomes PID 1 and runs the command as a
#                       unit (tools/vm/systemd/), so the command can start and inspect services
# Exit status: the command's; 124 on timeout; 125 when the VM failed before reporting a status
# (the console log is printed on stderr).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${SCANOUT_VM_CACHE:-/var/cache/scanout-vm}
TIMEOUT=${SCANOUT_VM_TIMEOUT:-300}
MEM=${SCANOUT_VM_MEM:-1G}
CPUS=${SCANOUT_VM_CPUS:-1}
INIT=${SCANOUT_VM_INIT:-busybox}
case $INIT in
  busybox) APPEND= ;;
  systemd) APPEND=" scanout.init=systemd" ;;
  *) echo "vm-run: SCANOUT_VM_INIT must be busybox or systemd (got '$INIT')" >&2; exit 2 ;;
esac

(($# == 1)) || { echo "usage: $0 'COMMAND'" >&2; exit 2; }
COMMAND=$1

"$HERE/setup.sh"   # quick when the cache is current; builds it otherwise

CTL=$(mktemp -d "${TMPDIR:-/tmp}/scanout-vm.XXXXXX")
trap 'rm -rf "$CTL"' EXIT
if [[ -n ${SCANOUT_VM_OUT:-} ]]; then
  mkdir -p "$SCANOUT_VM_OUT"
  OUT_HOST=$(cd "$SCANOUT_VM_OUT" && pwd -P)
else
  mkdir "$CTL/out"
  OUT_HOST=$CTL/out
fi
# The guest mounts the out share at the host's path, so paths printed or written there agree.
echo "$OUT_HOST" > "$CTL/out_path"
# systemd mode: the units and scripts the guest's /init installs before it hands over PID 1
if [[ $INIT == systemd ]]; then cp -r "$HERE/systemd" "$CTL/systemd"; fi

# The script the guest runs (bash, via chroot into the guest root). Values are %q-quoted here on the
# host so any COMMAND, working directory or variable value survives intact.
{
  echo 'set -e'
  for v in PATH HOME LANG LC_ALL USER TERM ${SCANOUT_VM_ENV:-}; do
    [[ -n ${!v+set} ]] && printf 'export %s=%q\n' "$v" "${!v}"
  done
  printf 'export OUT=%q SCANOUT_IN_VM=1\n' "$OUT_HOST"
  printf 'cd -- %q\n' "$PWD"
  echo 'set +e'
  printf 'exec /bin/bash -c %q\n' "$COMMAND"
} > "$CTL/cmd.sh"

# -nodefaults/-display none: no VGA, NIC or monitor; the serial console (kernel + init messages) goes
#   to a file. The command's stdout/stderr come through two named virtio-serial ports into files in
#   $CTL, which `tail --pid` streams to our stdout/stderr as they grow. (QEMU reopening /dev/stdout
#   itself would get a file offset of its own and overwrite a caller's `>file`.)
# -kernel vmlinux: the uncompressed ELF (PVH entry); decompressing the xz bzImage under TCG costs ~2 s.
# -cpu max: TCG's richest CPU model, so host-built binaries find the instruction sets they expect.
# panic=-1 + -no-reboot: any guest panic ends QEMU at once instead of hanging.
# multidevs=remap: the host root spans several filesystems; keeps 9p inode numbers unique.
: > "$CTL/stdout"; : > "$CTL/stderr"
timeout -k 10 "$TIMEOUT" qemu-system-x86_64 \
  -nodefaults -display none -no-reboot \
  -machine pc,accel=tcg -cpu max -smp "$CPUS" -m "$MEM" \
  -kernel "$CACHE/vmlinux" -initrd "$CACHE/initramfs.cpio.gz" \
  -append "console=ttyS0 panic=-1 loglevel=${SCANOUT_VM_LOGLEVEL:-4}$APPEND" \
  -serial "file:$CTL/console.log" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs "local,path=$CTL,mount_tag=scanout_ctl,security_model=none" \
  -virtfs "local,path=$OUT_HOST,mount_tag=scanout_out,security_model=none" \
  -device virtio-serial-pci \
  -chardev "file,id=cmd_stdout,path=$CTL/stdout" \
  -device virtserialport,chardev=cmd_stdout,name=scanout.stdout \
  -chardev "file,id=cmd_stderr,path=$CTL/stderr" \
  -device virtserialport,chardev=cmd_stderr,name=scanout.stderr \
  < /dev/null &
qemu_pid=$!
# -c +1: from the first byte; --pid: exit once QEMU (its timeout wrapper) is gone and all is read
tail -c +1 -f --pid="$qemu_pid" "$CTL/stdout" &
tail_out=$!
tail -c +1 -f --pid="$qemu_pid" "$CTL/stderr" >&2 &
tail_err=$!
status=0
wait "$qemu_pid" || status=$?
wait "$tail_out" "$tail_err" || true

if [[ ${SCANOUT_VM_VERBOSE:-0} == 1 ]]; then
  echo "---- guest console ----" >&2; cat "$CTL/console.log" >&2; echo "----" >&2
fi
if ((status == 124 || status == 137)); then
  echo "vm-run: timed out after ${TIMEOUT}s (SCANOUT_VM_TIMEOUT); guest console tail:" >&2
  tail -n 30 "$CTL/console.log" >&2 || true
  exit 124
fi
if [[ ! -s $CTL/status ]]; then
  echo "vm-run: the guest reported no exit status (qemu exit $status); guest console tail:" >&2
  tail -n 30 "$CTL/console.log" >&2 || true
  exit 125
fi
exit "$(cat "$CTL/status")"
