#!/usr/bin/env bash
# Proves the test VM works: boots it (tools/vm/run.sh) and checks, inside the guest, that vkms is
# loaded with /dev/dri/card0, that modetest sees its Virtual connector, that the Writeback connector
# exists (sysfs, and through libdrm for a client that asks for writeback connectors: plain modetest
# never sets DRM_CLIENT_CAP_WRITEBACK_CONNECTORS, so it cannot list it), and that the screen and
# writeback encoders may clone each other (the vkms-possible-clones.patch). Exits non-zero otherwise.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# The guest side, run by bash in the guest. Quoted heredoc: nothing expands on the host.
read -r -d '' GUEST <<'EOF' || true
set -u
fail=0
check() { if eval "$2" >/dev/null 2>&1; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

echo "# kernel $(uname -r), vkms params: writeback=$(cat /sys/module/vkms/parameters/enable_writeback 2>/dev/null)"
check "vkms module loaded"               'test -d /sys/module/vkms'
check "/dev/dri/card0 exists"            'test -c /dev/dri/card0'
check "writeback enabled"                'grep -qx Y /sys/module/vkms/parameters/enable_writeback'
check "sysfs card0-Writeback-1"          'test -d /sys/class/drm/card0-Writeback-1'

echo "# modetest -M vkms -c (connectors, modes elided)"
modetest -M vkms -c | awk '/^id\tencoder/ || /^[0-9]+\t/'
check "modetest: Virtual connector connected" 'modetest -M vkms -c | grep -qE "^[0-9]+\s+[0-9]+\s+connected\s+Virtual-1"'

echo "# modetest -M vkms -e (encoders)"
modetest -M vkms -e | sed '/^$/d'
check "modetest: two encoders, possible clones 0x3" \
  '[ "$(modetest -M vkms -e | grep -cE "^[0-9]+\s+[0-9]+\s+Virtual\s+0x00000001\s+0x00000003")" = 2 ]'

echo "# connectors seen by a libdrm client with DRM_CLIENT_CAP_WRITEBACK_CONNECTORS"
python3 - > /tmp/conns.txt <<'PY'
import ctypes, os
drm = ctypes.CDLL("libdrm.so.2")
class Res(ctypes.Structure):
    _fields_ = [("count_fbs", ctypes.c_int), ("fbs", ctypes.POINTER(ctypes.c_uint32)),
                ("count_crtcs", ctypes.c_int), ("crtcs", ctypes.POINTER(ctypes.c_uint32)),
                ("count_connectors", ctypes.c_int), ("connectors", ctypes.POINTER(ctypes.c_uint32))]
class Conn(ctypes.Structure):   # leading fields of drmModeConnector
    _fields_ = [("connector_id", ctypes.c_uint32), ("encoder_id", ctypes.c_uint32),
                ("connector_type", ctypes.c_uint32), ("connector_type_id", ctypes.c_uint32),
                ("connection", ctypes.c_int)]
drm.drmModeGetResources.restype = ctypes.POINTER(Res)
drm.drmModeGetConnector.restype = ctypes.POINTER(Conn)
fd = os.open("/dev/dri/card0", os.O_RDWR)
assert drm.drmSetClientCap(fd, 3, 1) == 0, "DRM_CLIENT_CAP_ATOMIC"
assert drm.drmSetClientCap(fd, 5, 1) == 0, "DRM_CLIENT_CAP_WRITEBACK_CONNECTORS"
res = drm.drmModeGetResources(fd).contents
names = {15: "Virtual", 18: "Writeback"}
for i in range(res.count_connectors):
    c = drm.drmModeGetConnector(fd, res.connectors[i]).contents
    print(c.connector_id, "%s-%d" % (names.get(c.connector_type, str(c.connector_type)), c.connector_type_id))
PY
cat /tmp/conns.txt
check "libdrm: Virtual-1 connector"   'grep -q " Virtual-1$" /tmp/conns.txt'
check "libdrm: Writeback-1 connector" 'grep -q " Writeback-1$" /tmp/conns.txt'
exit $fail
EOF

start=$SECONDS
if "$HERE/run.sh" "$GUEST"; then
  echo "selftest: PASS ($((SECONDS - start)) s)"
else
  rc=$?
  echo "selftest: FAIL (exit $rc)" >&2
  exit 1
fi
