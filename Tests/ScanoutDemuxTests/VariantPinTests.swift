import ScanoutCore
import ScanoutDemux
import Testing

/// `VariantPin`: which one variant of a master playlist a frame-exact read keeps.
@Suite struct VariantPinTests {
    static let ladder = [HLSVariant(id: 0, bitrate: 165_000, width: 256, height: 192, streamIndex: 0),
                         HLSVariant(id: 1, bitrate: 330_000, width: 288, height: 216, streamIndex: 1),
                         HLSVariant(id: 2, bitrate: 660_000, width: 320, height: 240, streamIndex: 2)]

    @Test("the first without a choice; the index asked; the tallest the caps allow")
    func choices() throws {
        let shuffled = [Self.ladder[2], Self.ladder[0], Self.ladder[1]]
        #expect(try VariantPin().choose(from: shuffled, caps: AdaptiveOptions(), input: "m")?.id == 0)
        #expect(try VariantPin(index: 2).choose(from: shuffled, caps: AdaptiveOptions(), input: "m")?.id == 2)
        #expect(try VariantPin().choose(from: shuffled, caps: AdaptiveOptions(maxHeight: 230), input: "m")?.id == 1)
        #expect(try VariantPin().choose(from: shuffled, caps: AdaptiveOptions(maxBitrate: 200_000), input: "m")?.id == 0)
        #expect(try VariantPin().choose(from: [], caps: AdaptiveOptions(maxHeight: 230), input: "m") == nil)
    }

    @Test("an index or caps that match nothing, and an index of an input with no variants, are errors naming why")
    func refusals() {
        #expect(throws: MediaError.self) { try VariantPin(index: 3).choose(from: Self.ladder, caps: AdaptiveOptions(), input: "m") }
        #expect(throws: MediaError.self) { try VariantPin().choose(from: Self.ladder, caps: AdaptiveOptions(maxHeight: 100), input: "m") }
        #expect(throws: MediaError.self) { try VariantPin(index: 0).choose(from: [], caps: AdaptiveOptions(), input: "m") }
        do {
            _ = try VariantPin(index: 3).choose(from: Self.ladder, caps: AdaptiveOptions(), input: "m")
        } catch {
            #expect("\(error)".contains("no variant 3: the playlist lists 0: 256x192 165 kb/s, 1: 288x216 330 kb/s, 2: 320x240 660 kb/s"), "\(error)")
        }
    }
}
