import ArgumentParser
import ScanoutDisplay
import ScanoutMedia
import ScanoutRender

struct Probe: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what this machine can do (outputs, EGL/GLES, VA-API) and, given an input, its video stream."
    )

    @Argument(help: "Optional file path or URL to describe, - for standard input.") var input: String?
    @Flag(help: "Print the machine's outputs, planes, EGL and VA-API as JSON (no input description).") var json = false
    @OptionGroup var options: InputOptions

    func run() throws {
        options.installLog()
        try runReporting {
            var machine = MachineProbe.report()
            let environment = try options.decoder.environment
            if json {
                machine.playerTypes = DecoderSelector.verdicts(environment: environment).map {
                    .init(type: $0.type.rawValue, available: $0.available, reason: $0.reason.description)
                }
                print(try MachineProbe.json(machine))
                return
            }
            let out = OutputSelector.choose()
            print("output:   \(out.kind.rawValue) (\(out.reason))")
            for c in OutputSelector.cards() {
                print("  \(c.path): driver \(c.driver), \(c.connectors) connectors, \(c.crtcs) CRTCs, connected: \(c.connectedConnectors.isEmpty ? "none" : c.connectedConnectors.joined(separator: ", "))")
            }
            for line in MachineProbe.table(machine) { print(line) }
            if let headless = machine.egl.first { for line in MachineProbe.headlessLines(headless) { print(line) } }
            print("va-api:   \(machine.vaapi)")
            print("nvdec:    \(machine.nvdec)")
            let d = try input.map { try Demuxer(input: mediaInput($0), options: options.demuxer) }
            print("player types\(d == nil ? "" : " (for the input's stream)"):")
            for v in DecoderSelector.verdicts(environment: environment, demuxer: d) {
                print("  \(pad(v.type.rawValue + ":", 8))\(v.available ? "available" : "unavailable"): \(v.reason)")
            }
            let auto = DecoderSelector.verdicts(environment: environment, demuxer: d).first { $0.available }?.type ?? .sw
            print("  auto -> \(auto)")
            guard let input, let d else { return }
            let v = d.video
            print("input:    \(input)")
            print("  container: \(d.formatName)")
            print("  video:     stream \(v.index), \(v.codecName)\(v.profile.map { " (\($0))" } ?? ""), \(v.width)x\(v.height), \(v.pixelFormat), \(v.pixelFormat.bitDepth)-bit")
            print("  rate:      \(v.frameRate.isValid ? "\(v.frameRate) (\(format2(v.frameRate.doubleValue)) fps)" : "unknown"), time base \(v.timeBase)")
            print("  duration:  \(v.durationSeconds.map { format2($0) + " s" } ?? "unknown"), \(v.declaredFrameCount.map { "\($0) frames declared" } ?? "frame count not declared")")
            print("  colour:    \(v.colorSpace), \(v.colorRange.rawValue) range; matrix used: \(ColorSpace(rawValue: UInt32(Scaler.effectiveMatrix(for: v.colorSpace))))")
            print("  shape:     sample aspect \(v.sampleAspectRatio.isValid ? v.sampleAspectRatio.description : "1/1"), \(v.orientation)")
        }
    }
}
