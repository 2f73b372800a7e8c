import CDRM
import Foundation

/// What failed on an HDMI-CEC adapter, and what to do.
public enum CECError: Error, CustomStringConvertible, Equatable, Sendable {
    case open(path: String, reason: String)
    case ioctl(call: String, path: String, reason: String)
    /// The adapter has no logical address: nothing is connected (no physical address), or every
    /// playback address is taken on the bus.
    case noLogicalAddress(path: String)
    /// The TV did not acknowledge the message (it is off the bus, or does not take CEC).
    case notAcknowledged(path: String, opcode: UInt8)
    /// The adapter cannot transmit (a monitor-only adapter).
    case cannotTransmit(path: String)

    public var description: String {
        switch self {
        case .open(let p, let r): return "HDMI-CEC: cannot open \(p): \(r)"
        case .ioctl(let c, let p, let r): return "HDMI-CEC: \(c) on \(p) failed: \(r)"
        case .noLogicalAddress(let p): return "HDMI-CEC: \(p) has no logical address (is a screen connected, with CEC on?)"
        case .notAcknowledged(let p, let op): return "HDMI-CEC: the TV did not acknowledge opcode 0x\(String(op, radix: 16)) on \(p) (off the bus, or CEC off in its menu)"
        case .cannotTransmit(let p): return "HDMI-CEC: \(p) cannot transmit (a monitor-only adapter)"
        }
    }
}

/// One CEC message: who sends it to whom, the opcode and its operands.
public struct CECMessage: Sendable, Equatable, CustomStringConvertible {
    public var initiator: UInt8
    public var destination: UInt8
    public var opcode: UInt8
    public var operands: [UInt8]

    public init(initiator: UInt8, destination: UInt8, opcode: UInt8, operands: [UInt8] = []) {
        self.initiator = initiator; self.destination = destination; self.opcode = opcode; self.operands = operands
    }

    public var bytes: [UInt8] { [initiator << 4 | destination & 0xf, opcode] + operands }
    public var description: String { bytes.map { String(format: "%02x", $0) }.joined(separator: ":") }

    /// The opcodes a player sends to switch its screen (CEC 1.4).
    public enum Opcode {
        public static let imageViewOn: UInt8 = 0x04
        public static let standby: UInt8 = 0x36
        public static let activeSource: UInt8 = 0x82
    }
    public static let tv: UInt8 = 0
    public static let broadcast: UInt8 = 15
}

/// A CEC adapter as the power switch sees it: the kernel's (`CECAdapter`) or a fake.
public protocol CECBus: AnyObject {
    var path: String { get }
    /// This device's logical address as a playback device, claimed the first time.
    func claimPlaybackAddress(osdName: String) throws(CECError) -> UInt8
    /// The HDMI physical address (a.b.c.d as 0xabcd); 0xffff when nothing is connected.
    func physicalAddress() throws(CECError) -> UInt16
    /// Sends `message` and waits until it is sent (or not acknowledged).
    func transmit(_ message: CECMessage) throws(CECError)
}

/// `/dev/cecN`, the kernel's CEC API: owns its descriptor (closed once, in `deinit`).
public final class CECAdapter: CECBus {
    public let path: String
    private let fd: Int32

    public init(path: String) throws(CECError) {
        let fd = Glibc.open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw .open(path: path, reason: String(cString: strerror(errno))) }
        self.fd = fd
        self.path = path
        var caps = cec_caps()
        guard ioctl(fd, SCANOUT_CEC_ADAP_G_CAPS, &caps) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw .ioctl(call: "CEC_ADAP_G_CAPS", path: path, reason: reason)
        }
        guard caps.capabilities & UInt32(CEC_CAP_TRANSMIT) != 0 else {
            Glibc.close(fd)
            throw .cannotTransmit(path: path)
        }
    }

    deinit { Glibc.close(fd) }

    /// The adapters this machine has (`/dev/cec0`, `/dev/cec1`...).
    public static func paths() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? [])
            .filter { $0.hasPrefix("cec") && Int($0.dropFirst(3)) != nil }.sorted().map { "/dev/" + $0 }
    }

    public func physicalAddress() throws(CECError) -> UInt16 {
        var pa: UInt16 = 0
        guard ioctl(fd, SCANOUT_CEC_ADAP_G_PHYS_ADDR, &pa) == 0 else { throw error("CEC_ADAP_G_PHYS_ADDR") }
        return pa
    }

    public func claimPlaybackAddress(osdName: String) throws(CECError) -> UInt8 {
        var la = cec_log_addrs()
        guard ioctl(fd, SCANOUT_CEC_ADAP_G_LOG_ADDRS, &la) == 0 else { throw error("CEC_ADAP_G_LOG_ADDRS") }
        if la.num_log_addrs == 0 {
            // Claims one playback address; the call returns once the kernel has polled the bus.
            la = cec_log_addrs()
            la.num_log_addrs = 1
            la.cec_version = UInt8(CEC_OP_CEC_VERSION_1_4)
            la.vendor_id = CEC_VENDOR_ID_NONE
            la.primary_device_type.0 = UInt8(CEC_OP_PRIM_DEVTYPE_PLAYBACK)
            la.log_addr_type.0 = UInt8(CEC_LOG_ADDR_TYPE_PLAYBACK)
            la.all_device_types.0 = UInt8(CEC_OP_ALL_DEVTYPE_PLAYBACK)
            withUnsafeMutableBytes(of: &la.osd_name) { name in
                for (i, b) in osdName.utf8.prefix(14).enumerated() { name[i] = b }
            }
            guard ioctl(fd, SCANOUT_CEC_ADAP_S_LOG_ADDRS, &la) == 0 else { throw error("CEC_ADAP_S_LOG_ADDRS") }
        }
        guard la.num_log_addrs > 0, la.log_addr.0 != UInt8(CEC_LOG_ADDR_INVALID) else { throw .noLogicalAddress(path: path) }
        return la.log_addr.0
    }

    public func transmit(_ message: CECMessage) throws(CECError) {
        var m = cec_msg()
        let bytes = message.bytes
        m.len = UInt32(bytes.count)
        m.timeout = 0
        withUnsafeMutableBytes(of: &m.msg) { p in for (i, b) in bytes.prefix(16).enumerated() { p[i] = b } }
        guard ioctl(fd, SCANOUT_CEC_TRANSMIT, &m) == 0 else { throw error("CEC_TRANSMIT") }
        if m.tx_status & UInt8(CEC_TX_STATUS_OK) == 0 {
            throw .notAcknowledged(path: path, opcode: message.opcode)
        }
    }

    private func error(_ call: String) -> CECError {
        .ioctl(call: call, path: path, reason: String(cString: strerror(errno)))
    }
}

/// The screen switched through HDMI-CEC, as a playback device does: standby to the TV, and on
/// again with Image View On and Active Source (this device's input selected).
public final class CECPowerSwitch {
    public let bus: any CECBus
    public let osdName: String

    public init(bus: any CECBus, osdName: String = "Scanout") {
        self.bus = bus
        self.osdName = osdName
    }

    /// Standby to the TV (not broadcast: the other devices on the bus stay as they are).
    public func standby() throws(CECError) {
        let me = try bus.claimPlaybackAddress(osdName: osdName)
        try bus.transmit(CECMessage(initiator: me, destination: CECMessage.tv, opcode: CECMessage.Opcode.standby))
    }

    /// Image View On to the TV (it wakes), then Active Source with this device's physical address
    /// (it shows this input).
    public func wake() throws(CECError) {
        let me = try bus.claimPlaybackAddress(osdName: osdName)
        try bus.transmit(CECMessage(initiator: me, destination: CECMessage.tv, opcode: CECMessage.Opcode.imageViewOn))
        let pa = try bus.physicalAddress()
        try bus.transmit(CECMessage(initiator: me, destination: CECMessage.broadcast, opcode: CECMessage.Opcode.activeSource,
                                    operands: [UInt8(pa >> 8), UInt8(pa & 0xff)]))
    }
}
