import Foundation
import ScanoutCore
import ScanoutDisplay
import ScanoutKMS
import ScanoutPipeline
import ScanoutPlayer
import ScanoutRender
import ScanoutTesting
import Testing

/// The KMS display a screen was opened on (`@unchecked Sendable`: set on the compositor's thread
/// before the screen starts, read once it is shut down).
private final class Opened: @unchecked Sendable {
    var kms: KMSDisplay?
    var device: FakeKMSDevice?
}

@Suite("a layout across the screens of one box: a wall")
struct WallOutputTests {
    static func halves() -> ScreenLayout {
        ScreenLayout(zones: [
            ScreenLayout.Zone(id: "left", width: .fraction(0.5), background: RGBColor(r: 200, g: 0, b: 0)),
            ScreenLayout.Zone(id: "right", x: .fraction(0.5), width: .fraction(0.5), background: RGBColor(r: 0, g: 200, b: 0)),
        ])
    }

    /// `layout` on a screen opened on `device` (its canvas sized by `LayoutOutput.canvasSize`),
    /// shut down after three composes.
    fileprivate static func composeThree(_ layout: ScreenLayout, on device: FakeKMSDevice) throws -> (ScreenPlayer, Opened) {
        let opened = Opened()
        opened.device = device
        let screen = try ScreenPlayer(layout: layout, refreshInterval: .milliseconds(5)) {
            let kms = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
            opened.kms = kms
            let size = try LayoutOutput.canvasSize(of: layout, on: kms)
            return ScreenOutput(output: kms, width: size.width, height: size.height)
        }
        let end = Date().addingTimeInterval(5)
        while screen.screen.composed < 3, Date() < end { Thread.sleep(forTimeInterval: 0.01) }
        screen.shutdown()
        return (screen, opened)
    }

    @Test("two screens and a 5 mm bezel (2 pixels a millimetre): one 650x240 canvas, each screen its rectangle, the bezel's pixels left out, one commit per compose")
    func twoScreens() throws {
        var layout = Self.halves()
        layout.wall = ScreenLayout.Wall(outputs: ["HDMI-A-1", "HDMI-A-2"], columns: 2, bezel: .millimetres(5))
        let (screen, opened) = try Self.composeThree(layout, on: FakeKMSDevice.screens(2, widthMM: 160))
        let kms = try #require(opened.kms)
        #expect(screen.screen.canvas.width == 650 && screen.screen.canvas.height == 240)
        #expect(kms.wall == ["HDMI-A-1": PixelRect(x: 0, y: 0, width: 320, height: 240), "HDMI-A-2": PixelRect(x: 330, y: 0, width: 320, height: 240)])
        let one = try kms.renderer.read(try #require(kms.shownBuffer(named: "HDMI-A-1")))
        let two = try kms.renderer.read(try #require(kms.shownBuffer(named: "HDMI-A-2")))
        // The left zone is x 0..324 of the canvas: all of HDMI-A-1; the right zone, x 325..649:
        // all of HDMI-A-2 (which starts at 330, past the bezel).
        #expect(one.pixel(x: 0, y: 0) == (200, 0, 0) && one.pixel(x: 319, y: 239) == (200, 0, 0))
        #expect(two.pixel(x: 0, y: 0) == (0, 200, 0) && two.pixel(x: 319, y: 239) == (0, 200, 0))
        // Every compose is one commit flipping both screens' planes (40 and 43) together.
        #expect(kms.counters.composited == screen.screen.composed)
        let flips = try #require(opened.device).commits.filter { !$0.flags.contains(.testOnly) && Set($0.request.objectIDs).contains(40) }
        #expect(flips.count >= screen.screen.composed && flips.allSatisfy { Set($0.request.objectIDs).isSuperset(of: [40, 43]) })
    }

    @Test("a wall across two boxes: this box's screen is the right one (the left is another box's, null): the whole 650x240 canvas composed, its screen showing x 330 on")
    func acrossBoxes() throws {
        var layout = Self.halves()
        layout.wall = ScreenLayout.Wall(outputs: [nil, "HDMI-A-1"], columns: 2, bezel: .pixels(10))
        let (screen, opened) = try Self.composeThree(layout, on: FakeKMSDevice.screens(1, widthMM: 160))
        let kms = try #require(opened.kms)
        #expect(screen.screen.canvas.width == 650 && screen.screen.canvas.height == 240)
        #expect(kms.wall == ["HDMI-A-1": PixelRect(x: 330, y: 0, width: 320, height: 240)])
        // Its rectangle is all of the right zone (x 325..649): the other box shows the left one.
        let shown = try kms.renderer.read(try #require(kms.shownBuffer(named: "HDMI-A-1")))
        #expect(shown.pixel(x: 0, y: 0) == (0, 200, 0) && shown.pixel(x: 319, y: 239) == (0, 200, 0))
    }

    @Test("two portrait screens side by side (a wall turned 90°): a 480x320 upright canvas, each screen its half turned clockwise")
    func turnedWall() throws {
        // The left half red, the right half green, a blue band along the top of both.
        var layout = ScreenLayout(zones: [
            ScreenLayout.Zone(id: "left", width: .fraction(0.5), background: RGBColor(r: 200, g: 0, b: 0)),
            ScreenLayout.Zone(id: "right", x: .fraction(0.5), width: .fraction(0.5), background: RGBColor(r: 0, g: 200, b: 0)),
            ScreenLayout.Zone(id: "top", height: .pixels(20), background: RGBColor(r: 0, g: 0, b: 200)),
        ])
        layout.rotation = 90
        layout.wall = ScreenLayout.Wall(outputs: ["HDMI-A-1", "HDMI-A-2"], columns: 2, bezel: .pixels(0))
        let (screen, opened) = try Self.composeThree(layout, on: FakeKMSDevice.screens(2))
        let kms = try #require(opened.kms)
        #expect(screen.screen.canvas.width == 480 && screen.screen.canvas.height == 320)
        #expect(kms.wall == ["HDMI-A-1": PixelRect(x: 0, y: 0, width: 240, height: 320), "HDMI-A-2": PixelRect(x: 240, y: 0, width: 240, height: 320)])
        for (name, colour) in [("HDMI-A-1", (UInt8(200), UInt8(0), UInt8(0))), ("HDMI-A-2", (0, 200, 0))] {
            let shown = try kms.renderer.read(try #require(kms.shownBuffer(named: name)))
            if shown.width == 320 {
                // Turned by the compositor: the upright top (blue) along the right-hand side.
                #expect(shown.height == 240)
                #expect(shown.pixel(x: 319, y: 120) == (0, 0, 200) && shown.pixel(x: 300, y: 120) == (0, 0, 200), "\(name)")
                #expect(shown.pixel(x: 0, y: 0) == colour && shown.pixel(x: 299, y: 239) == colour, "\(name)")
            } else {
                // Turned by the plane: the buffer upright, its top blue.
                #expect(shown.width == 240 && shown.height == 320)
                #expect(shown.pixel(x: 120, y: 0) == (0, 0, 200) && shown.pixel(x: 0, y: 319) == colour, "\(name)")
            }
        }
        #expect(kms.counters.planeTurns + kms.counters.compositorTurns == 2 * kms.counters.composited)
    }

    @Test("a wall that names a screen not open, screens of two mode sizes, or millimetres on a screen with no size: refused, saying what to do")
    func refusals() throws {
        var layout = Self.halves()
        layout.wall = ScreenLayout.Wall(outputs: ["HDMI-A-1", "HDMI-A-3"], columns: 2)
        let kms = try KMSDisplay(device: FakeKMSDevice.screens(2), renderer: MemoryScanoutRenderer())
        #expect(throws: LayoutOutputError("wall: HDMI-A-3 is not open (open: HDMI-A-1, HDMI-A-2)")) { try LayoutOutput.canvasSize(of: layout, on: kms) }
        layout.wall = ScreenLayout.Wall(outputs: ["HDMI-A-1", "HDMI-A-2"], columns: 2, bezel: .millimetres(5))
        #expect(throws: LayoutOutputError("wall: HDMI-A-1 does not say its width in millimetres (EDID); give the bezel in pixels")) {
            try LayoutOutput.canvasSize(of: layout, on: kms)
        }
        let mixed = try KMSDisplay(device: FakeKMSDevice.screens(2, modes: [1: KMSMode(width: 640, height: 480, refresh: 60, preferred: true)]),
                                   renderer: MemoryScanoutRenderer())
        layout.wall?.bezel = .pixels(0)
        #expect(throws: LayoutOutputError("wall: the screens' modes differ (320x240, 640x480); give one mode")) { try LayoutOutput.canvasSize(of: layout, on: mixed) }
    }
}
