import CDRM
#if canImport(Glibc)
import Glibc
#endif

/// The kernel's uevent netlink socket (what udev listens to), non-blocking; closed once in deinit.
/// nil when the socket cannot be made (a sandbox without netlink): hotplug is then not reported.
final class UEventSocket {
    let fd: Int32

    init?() {
        let s = socket(AF_NETLINK, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 15 /* NETLINK_KOBJECT_UEVENT */)
        guard s >= 0 else { return nil }
        var addr = sockaddr_nl()
        addr.nl_family = sa_family_t(AF_NETLINK)
        addr.nl_groups = 1
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_nl>.size)) }
        }
        guard r == 0 else { close(s); return nil }
        fd = s
    }

    deinit { close(fd) }

    /// Reads every pending message; true when one was a DRM hotplug of `cardName` ("card0").
    func drainHotplug(cardName: String) -> Bool {
        var found = false
        var buf = [UInt8](repeating: 0, count: 8192)
        while true {
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            let fields = buf[0..<n].split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if Self.isHotplug(fields, cardName: cardName) { found = true }
        }
        return found
    }

    /// A kernel uevent's NUL-separated fields: `SUBSYSTEM=drm`, `HOTPLUG=1` and `DEVNAME=dri/cardN`.
    static func isHotplug(_ fields: [String], cardName: String) -> Bool {
        fields.contains("SUBSYSTEM=drm") && fields.contains("HOTPLUG=1")
            && (cardName.isEmpty || fields.contains("DEVNAME=dri/\(cardName)"))
    }
}
