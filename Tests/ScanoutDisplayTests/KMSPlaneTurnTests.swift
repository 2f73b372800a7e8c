#if canImport(Glibc)
import Glibc
#endif
import ScanoutCore
import ScanoutDecode
import ScanoutDisplay
import ScanoutKMS
import ScanoutRender
import ScanoutTestSupport
import ScanoutTesting
import Testing

/// A screen turned by `turn` (clockwise) onto a 640x480 mode: a canvas of 480x640 (portrait) or
/// 640x480 (turned 180), a picture above another.
private func turned(_ turn: Int) -> Canvas {
    let o = Orientation(rotation: turn)
    let (w, h) = o.swapsDimensions ? (480, 640) : (640, 480)
    return Canvas(width: w, height: h, background: RGBColor(r: 0, g: 0, b: 90),
                  zones: [Canvas.Zone(rect: PixelRect(x: 0, y: 0, width: w, height: h / 2), composition: Composition(background: RGBColor(r: 90, g: 0, b: 0))),
                          Canvas.Zone(rect: PixelRect(x: 40, y: h / 2 + 40, width: w - 80, height: h / 2 - 80))],
                  turn: o)
}

private let allTurns: KMSRotation = [.rotate0, .rotate90, .rotate180, .rotate270]

/// What a plane's rotation offers, the canvas's clockwise turn, and the plane rotation expected.
struct PlaneTurn: Sendable, CustomTestStringConvertible {
    var offered: KMSRotation
    var turn: Int
    var rotation: KMSRotation
    var testDescription: String { "turn \(turn) on \(offered): \(rotation)" }
}

@Suite("a turned canvas on KMS: the primary plane's rotation, else the compositor")
struct KMSPlaneTurnTests {
    @Test("a plane whose rotation offers the turn: a TEST_ONLY commit first, then every commit turns the plane; the buffer is the canvas upright",
          arguments: [PlaneTurn(offered: allTurns, turn: 90, rotation: .rotate270), PlaneTurn(offered: allTurns, turn: 180, rotation: .rotate180),
                      PlaneTurn(offered: [.rotate0, .rotate90], turn: 270, rotation: .rotate90)])
    func turnedByThePlane(_ c: PlaneTurn) throws {
        let (offered, turn, rotation) = (c.offered, c.turn, c.rotation)
        let device = FakeKMSDevice.oneMode(rotations: offered)
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
        var said: [String] = []
        display.onTurnChosen = { said.append("\($0): \($1)") }
        let f = try Fixtures.frames("counter.mp4", count: 3)
        let canvas = turned(turn)
        for i in 0..<3 { try display.present(canvas, frames: [f[i], f[(i + 1) % 3]]) }
        #expect(said == ["HDMI-A-1: plane (\(rotation))"])
        #expect(display.turnPaths["HDMI-A-1"] == .plane(rotation))
        #expect(display.counters.planeTurns == 3 && display.counters.compositorTurns == 0)
        // The decision's TEST_ONLY commit came before the first real one, and carried the rotation.
        let firstReal = try #require(device.commits.firstIndex { $0.accepted && !$0.flags.contains(.testOnly) })
        #expect(device.commits[..<firstReal].contains { $0.flags.contains(.testOnly) && $0.request.value(of: 40, "rotation") == rotation.rawValue })
        // Every real commit: the upright buffer, its whole, turned onto the whole mode.
        let upright = (canvas.width, canvas.height)
        var uprightCanvas = canvas
        uprightCanvas.turn = .identity
        for commit in device.commits where commit.accepted && !commit.flags.contains(.testOnly) {
            #expect(commit.request.value(of: 40, "rotation") == rotation.rawValue)
            #expect(commit.request.value(of: 40, "SRC_W") == UInt64(upright.0) << 16 && commit.request.value(of: 40, "SRC_H") == UInt64(upright.1) << 16)
            #expect(commit.request.value(of: 40, "CRTC_W") == 640 && commit.request.value(of: 40, "CRTC_H") == 480)
        }
        let buffer = try #require(display.shownBuffer(named: "HDMI-A-1"))
        #expect(buffer.width == upright.0 && buffer.height == upright.1)
        #expect(try display.renderer.read(buffer) == (try CPUCompositor().compose([f[2], f[0]], on: uprightCanvas)))
    }

    @Test("back to an upright canvas after a turned one: the plane is put back to rotate-0 and the buffers to the mode's size; restore puts back what was found")
    func uprightAgain() throws {
        let device = FakeKMSDevice.oneMode(rotations: allTurns)
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
        let f = try Fixtures.frames("counter.mp4", count: 2)
        try display.present(turned(90), frames: [f[0], f[1]])
        #expect(device.value(of: 40, "rotation") == KMSRotation.rotate270.rawValue)
        let landscape = Canvas(width: 640, height: 480, zones: [Canvas.Zone(rect: PixelRect(x: 0, y: 0, width: 640, height: 480))])
        try display.present(landscape, frames: [f[1]])
        #expect(device.value(of: 40, "rotation") == KMSRotation.rotate0.rawValue)
        let buffer = try #require(display.shownBuffer(named: "HDMI-A-1"))
        #expect(buffer.width == 640 && buffer.height == 480)
        #expect(try display.renderer.read(buffer) == (try CPUCompositor().compose([f[1]], on: landscape)))
        try display.present(turned(90), frames: [f[0], f[1]])
        display.restore()
        #expect(device.commits.last?.request.value(of: 40, "rotation") == 1)
        #expect(device.value(of: 40, "rotation") == 1)
    }

    @Test("a plane without a rotation property, one whose rotation lacks the turn, and one whose TEST_ONLY refuses it: the compositor turns the canvas",
          arguments: ["none", "lacks", "refused"])
    func turnedByTheCompositor(plane: String) throws {
        let device = FakeKMSDevice.oneMode(rotations: plane == "none" ? nil : plane == "lacks" ? [.rotate0, .rotate180] : allTurns)
        if plane == "refused" { device.reject(.property(40, "rotation")) }
        let display = try KMSDisplay(device: device, renderer: MemoryScanoutRenderer())
        var said: [String] = []
        display.onTurnChosen = { said.append("\($0): \($1)") }
        let f = try Fixtures.frames("counter.mp4", count: 3)
        let canvas = turned(90)
        for i in 0..<3 { try display.present(canvas, frames: [f[i], f[(i + 1) % 3]]) }
        let reason = switch plane {
        case "none": "the primary plane has no rotation property"
        case "lacks": "the primary plane's rotation offers rotate-0|rotate-180, not rotate-270"
        default: "TEST_ONLY refused rotate-270: atomic commit rejected (errno \(EINVAL)): commits setting rotation of object 40 are refused"
        }
        #expect(said == ["HDMI-A-1: compositor (\(reason))"])
        #expect(display.turnPaths["HDMI-A-1"] == .compositor(reason))
        #expect(display.counters.planeTurns == 0 && display.counters.compositorTurns == 3)
        // No accepted commit touched the rotation; the buffer is the mode's, the canvas turned in it.
        #expect(device.commits.filter(\.accepted).allSatisfy { $0.request.value(of: 40, "rotation") == nil })
        let buffer = try #require(display.shownBuffer(named: "HDMI-A-1"))
        #expect(buffer.width == 640 && buffer.height == 480)
        let shown = try display.renderer.read(buffer)
        #expect(shown == (try CPUCompositor().compose([f[2], f[0]], on: canvas)))
        // The turned reference is the upright picture turned clockwise: its top-left corner is
        // the upright bottom-left one.
        var upright = canvas
        upright.turn = .identity
        let picture = try CPUCompositor().compose([f[2], f[0]], on: upright)
        #expect(shown.pixel(x: 0, y: 0) == picture.pixel(x: 0, y: 639) && shown.pixel(x: 639, y: 479) == picture.pixel(x: 479, y: 0))
    }
}
