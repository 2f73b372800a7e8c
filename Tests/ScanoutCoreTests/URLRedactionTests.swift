import ScanoutCore
import Testing

/// `URLRedaction`: the userinfo of every URL in a text hidden, the rest kept.
@Suite struct RedactionTests {
    @Test func userinfoIsHiddenWhereverURLsStand() {
        #expect(URLRedaction.redact("http://user:secret@cdn.example/a.m3u8") == "http://***@cdn.example/a.m3u8")
        #expect(URLRedaction.redact("https://token@cdn.example:8443/x?y=1") == "https://***@cdn.example:8443/x?y=1")
        #expect(URLRedaction.redact("cannot open rtsp://a:b@cam/live and http://c:d@e/f: refused")
                == "cannot open rtsp://***@cam/live and http://***@e/f: refused")
        // A password holding '@', ':' or ',' as some clients write them unencoded: all of it goes.
        #expect(URLRedaction.redact("http://u:p@ss,w:rd@host/") == "http://***@host/")
        #expect(URLRedaction.redact("source=\"http://u:p@[::1]:8080/x\"") == "source=\"http://***@[::1]:8080/x\"")
    }

    @Test func textWithoutUserinfoIsUnchanged() {
        for text in ["http://cdn.example/a@b.mp4", "http://cdn.example/?mail=a@b", "mailto:a@b.example", "/srv/media/a@b.mp4",
                     "no url at all", "http://[::1]:80/x#frag@x", "udp://@239.0.0.1:1234"] {
            #expect(URLRedaction.redact(text) == text)
        }
    }
}
