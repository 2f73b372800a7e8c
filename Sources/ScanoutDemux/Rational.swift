import CFFmpeg
import ScanoutCore

/// An exact fraction, as FFmpeg's `AVRational`: time bases, frame rates, aspect ratios.
public struct Rational: Hashable, Sendable, CustomStringConvertible {
    public var num: Int32
    public var den: Int32

    public init(_ num: Int32, _ den: Int32) {
        self.num = num
        self.den = den
    }

    package init(_ q: AVRational) { self.init(q.num, q.den) }

    package var av: AVRational { AVRational(num: num, den: den) }

    /// Zero denominators give 0, as `av_q2d` would give inf/nan.
    public var doubleValue: Double { den == 0 ? 0 : Double(num) / Double(den) }
    public var isValid: Bool { num > 0 && den > 0 }
    public var inverted: Rational { Rational(den, num) }
    public var description: String { "\(num)/\(den)" }

    /// Rescales `value` from this time base to `to` with FFmpeg's rounding (`av_rescale_q`).
    public func rescale(_ value: Int64, to: Rational) -> Int64 {
        av_rescale_q(value, av, to.av)
    }
}

/// The linked libavcodec's version, "59.37.100".
public var libavcodecVersion: String {
    let v = avcodec_version()
    return "\(v >> 16).\((v >> 8) & 0xff).\(v & 0xff)"
}
