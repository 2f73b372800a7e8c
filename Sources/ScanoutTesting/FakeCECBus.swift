import ScanoutKMS

/// A CEC bus with a TV on it, in memory: the playback address it hands out, the messages sent,
/// and a TV that can be taken off the bus (every message not acknowledged).
public final class FakeCECBus: CECBus, @unchecked Sendable {
    // `@unchecked Sendable`: used from the player's thread only while a test runs; the test reads
    // `sent` after the player's command returned.
    public let path: String
    public private(set) var sent: [CECMessage] = []
    public private(set) var claims = 0
    public var tvPresent = true
    public var address: UInt16 = 0x1000
    private var claimed: UInt8?

    public init(path: String = "/dev/cec-fake") { self.path = path }

    public func claimPlaybackAddress(osdName: String) throws(CECError) -> UInt8 {
        if let claimed { return claimed }
        guard address != 0xffff else { throw .noLogicalAddress(path: path) }
        claims += 1
        claimed = 4   // Playback Device 1
        return 4
    }

    public func physicalAddress() throws(CECError) -> UInt16 { address }

    public func transmit(_ message: CECMessage) throws(CECError) {
        guard tvPresent || message.destination == CECMessage.broadcast else {
            throw .notAcknowledged(path: path, opcode: message.opcode)
        }
        sent.append(message)
    }
}
