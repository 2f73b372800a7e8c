#if canImport(Glibc)
import Glibc
#endif

/// A UDP socket on an IPv4 multicast group: bound to the group's port (shared with the other
/// members on this host, `SO_REUSEPORT`), joined on one interface, sending to the group with a
/// TTL of 1 (the LAN only) and its own datagrams looped back to the other members on this host.
/// Owns its descriptor, closed in `deinit`; one thread at a time.
public final class MulticastSocket {
    private let fd: Int32
    private var destination: sockaddr_in
    public let description: String

    /// `group`: an IPv4 multicast address; `interface`: an interface name or one of its IPv4
    /// addresses (nil: the kernel's choice, by the route to the group); `sendTo`: where datagrams
    /// go instead of the group (a relay, a unicast peer), nil: the group.
    public init(group: String, port: UInt16, interface: String?, sendTo: (host: String, port: UInt16)? = nil) throws {
        guard let address = Self.multicastAddress(group) else {
            throw SyncSocketError("\(group) is not an IPv4 multicast address (224.0.0.0/4)")
        }
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SyncSocketError("socket: \(String(cString: strerror(errno)))") }
        self.fd = fd
        destination = sockaddr_in()
        destination.sin_family = sa_family_t(AF_INET)
        destination.sin_port = port.bigEndian
        destination.sin_addr = address
        description = "\(group):\(port)" + (interface.map { " on \($0)" } ?? "") + (sendTo.map { ", sending to \($0.host):\($0.port)" } ?? "")
        do {
            try option(SOL_SOCKET, SO_REUSEADDR, 1)
            try option(SOL_SOCKET, SO_REUSEPORT, 1)
            var bindTo = destination
            let bound = withUnsafePointer(to: &bindTo) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { throw SyncSocketError("bind \(group):\(port): \(String(cString: strerror(errno)))") }
            var request = ip_mreqn()
            request.imr_multiaddr = address
            if let interface {
                var local = in_addr()
                if inet_pton(AF_INET, interface, &local) == 1 {
                    request.imr_address = local
                } else {
                    let index = if_nametoindex(interface)
                    guard index > 0 else { throw SyncSocketError("no interface \(interface)") }
                    request.imr_ifindex = Int32(index)
                }
            }
            guard setsockopt(fd, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, &request, socklen_t(MemoryLayout<ip_mreqn>.size)) == 0 else {
                throw SyncSocketError("joining \(group)\(interface.map { " on \($0)" } ?? ""): \(String(cString: strerror(errno)))")
            }
            guard setsockopt(fd, Int32(IPPROTO_IP), IP_MULTICAST_IF, &request, socklen_t(MemoryLayout<ip_mreqn>.size)) == 0 else {
                throw SyncSocketError("sending on \(interface ?? "the default interface"): \(String(cString: strerror(errno)))")
            }
            try option(Int32(IPPROTO_IP), IP_MULTICAST_TTL, 1)
            try option(Int32(IPPROTO_IP), IP_MULTICAST_LOOP, 1)
            if let sendTo {
                var to = in_addr()
                guard inet_pton(AF_INET, sendTo.host, &to) == 1 else { throw SyncSocketError("\(sendTo.host) is not an IPv4 address") }
                destination.sin_addr = to
                destination.sin_port = sendTo.port.bigEndian
            }
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }

    /// `text` as an IPv4 multicast address (224.0.0.0/4); nil when it is not one.
    public static func multicastAddress(_ text: String) -> in_addr? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1, (UInt32(bigEndian: address.s_addr) >> 28) == 0xE else { return nil }
        return address
    }

    private func option(_ level: Int32, _ name: Int32, _ value: Int32) throws {
        var v = value
        guard setsockopt(fd, level, name, &v, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw SyncSocketError("setsockopt \(name): \(String(cString: strerror(errno)))")
        }
    }

    /// Sends one datagram to the group; a failure (no route, the interface down) is thrown.
    public func send(_ datagram: [UInt8]) throws {
        let n = datagram.withUnsafeBytes { bytes in
            withUnsafePointer(to: &destination) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard n == datagram.count else { throw SyncSocketError("send to \(description): \(String(cString: strerror(errno)))") }
    }

    /// One datagram received within `milliseconds`, or nil.
    public func receive(within milliseconds: Int32) -> [UInt8]? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, milliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 2048)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        return Array(buffer.prefix(n))
    }
}

/// A sync socket that could not be set up or used: what failed, with the system's reason.
public struct SyncSocketError: Error, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = "sync: " + description }
}
