#!/usr/bin/env bash
# Installs the package on a fresh Debian 12 root and checks that the service answers /health.
# Meant for ../shared/tools/fresh/fresh-run.sh (run as root inside that root), e.g.
#
#   ../shared/tools/fresh/fresh-run.sh -r "$PWD/out/deb" -r "$PWD/.fixtures" \
#       -e DEB="$PWD/out/deb/scanout_0.14.0_amd64.deb" -e CLIP="$PWD/.fixtures/counter.mp4" \
#       "$PWD" 'bash tools/check-deb-fresh.sh'
#
# DEB: the package; CLIP: a video copied to the example config's first item. The Swift toolchain
# that fresh-run binds in is unmounted first, so nothing of Swift is there.
set -uo pipefail
umount /opt/swift /opt/swift-packages 2>/dev/null
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive
deb=$(basename "$DEB")
echo '$ command -v swift'; command -v swift || echo '(none)'; ls /opt/swift 2>/dev/null | head -1
cd "$(dirname "$DEB")"
echo "$ apt install ./$deb"
apt-get update -qq && apt install -y ./"$deb" 2>&1 | grep -E '^(Setting up scanout|Unpacking scanout|[0-9]+ upgraded)|^Note|^E:'
echo '$ ldd /usr/bin/scanout | grep -c libswift'; ldd /usr/bin/scanout | grep -c libswift
echo '$ id scanout'; id scanout
echo '$ cat /var/lib/dpkg/info/scanout.conffiles'; cat /var/lib/dpkg/info/scanout.conffiles
echo '$ systemctl is-enabled scanout'; systemctl is-enabled scanout
echo '$ systemd-analyze security --offline=true /lib/systemd/system/scanout.service | tail -1'
systemd-analyze security --offline=true /lib/systemd/system/scanout.service | tail -1
echo '$ ls /usr/share/man/man1 | grep -c scanout; bash completion'; ls /usr/share/man/man1 | grep -c scanout
bash -c '. /usr/share/bash-completion/completions/scanout; complete -p scanout'
mkdir -p /srv/signage && cp "$CLIP" /srv/signage/welcome.mp4
install -d -o scanout -g scanout /run/scanout
echo '$ setpriv --reuid scanout --regid scanout --init-groups scanout serve --config /etc/scanout/scanout.json --output headless --port 18480 &'
setpriv --reuid scanout --regid scanout --init-groups scanout serve --config /etc/scanout/scanout.json --output headless --port 18480 >/tmp/serve.log 2>&1 &
for i in $(seq 100); do curl -sf localhost:18480/version >/dev/null && break; sleep 0.2; done
sleep 1
echo '$ curl -s localhost:18480/health'
code=$(curl -s -o /tmp/health -w '%{http_code}' localhost:18480/health); echo "$(cat /tmp/health)  HTTP $code"
echo '$ curl -s --unix-socket /run/scanout/scanout.sock http://localhost/version'; curl -s --unix-socket /run/scanout/scanout.sock http://localhost/version; echo
kill -TERM $!; wait $!; echo "exit status $?"
echo '$ cat serve.log (stderr)'; cat /tmp/serve.log
[[ $code == 200 ]]
