import ScanoutKMS

/// A screen's power beside the display's own (KMS DPMS): a TV switched through HDMI-CEC. The
/// player turns each off after the display and on before it.
public protocol ScreenPowerSwitch: AnyObject {
    /// What it switches, for messages ("HDMI-CEC on /dev/cec0").
    var name: String { get }
    func setPower(on: Bool) throws
}

extension CECPowerSwitch: ScreenPowerSwitch {
    public var name: String { "HDMI-CEC on \(bus.path)" }

    public func setPower(on: Bool) throws {
        if on { try wake() } else { try standby() }
    }
}
