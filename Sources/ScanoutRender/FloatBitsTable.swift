/// A function of a positive `Float` tabulated by the bits of its argument: the exponent and the
/// top `mantissaBits` of the mantissa index the table, so that the steps are a fixed fraction of
/// the value (1/512 with 9 bits) over every octave from `low` to `high`, and a lookup is a
/// bit cast, a subtraction and a shift, with no square root or division. Arguments below `low`
/// (zero and negatives included) take the first entry, above `high` the last. Each entry is the
/// function at the middle of its step.
struct FloatBitsTable<Value: Sendable>: Sendable {
    let values: [Value]
    let base: UInt32
    let shift: UInt32
    let low: Float
    let high: Float

    init(low: Float, high: Float, mantissaBits: UInt32 = 9, _ f: (Float) -> Value) {
        let shift = 23 - mantissaBits
        let base = (low.bitPattern >> shift) << shift
        let count = Int((high.bitPattern - base) >> shift) + 1
        let half = UInt32(1) << (shift - 1)
        values = (0..<count).map { i in f(Float(bitPattern: base + (UInt32(i) << shift) + half)) }
        self.low = low
        self.high = high
        self.shift = shift
        self.base = base
    }

    /// The entry of `v`.
    @inline(__always)
    func index(_ v: Float) -> Int {
        Int((min(max(v, low), high).bitPattern - base) >> shift)
    }
}
