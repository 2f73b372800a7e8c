#!/usr/bin/env bash
# Builds the Debian package a kiosk installs with `apt install ./scanout_VERSION_amd64.deb`:
#
#   /usr/bin/scanout                          release build, the Swift runtime linked in (no libswift*)
#   /lib/systemd/system/scanout.service       dist/scanout.service (Type=notify, watchdog, hardened)
#   /etc/scanout/scanout.json                 dist/scanout.example.json, a conffile (edits survive upgrades)
#   /usr/share/man/man1/scanout*.1.gz         tools/man.sh
#   bash, zsh and fish completions            scanout --generate-completion-script
#   postinst: the `scanout` system user, in the video and render groups; the unit enabled
#
# Depends: the packages owning the libraries `ldd` lists for the binary (dpkg -S), at least at the
# versions installed here. Recommends: what is loaded with dlopen and so invisible to ldd (Mesa's
# EGL/GBM drivers for the GL renderer and KMS, VA-API drivers).
#
#   tools/package-deb.sh [OUTDIR]        (default out/deb; prints the .deb's path)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/deb}
version=$(sed -n 's/.*static let string = "\(.*\)".*/\1/p' Sources/ScanoutService/Version.swift)
arch=$(dpkg --print-architecture)
[[ -n $version ]] || { echo "package-deb: no version in Sources/ScanoutService/Version.swift" >&2; exit 1; }

echo "package-deb: release build with the Swift runtime linked in" >&2
swift build -c release --static-swift-stdlib --product scanout >&2
bin=$(swift build -c release --show-bin-path)/scanout
if ldd "$bin" | grep -q 'libswift\|libFoundation\|libdispatch'; then
  echo "package-deb: $bin still links the Swift runtime dynamically:" >&2
  ldd "$bin" | grep 'libswift\|libFoundation\|libdispatch' >&2
  exit 1
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
install -D -m 0755 "$bin" "$root/usr/bin/scanout"
strip --strip-unneeded "$root/usr/bin/scanout"
install -D -m 0644 dist/scanout.service "$root/lib/systemd/system/scanout.service"
install -D -m 0644 dist/scanout.example.json "$root/etc/scanout/scanout.json"
install -D -m 0644 README.md "$root/usr/share/doc/scanout/README.md"
install -D -m 0644 docs/PACKAGING.md "$root/usr/share/doc/scanout/PACKAGING.md"
# The README's links lead into docs/: the guides go with it, at the same relative paths.
for doc in docs/*.md; do install -D -m 0644 "$doc" "$root/usr/share/doc/scanout/$doc"; done

mandir=$(mktemp -d)
tools/man.sh "$mandir" >/dev/null
install -d "$root/usr/share/man/man1"
for page in "$mandir"/*.1; do gzip -9n <"$page" >"$root/usr/share/man/man1/$(basename "$page").gz"; done
rm -rf "$mandir"

install -d "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
           "$root/usr/share/fish/vendor_completions.d"
"$bin" --generate-completion-script bash >"$root/usr/share/bash-completion/completions/scanout"
"$bin" --generate-completion-script zsh >"$root/usr/share/zsh/vendor-completions/_scanout"
"$bin" --generate-completion-script fish >"$root/usr/share/fish/vendor_completions.d/scanout.fish"

# Depends, from what the dynamic linker loads for the binary's own NEEDED entries (their own
# dependencies come with their packages): library path (ldd) → owning package (dpkg -S knows the
# path as packaged, /lib or /usr/lib, so both spellings are asked) → "package (>= upstream version)".
deps=()
while read -r lib; do
  pkg=
  for p in "$lib" "$(realpath "$lib")" "${lib#/usr}" "/usr${lib#/usr}"; do
    pkg=$(dpkg -S "$p" 2>/dev/null | head -1 | cut -d: -f1) && [[ -n $pkg ]] && break
  done
  [[ -n $pkg ]] || { echo "package-deb: no package owns $lib" >&2; exit 1; }
  deps+=("$pkg")
done < <(ldd "$bin" | awk -v needed="$(objdump -p "$bin" | awk '/NEEDED/ {print $2}' | paste -sd' ' -)" '
           BEGIN { n = split(needed, a, " "); for (i = 1; i <= n; i++) direct[a[i]] = 1 }
           $2 == "=>" && ($1 in direct) && $3 ~ /^\// { print $3 }')
depends=$(for p in $(printf '%s\n' "${deps[@]}" | sort -u); do
  v=$(dpkg-query -W -f='${Version}' "$p"); echo "$p (>= ${v%-*})"
done | paste -sd, - | sed 's/,/, /g')
depends="$depends, adduser"

installed=$(du -sk "$root" | cut -f1)
install -d "$root/DEBIAN"
cat >"$root/DEBIAN/control" <<EOF
Package: scanout
Version: $version
Architecture: $arch
Maintainer: Scanout <scanout@localhost>
Installed-Size: $installed
Depends: $depends
Recommends: libegl-mesa0, libgl1-mesa-dri, mesa-va-drivers
Section: video
Priority: optional
Description: video playback pipeline and kiosk player service
 Scanout decodes (FFmpeg, VA-API), renders (GLES or CPU) and shows video on a
 KMS screen or headless. "scanout serve" is a kiosk player with an HTTP/JSON
 control API, event stream and Prometheus metrics, run by systemd
 (scanout.service: Type=notify, watchdog, reload, hardened).
EOF
echo /etc/scanout/scanout.json >"$root/DEBIAN/conffiles"

cat >"$root/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    # The render group is made by udev/systemd on most systems; a minimal one may lack it.
    getent group render >/dev/null || addgroup --system render >/dev/null
    if ! getent passwd scanout >/dev/null; then
        adduser --system --group --no-create-home --home /nonexistent --shell /usr/sbin/nologin scanout >/dev/null
    fi
    adduser scanout video >/dev/null
    adduser scanout render >/dev/null
    if command -v systemctl >/dev/null; then systemctl enable scanout.service >/dev/null 2>&1 || true; fi
    if [ -d /run/systemd/system ]; then
        systemctl daemon-reload
        systemctl restart scanout.service || echo "scanout: the service did not start; see journalctl -u scanout" >&2
    fi
fi
EOF
cat >"$root/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then systemctl stop scanout.service || true; fi
EOF
cat >"$root/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = remove ] && command -v systemctl >/dev/null; then systemctl disable scanout.service >/dev/null 2>&1 || true; fi
# The playlist position (StateDirectory=scanout) goes with a purge only.
if [ "$1" = purge ]; then rm -rf /var/lib/scanout; fi
if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
EOF
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"

mkdir -p "$out"
deb="$out/scanout_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zgzip --build "$root" "$deb" >&2
echo "package-deb: Depends: $depends" >&2
echo "$deb"
