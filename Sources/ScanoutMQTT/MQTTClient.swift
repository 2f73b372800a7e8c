import CMosquitto
import Foundation
import Synchronization

/// What failed in the MQTT client, and what to do.
public enum MQTTError: Error, CustomStringConvertible, Equatable, Sendable {
    /// A setting libmosquitto refused (a TLS file it cannot read, a client id too long).
    case setting(String, String)
    /// A call into libmosquitto failed: which, and libmosquitto's reason.
    case call(String, String)
    /// The client is not connected to its broker (a publish while the broker is away).
    case notConnected

    public var description: String {
        switch self {
        case .setting(let field, let why): return "mqtt.\(field): \(why)"
        case .call(let call, let why): return "MQTT: \(call) failed: \(why)"
        case .notConnected: return "MQTT: not connected to the broker; the message is kept and sent once it is back"
        }
    }
}

/// A message as it arrived from the broker.
public struct MQTTMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int
    public var retained: Bool

    public init(topic: String, payload: [UInt8], qos: Int = 0, retained: Bool = false) {
        self.topic = topic; self.payload = payload; self.qos = qos; self.retained = retained
    }
}

/// Where and how to connect.
public struct MQTTSettings: Sendable, Equatable {
    public struct TLS: Sendable, Equatable {
        /// The certificate authorities the broker's certificate is checked against (a file).
        public var caFile: String
        /// The client's own certificate and key, for brokers that ask for one.
        public var certFile: String?
        public var keyFile: String?
        /// Skips the check of the broker's host name against its certificate (a test broker).
        public var insecure: Bool

        public init(caFile: String, certFile: String? = nil, keyFile: String? = nil, insecure: Bool = false) {
            self.caFile = caFile; self.certFile = certFile; self.keyFile = keyFile; self.insecure = insecure
        }
    }

    public var host: String
    public var port: Int
    public var clientId: String
    public var username: String?
    public var password: String?
    public var tls: TLS?
    /// Said by the broker for this client when it goes without a goodbye (retained).
    public var will: MQTTMessage?
    /// Seconds between pings.
    public var keepAlive: Int
    /// A persistent session: the broker keeps the subscriptions and the QoS 1 messages sent to
    /// this client while it was away (commands to a box that was off reach it when it is back).
    public var persistentSession: Bool

    public init(host: String, port: Int, clientId: String, username: String? = nil, password: String? = nil, tls: TLS? = nil,
                will: MQTTMessage? = nil, keepAlive: Int = 30, persistentSession: Bool = true) {
        self.host = host; self.port = port; self.clientId = clientId; self.username = username; self.password = password
        self.tls = tls; self.will = will; self.keepAlive = keepAlive; self.persistentSession = persistentSession
    }
}

/// What the client hears, on libmosquitto's network thread: keep each short.
public struct MQTTCallbacks: Sendable {
    /// Connected (again): subscribe here, since a broker without a session forgets them.
    public var connected: @Sendable () -> Void = {}
    /// The broker refused the connection, or it was lost; the client tries again by itself.
    public var disconnected: @Sendable (String) -> Void = { _ in }
    public var message: @Sendable (MQTTMessage) -> Void = { _ in }
    /// The broker acknowledged the QoS 1 message with this id.
    public var acknowledged: @Sendable (Int32) -> Void = { _ in }
    /// An error libmosquitto met on its thread (a TLS handshake refused, a name that does not
    /// resolve): what it logged.
    public var error: @Sendable (String) -> Void = { _ in }

    public init() {}
}

/// An MQTT 3.1.1 client: libmosquitto's handle and its network thread, which connects, and
/// connects again after a loss (1 s, doubling to 30 s), by itself. Publish and subscribe from any
/// thread. One owner: `close()` (or the deinit) stops the thread and frees the handle.
public final class MQTTClient: Sendable {
    /// The libmosquitto handle. `@unchecked Sendable`: libmosquitto's calls take their own locks
    /// once the threaded interface runs (`mosquitto_loop_start`); the pointer never leaves here.
    private final class Handle: @unchecked Sendable {
        let mosq: OpaquePointer
        init(_ mosq: OpaquePointer) { self.mosq = mosq }
    }

    private let handle: Handle
    private let callbacks: Box
    private let state = Mutex(State())
    public let settings: MQTTSettings

    private struct State {
        var connected = false
        var closed = false
        var started = false
    }

    /// The callbacks, where libmosquitto's C callbacks find them (its `obj` pointer).
    private final class Box: Sendable {
        let callbacks: MQTTCallbacks
        let connected = Mutex(false)
        init(_ c: MQTTCallbacks) { callbacks = c }
    }

    private static let library: Int32 = mosquitto_lib_init()

    public init(settings: MQTTSettings, callbacks: MQTTCallbacks) throws(MQTTError) {
        _ = Self.library
        self.settings = settings
        let box = Box(callbacks)
        self.callbacks = box
        guard let mosq = mosquitto_new(settings.clientId, !settings.persistentSession, Unmanaged.passUnretained(box).toOpaque()) else {
            throw .setting("clientId", "libmosquitto could not make a client for \"\(settings.clientId)\" (\(String(cString: strerror(errno))))")
        }
        handle = Handle(mosq)
        // A setting refused here throws with the handle owned: the deinit (`close`) frees it, once.
        try configure(mosq, settings)
        mosquitto_connect_callback_set(mosq) { _, obj, rc in
            let box = Unmanaged<Box>.fromOpaque(obj!).takeUnretainedValue()
            if rc == 0 {
                box.connected.withLock { $0 = true }
                box.callbacks.connected()
            } else {
                box.callbacks.disconnected("the broker refused the connection: \(String(cString: mosquitto_connack_string(rc)))")
            }
        }
        mosquitto_disconnect_callback_set(mosq) { _, obj, rc in
            let box = Unmanaged<Box>.fromOpaque(obj!).takeUnretainedValue()
            box.connected.withLock { $0 = false }
            box.callbacks.disconnected(rc == 0 ? "disconnected" : "the connection was lost (\(String(cString: mosquitto_strerror(rc))))")
        }
        mosquitto_publish_callback_set(mosq) { _, obj, mid in
            Unmanaged<Box>.fromOpaque(obj!).takeUnretainedValue().callbacks.acknowledged(mid)
        }
        mosquitto_log_callback_set(mosq) { _, obj, level, text in
            guard level & MOSQ_LOG_ERR != 0, let text else { return }
            Unmanaged<Box>.fromOpaque(obj!).takeUnretainedValue().callbacks.error(String(cString: text))
        }
        mosquitto_message_callback_set(mosq) { _, obj, m in
            guard let m = m?.pointee, let topic = m.topic else { return }
            let payload = m.payloadlen > 0 && m.payload != nil
                ? [UInt8](UnsafeRawBufferPointer(start: m.payload, count: Int(m.payloadlen))) : []
            let message = MQTTMessage(topic: String(cString: topic), payload: payload, qos: Int(m.qos), retained: m.retain)
            Unmanaged<Box>.fromOpaque(obj!).takeUnretainedValue().callbacks.message(message)
        }
    }

    private func configure(_ mosq: OpaquePointer, _ s: MQTTSettings) throws(MQTTError) {
        if s.username != nil || s.password != nil {
            try check(mosquitto_username_pw_set(mosq, s.username, s.password), "username")
        }
        if let tls = s.tls {
            for (field, path) in [("tls.caFile", tls.caFile), ("tls.certFile", tls.certFile), ("tls.keyFile", tls.keyFile)] {
                if let path, access(path, R_OK) != 0 { throw .setting(field, "\(path) cannot be read (\(String(cString: strerror(errno))))") }
            }
            try check(mosquitto_tls_set(mosq, tls.caFile, nil, tls.certFile, tls.keyFile, nil), "tls")
            if tls.insecure { try check(mosquitto_tls_insecure_set(mosq, true), "tls.insecure") }
        }
        if let will = s.will {
            let rc = will.payload.withUnsafeBytes { p in
                mosquitto_will_set(mosq, will.topic, Int32(p.count), p.baseAddress, Int32(will.qos), will.retained)
            }
            try check(rc, "will")
        }
        mosquitto_reconnect_delay_set(mosq, 1, 30, true)
    }

    private func check(_ rc: Int32, _ field: String) throws(MQTTError) {
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            throw .setting(field, String(cString: mosquitto_strerror(rc)))
        }
    }

    /// Starts the network thread and the first connection. A broker that is not there yet is
    /// tried again (2 s, doubling to 30 s) until it answers: libmosquitto's thread connects again
    /// after a connection it had is lost, not after a first connection that never was.
    public func start() throws(MQTTError) {
        let first = state.withLock { s -> Bool in
            defer { s.started = true }
            return !s.started && !s.closed
        }
        guard first else { return }
        let loop = mosquitto_loop_start(handle.mosq)
        guard loop == MOSQ_ERR_SUCCESS.rawValue else { throw .call("starting the network thread", String(cString: mosquitto_strerror(loop))) }
        let rc = mosquitto_connect_async(handle.mosq, settings.host, Int32(settings.port), Int32(settings.keepAlive))
        if rc == MOSQ_ERR_INVAL.rawValue {
            throw .call("connecting to \(settings.host):\(settings.port)", String(cString: mosquitto_strerror(rc)))
        }
        // A broker away, a name that does not resolve yet, a TLS handshake refused: said, and
        // tried again (what plays never waits for the broker).
        if rc != MOSQ_ERR_SUCCESS.rawValue {
            callbacks.callbacks.disconnected("the first connection to \(settings.host):\(settings.port) failed (\(String(cString: mosquitto_strerror(rc))))")
        }
        let thread = Thread { [weak self] in self?.untilFirstConnection() }
        thread.name = "mqtt-first-connect"
        thread.start()
    }

    private func untilFirstConnection() {
        var wait = 2.0
        while true {
            let deadline = Date().addingTimeInterval(wait)
            while Date() < deadline {
                if isConnected || state.withLock({ $0.closed }) { return }
                usleep(50_000)
            }
            // Under the state lock, so that `close` cannot free the handle meanwhile.
            let done = state.withLock { s -> Bool in
                guard !s.closed, !callbacks.connected.withLock({ $0 }) else { return true }
                mosquitto_reconnect_async(handle.mosq)
                return false
            }
            if done { return }
            wait = min(30, wait * 2)
        }
    }

    /// Whether the broker has the client now.
    public var isConnected: Bool { callbacks.connected.withLock { $0 } }

    /// Sends `payload` to `topic`; returns the message id (`acknowledged` names it for QoS 1).
    @discardableResult
    public func publish(_ topic: String, _ payload: [UInt8], qos: Int = 0, retain: Bool = false) throws(MQTTError) -> Int32 {
        guard isConnected else { throw .notConnected }
        var mid: Int32 = 0
        let rc = payload.withUnsafeBytes { p in
            mosquitto_publish(handle.mosq, &mid, topic, Int32(p.count), p.baseAddress, Int32(qos), retain)
        }
        if rc == MOSQ_ERR_NO_CONN.rawValue { throw .notConnected }
        guard rc == MOSQ_ERR_SUCCESS.rawValue else { throw .call("publishing to \(topic)", String(cString: mosquitto_strerror(rc))) }
        return mid
    }

    public func subscribe(_ pattern: String, qos: Int = 1) throws(MQTTError) {
        let rc = mosquitto_subscribe(handle.mosq, nil, pattern, Int32(qos))
        guard rc == MOSQ_ERR_SUCCESS.rawValue else { throw .call("subscribing to \(pattern)", String(cString: mosquitto_strerror(rc))) }
    }

    /// Says goodbye (the will is not sent), stops the thread and frees the handle.
    public func close() {
        let wasOpen = state.withLock { s -> Bool in
            defer { s.closed = true }
            return !s.closed
        }
        guard wasOpen else { return }
        // Connected, the thread writes what is queued (a last message, the goodbye) and ends;
        // otherwise it may be waiting to connect again, and is stopped.
        let connected = isConnected
        mosquitto_disconnect(handle.mosq)
        mosquitto_loop_stop(handle.mosq, !connected)
        state.withLock { _ in mosquitto_destroy(handle.mosq) }
    }

    deinit { close() }
}

extension MQTTSettings {
    /// Host, port and TLS from `mqtt://host[:port]` (1883) or `mqtts://host[:port]` (8883).
    public static func endpoint(of url: String) -> (host: String, port: Int, tls: Bool)? {
        guard let u = URLComponents(string: url), let scheme = u.scheme?.lowercased(), ["mqtt", "mqtts", "tcp", "ssl"].contains(scheme),
              let host = u.host, !host.isEmpty, u.path.isEmpty || u.path == "/" else { return nil }
        let tls = scheme == "mqtts" || scheme == "ssl"
        let port = u.port ?? (tls ? 8883 : 1883)
        guard (1...65535).contains(port) else { return nil }
        return (host, port, tls)
    }
}
