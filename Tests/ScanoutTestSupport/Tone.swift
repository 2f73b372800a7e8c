/// The frequency of a tone in interleaved 16-bit samples, from channel 0: upward swings from
/// below −1000 to above 1000 (the hysteresis keeps coding noise around zero from counting twice),
/// over the time between the first and the last. 0 when there are fewer than two.
public func toneFrequency(_ s: [Int16], channels: Int, rate: Double) -> Double {
    var swings: [Int] = []
    var armed = false
    for i in stride(from: 0, to: s.count, by: channels) {
        if s[i] < -1000 { armed = true } else if armed && s[i] > 1000 { swings.append(i / channels); armed = false }
    }
    guard let first = swings.first, let last = swings.last, last > first else { return 0 }
    return Double(swings.count - 1) / (Double(last - first) / rate)
}
