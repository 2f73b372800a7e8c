#!/usr/bin/env bash
# Prepares the Scanout test VM: installs the host packages (QEMU, busybox, the tools the guest
# borrows from the host's root filesystem) and builds, once, into a cache directory:
#   vmlinuz, vmlinux Debian's 6.1 kernel (from linux-image-<abi>-amd64, extracted, never installed),
#                    and the uncompressed ELF inside it, which run.sh boots
#   initramfs.cpio.gz busybox + the guest /init (guest-init.sh) + the modules it insmods, in order:
#                    virtio/9p/overlay/virtio-serial, the DRM helpers, vkms.ko, and snd-aloop
#   vkms.ko          built out of tree from linux-source-6.1 against linux-headers-<abi>-amd64 of
#                    the SAME package version (Debian's kernel is built without vkms), patched by
#                    vkms-possible-clones.patch so writeback can clone the screen
#   stamp            written last; when it matches this script's inputs, setup does nothing more
#                    than check the host packages (well under a second)
# Cache: $SCANOUT_VM_CACHE, default /var/cache/scanout-vm. Kernel package version: the candidate of
# linux-image-amd64 unless SCANOUT_VM_KERNEL_VERSION names one (e.g. 6.1.192-2). Needs root (or sudo).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${SCANOUT_VM_CACHE:-/var/cache/scanout-vm}
SUDO=; [[ $(id -u) == 0 ]] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive

log() { echo "vm-setup: $*" >&2; }

# Installs the named packages that are not installed yet (apt runs only when something is missing).
apt_ensure() {
  local missing=() p name
  for p in "$@"; do
    name=${p%%=*}   # "pkg=version" → check pkg; a pinned version is checked below by the caller
    dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  log "installing ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# What run.sh and the tests need on the host at run time. The guest sees the host's root filesystem,
# so anything installed here (modetest from libdrm-tests, bash, the project's tools) exists in it too.
RUNTIME_PKGS=(qemu-system-x86 busybox-static libdrm-tests python3 coreutils)   # python3: selftest.sh
apt_ensure "${RUNTIME_PKGS[@]}"

# The stamp covers everything that shapes the cache: this script, the guest init, the vkms patch.
INPUTS_HASH=$(cat "$HERE/setup.sh" "$HERE/guest-init.sh" "$HERE/vkms-possible-clones.patch" \
  | sha256sum | cut -d' ' -f1)
if [[ -f $CACHE/stamp && $(head -n1 "$CACHE/stamp") == "$INPUTS_HASH" \
      && -f $CACHE/vmlinux && -f $CACHE/initramfs.cpio.gz ]]; then
  exit 0
fi

START=$SECONDS
# ---- pick one kernel package version that image, headers and source all offer -------------------
if [[ -z ${SCANOUT_VM_KERNEL_VERSION:-} ]]; then
  $SUDO apt-get update -qq
  SCANOUT_VM_KERNEL_VERSION=$(apt-cache policy linux-image-amd64 | awk '/Candidate:/{print $2}')
fi
VER=$SCANOUT_VM_KERNEL_VERSION
# linux-image-amd64 (= VER) depends on linux-image-<abi>-amd64 (= VER): that names the ABI.
ABI=$(apt-cache show "linux-image-amd64=$VER" \
  | sed -n 's/^Depends: .*linux-image-\([0-9.]*-[0-9]*\)-amd64 .*/\1/p' | head -n1)
[[ -n $ABI ]] || { log "cannot resolve the kernel ABI of linux-image-amd64=$VER"; exit 1; }
KVER=$ABI-amd64
apt-cache madison linux-source-6.1 | awk '{print $3}' | grep -qx "$VER" \
  || { log "linux-source-6.1=$VER is not offered by apt; set SCANOUT_VM_KERNEL_VERSION"; exit 1; }
log "kernel $KVER (package version $VER)"

# Build tools and the matching headers and source. Pinned with =VER so a newer source or headers
# can never be paired with this image (vkms.ko's vermagic must match the guest kernel exactly).
apt_ensure build-essential bc flex bison libelf-dev kmod cpio gzip xz-utils zstd patch \
  "linux-headers-$KVER=$VER" "linux-source-6.1=$VER"
for p in "linux-headers-$KVER" linux-source-6.1; do
  have=$(dpkg-query -W -f='${Version}' "$p")
  if [[ $have != "$VER" ]]; then
    log "$p $have installed, want $VER: installing $VER"
    $SUDO apt-get install -y -qq --no-install-recommends --allow-downgrades "$p=$VER" >/dev/null
  fi
done

# ---- build in a scratch directory, then move the results into place ------------------------------
$SUDO mkdir -p "$CACHE"
[[ -w $CACHE ]] || $SUDO chown "$(id -u):$(id -g)" "$CACHE"
WORK=$CACHE/build.tmp
rm -rf "$WORK"; mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT

# The kernel image package: downloaded and unpacked, not installed (it is the guest's kernel, not the
# host's; installing it would run initramfs/bootloader hooks for nothing).
( cd "$WORK" && apt-get download -qq -o APT::Sandbox::User=root "linux-image-$KVER=$VER" )
dpkg-deb -x "$WORK"/linux-image-"$KVER"_*.deb "$WORK/image"
MODROOT=$WORK/image/lib/modules/$KVER

# vkms, out of tree: the driver directory of linux-source-6.1, patched, with a Kbuild of its own.
tar -xaf /usr/src/linux-source-6.1.tar.xz -C "$WORK" --wildcards 'linux-source-6.1/drivers/gpu/drm/vkms/*'
VKMS=$WORK/vkms
mv "$WORK/linux-source-6.1/drivers/gpu/drm/vkms" "$VKMS"
patch -d "$VKMS" -p1 -s < "$HERE/vkms-possible-clones.patch"
{
  echo 'obj-m := vkms.o'
  # vkms-y (the object list) exactly as the in-tree Makefile has it
  sed -n '/^vkms-y/,/^$/p' "$VKMS/Makefile"
} > "$VKMS/Kbuild"
rm "$VKMS/Makefile"
make -s -C "/usr/src/linux-headers-$KVER" M="$VKMS" -j"$(nproc)" modules >&2
VERMAGIC=$(modinfo -F vermagic "$VKMS/vkms.ko")
KVERMAGIC=$(modinfo -F vermagic "$MODROOT/kernel/drivers/gpu/drm/drm.ko")
[[ $VERMAGIC == "$KVERMAGIC" ]] || { log "vermagic mismatch: vkms '$VERMAGIC' vs kernel '$KVERMAGIC'"; exit 1; }
mkdir -p "$MODROOT/extra"
cp "$VKMS/vkms.ko" "$MODROOT/extra/"
depmod -b "$WORK/image" "$KVER"

# The modules the guest loads, each after its dependencies (modprobe resolves them from modules.dep;
# "builtin" lines mean nothing to load).
#   virtio_pci          the PCI transport for every virtio device below
#   9pnet_virtio, 9p    the host root filesystem and the writable shares (virtio-9p)
#   overlay             a writable tmpfs layer over the read-only host root
#   virtio_console      virtio-serial ports carrying the command's stdout and stderr to the host
#   vkms                the driver under test (pulls drm, drm_kms_helper, drm_shmem_helper, ...)
#   snd-aloop           ALSA's loopback card (pulls soundcore, snd, snd-timer, snd-pcm): what is
#                       played on hw:Loopback,0,0 is captured on hw:Loopback,1,0 (lip sync)
#   vivid               the V4L2 test driver, for its emulated CEC bus (pulls cec, videodev,
#                       videobuf2...): an HDMI input that acts as the TV and an HDMI output that
#                       the player sends from (HDMI-CEC standby and wake, test-cec.sh)
INITRD=$WORK/initramfs
mkdir -p "$INITRD"/{bin,dev,proc,sys,lib/modules}
: > "$INITRD/modules.list"
for m in virtio_pci 9pnet_virtio 9p overlay virtio_console vkms snd-aloop vivid; do
  modprobe -d "$WORK/image" -S "$KVER" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
  cp "$ko" "$INITRD/lib/modules/"   # modprobe -d prints the path including the -d base
  name=$(basename "$ko")
  # vkms: keep the writeback connector (the 6.1 default, but say so) and the cursor plane
  [[ $name == vkms.ko ]] && name="$name enable_writeback=1 enable_cursor=1"
  echo "$name" >> "$INITRD/modules.list"
done
log "guest modules: $(cut -d' ' -f1 "$INITRD/modules.list" | tr '\n' ' ')"

cp /bin/busybox "$INITRD/bin/busybox"   # busybox-static: no libraries needed in the initramfs
install -m 0755 "$HERE/guest-init.sh" "$INITRD/init"
( cd "$INITRD" && find . -print0 | cpio --null -o -H newc --quiet ) | gzip -9 > "$WORK/initramfs.cpio.gz"

# run.sh boots the uncompressed ELF vmlinux (PVH entry): decompressing Debian's xz bzImage under TCG
# costs seconds on every boot. Its payload is the xz stream that starts at the first xz magic.
VMLINUZ=$WORK/image/boot/vmlinuz-$KVER
XZ_AT=$(LC_ALL=C grep -aobP '\xfd7zXZ\x00' "$VMLINUZ" | awk -F: 'NR == 1 {print $1}')
[[ -n $XZ_AT ]] || { log "no xz payload in $VMLINUZ"; exit 1; }
# (via a file, not a pipe: xz stops reading after the stream and pipefail would see tail's SIGPIPE)
tail -c +$((XZ_AT + 1)) "$VMLINUZ" > "$WORK/vmlinux.xz"
xz -dc --single-stream "$WORK/vmlinux.xz" > "$WORK/vmlinux"
[[ $(head -c 4 "$WORK/vmlinux" | od -An -tx1 | tr -d ' ') == 7f454c46 ]] \
  || { log "the vmlinux extracted from $VMLINUZ is not ELF"; exit 1; }
cp "$VMLINUZ" "$CACHE/vmlinuz"
mv "$WORK/vmlinux" "$CACHE/vmlinux"
cp "$VKMS/vkms.ko" "$CACHE/vkms.ko"
mv "$WORK/initramfs.cpio.gz" "$CACHE/initramfs.cpio.gz"
printf '%s\nkernel=%s\npackage_version=%s\nbuilt=%s\n' "$INPUTS_HASH" "$KVER" "$VER" "$(date -u +%FT%TZ)" \
  > "$CACHE/stamp"
log "built $CACHE in $((SECONDS - START)) s"
