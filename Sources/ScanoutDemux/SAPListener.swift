import Foundation
import Synchronization
import ScanoutCore

/// Where SAP announcements are received.
public struct SAPListenerOptions: Sendable, Equatable {
    /// The group announcements go to: 224.2.127.254 is the global-scope IPv4 one (RFC 2974 §3).
    public var address = "224.2.127.254"
    public var port = 9875
    /// The interface to join the group on: a name (resolved with `getifaddrs`) or an address;
    /// nil: the routing table's.
    public var interface: String?
    /// Seconds after the last announcement of a session before it counts as withdrawn; nil: ten
    /// times the interval seen between its announcements (RFC 2974 §4), at least `minimumTimeout`.
    public var timeout: Double?

    public init(address: String = "224.2.127.254", port: Int = 9875, interface: String? = nil, timeout: Double? = nil) {
        self.address = address
        self.port = port
        self.interface = interface
        self.timeout = timeout
    }

    /// The least time a session is kept without a fixed `timeout`, whatever its interval (a
    /// session announced twice in quick succession is not dropped after a fraction of a second).
    public static let minimumTimeout = 30.0

    /// The `udp://` URL the listener opens.
    public var url: String { "udp://\(address.contains(":") ? "[\(address)]" : address):\(port)" }
}

/// Receives SAP datagrams on a thread of its own, parses them and hands each one to `onMessage`
/// (or what was wrong with it, as a `SAPError`); `onIdle` is called at least every half second,
/// for a listener of the set to expire what stopped being announced. libavformat's `sap` demuxer
/// is not used: it returns after the first announcement and plays that session, where a channel
/// list needs every session, its repeats and its deletion.
///
/// The thread owns the socket (a `UDPSocket`, joined to the group) and closes it when `stop()`
/// (or deinit) ends the thread, within 100 ms; the callbacks run on that thread.
public final class SAPListener: Sendable {
    public let options: SAPListenerOptions
    private let state = ListenerState()

    /// Joins the group and starts listening; throws when the socket cannot be opened (an unknown
    /// interface, an address that is not one).
    public init(options: SAPListenerOptions, onMessage: @escaping @Sendable (Result<SAPMessage, SAPError>) -> Void,
                onIdle: @escaping @Sendable () -> Void) throws {
        self.options = options
        let state = self.state
        var live = LiveInputOptions(interface: options.interface)
        live.overrunNonfatal = true
        let socket = try UDPSocket(url: options.url, input: options.url, options: try live.protocolOptions(for: options.url)) {
            state.stopped.load(ordering: .relaxed)
                || state.readStart.map { ClockTime.now() - $0 >= .milliseconds(500) } ?? false
        }
        let owned = SocketHandOver(socket: socket)
        let thread = Thread(named: "scanout-sap") {
            let socket = owned.socket
            var buffer = [UInt8](repeating: 0, count: 65536)
            while !state.stopped.load(ordering: .relaxed) {
                state.readStart = ClockTime.now()
                let n = buffer.withUnsafeMutableBytes { socket.receive(into: $0) }
                state.readStart = nil
                if n > 0 { onMessage(Result { () throws(SAPError) in try SAPMessage.parse(Array(buffer[0..<Int(n)])) }) }
                onIdle()
            }
        }
        thread.start()
    }

    deinit { stop() }

    /// Ends the thread, which closes the socket (leaving the group).
    public func stop() { state.stopped.store(true, ordering: .relaxed) }
}

private final class ListenerState: Sendable {
    let stopped = Atomic<Bool>(false)
    /// When the read in progress started; nil: none. Kept as the time's nanoseconds in an atomic
    /// (0: none), as the read's thread and the socket's interrupt check share it.
    private let readStartNanoseconds = Atomic<UInt64>(0)
    var readStart: ClockTime? {
        get {
            let n = readStartNanoseconds.load(ordering: .relaxed)
            return n == 0 ? nil : ClockTime(nanoseconds: n)
        }
        set { readStartNanoseconds.store(newValue?.nanoseconds ?? 0, ordering: .relaxed) }
    }
}

/// The socket, from `SAPListener.init` (which opens it, to report a failure to its caller) to
/// the listening thread. `@unchecked Sendable`: init never touches it after starting the thread,
/// so only that thread uses it.
private final class SocketHandOver: @unchecked Sendable {
    let socket: UDPSocket
    init(socket: UDPSocket) { self.socket = socket }
}
