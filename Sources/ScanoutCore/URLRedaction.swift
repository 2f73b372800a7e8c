/// Hides the userinfo (`user:password@`) of the URLs in a text, so that a password in a source
/// URL reaches no log line, listing or event: `http://user:secret@cdn/a.m3u8` reads
/// `http://***@cdn/a.m3u8`. The one place the service, the store and the player redact with.
///
/// Any number of URLs anywhere in the text are handled (a log line, an error message); the
/// userinfo is what stands between `scheme://` and the last `@` before the authority ends (at
/// `/`, `?`, `#`, whitespace, a double quote or the end: the
/// characters that cannot stand unencoded in userinfo). Text without `://` comes back unchanged.
public enum URLRedaction {
    public static let mask = "***"

    public static func redact(_ text: String) -> String {
        guard text.contains("://") && text.contains("@") else { return text }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            // "://" after a scheme letter: the authority starts after it.
            if bytes[i] == UInt8(ascii: ":"), i + 2 < bytes.count, bytes[i + 1] == UInt8(ascii: "/"), bytes[i + 2] == UInt8(ascii: "/"),
               i > 0, isSchemeByte(bytes[i - 1]) {
                out.append(contentsOf: bytes[i...(i + 2)])
                let start = i + 3
                var end = start
                var at: Int?
                while end < bytes.count, !endsAuthority(bytes[end]) {
                    if bytes[end] == UInt8(ascii: "@") { at = end }
                    end += 1
                }
                // An empty userinfo (`udp://@239.0.0.1:1234`, a multicast listen) hides nothing.
                if let at, at > start {
                    out.append(contentsOf: Array(mask.utf8))
                    out.append(contentsOf: bytes[at..<end])
                } else {
                    out.append(contentsOf: bytes[start..<end])
                }
                i = end
                continue
            }
            out.append(bytes[i])
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `url` carries userinfo (`user@` or `user:password@`).
    public static func hasUserinfo(_ url: String) -> Bool { redact(url) != url }

    private static func isSchemeByte(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == UInt8(ascii: "+")
            || b == UInt8(ascii: "-") || b == UInt8(ascii: ".")
    }

    private static func endsAuthority(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"),
             UInt8(ascii: "\r"), UInt8(ascii: "\""):
            return true
        default:
            return false
        }
    }
}
