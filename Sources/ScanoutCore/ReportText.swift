// Numbers and columns as the command line's reports print them (`play`'s summary, `probe`,
// `render`, and the `bench` harness's tables): one definition for all of them, inside the package.

/// `v` with one decimal ("12.3"), "-" when it is not finite.
package func format1(_ v: Double) -> String { formatFixed(v, 1) }

/// `v` with two decimals ("12.30"), "-" when it is not finite.
package func format2(_ v: Double) -> String { formatFixed(v, 2) }

/// `v` rounded to `digits` decimals and written with exactly that many ("0.500"); "-" when it
/// is not finite.
package func formatFixed(_ v: Double, _ digits: Int) -> String {
    guard v.isFinite else { return "-" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let r = (v * scale).rounded() / scale
    var s = String(r)
    if let dot = s.firstIndex(of: ".") {
        let decimals = s.distance(from: dot, to: s.endIndex) - 1
        if decimals < digits { s += String(repeating: "0", count: digits - decimals) }
    } else if digits > 0 {
        s += "." + String(repeating: "0", count: digits)
    }
    return s
}

/// `s` left-aligned in a column of `width` characters (at least one space after it).
package func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
}
