import ScanoutCore
import Testing

@Suite("ClockTime")
struct ClockTimeTests {
    let t = ClockTime(nanoseconds: 5_000_000_000)

    @Test("a span added and taken away moves the time by its nanoseconds")
    func arithmetic() {
        #expect(t + .milliseconds(250) == ClockTime(nanoseconds: 5_250_000_000))
        #expect(t - .milliseconds(250) == ClockTime(nanoseconds: 4_750_000_000))
        #expect(t + .nanoseconds(-1) == ClockTime(nanoseconds: 4_999_999_999))
        #expect(Duration.seconds(2) + t == ClockTime(nanoseconds: 7_000_000_000))
        var u = t
        u += .microseconds(3)
        u -= .nanoseconds(1)
        #expect(u.nanoseconds == 5_000_002_999)
    }

    @Test("the difference of two times is a signed span")
    func difference() {
        let later = ClockTime(nanoseconds: 5_016_666_667)
        #expect(later - t == .nanoseconds(16_666_667))
        #expect(t - later == .nanoseconds(-16_666_667))
        #expect(t - t == .zero)
        #expect(t + (later - t) == later)
    }

    @Test("times order by their nanoseconds")
    func ordering() {
        let times = [ClockTime(nanoseconds: 3), .zero, ClockTime(nanoseconds: 2), ClockTime(nanoseconds: 3)]
        #expect(times.sorted().map(\.nanoseconds) == [0, 2, 3, 3])
        #expect(ClockTime(nanoseconds: 2) < ClockTime(nanoseconds: 3))
        #expect(Set(times).count == 3)
    }

    @Test("spans give back nanoseconds and seconds")
    func durations() {
        #expect(Duration.nanoseconds(16_666_667).nanosecondCount == 16_666_667)
        #expect(Duration.nanoseconds(-1_500_000_001).nanosecondCount == -1_500_000_001)
        #expect(Duration.seconds(3).nanosecondCount == 3_000_000_000)
        // A span from a Double rounds to the nearest nanosecond.
        #expect(Duration.seconds(0.3).nanosecondCount == 300_000_000)
        #expect(Duration.milliseconds(1500).secondsValue == 1.5)
        #expect(Duration.nanoseconds(-250_000_000).secondsValue == -0.25)
        #expect(Duration.nanoseconds(inSeconds: 0.0166666667).nanosecondCount == 16_666_666)
        #expect(Duration.nanoseconds(inSeconds: 2.5) == .milliseconds(2500))
    }

    @Test("the kernel's seconds and microseconds, and the split back")
    func kernelStamps() {
        let stamp = ClockTime(seconds: 12, microseconds: 345_678)
        #expect(stamp.nanoseconds == 12_345_678_000)
        #expect(stamp.secondsPart == 12 && stamp.nanosecondsPart == 345_678_000)
        #expect(stamp.sinceOrigin == .nanoseconds(12_345_678_000))
    }

    @Test("the description is seconds with nine decimals")
    func description() {
        #expect(ClockTime(nanoseconds: 12_000_000_345).description == "12.000000345s")
        #expect(ClockTime.zero.description == "0.000000000s")
        #expect("\(ClockTime(nanoseconds: 1_500_000_000))" == "1.500000000s")
    }

    @Test("now() never goes back")
    func now() {
        var last = ClockTime.zero
        for _ in 0..<1_000 {
            let reading = ClockTime.now()
            #expect(reading >= last)
            last = reading
        }
        #expect(last > .zero)
    }
}
