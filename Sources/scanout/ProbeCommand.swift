import ArgumentParser
import ScanoutDisplay
import ScanoutKMS
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ScanoutRender

struct Probe: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what this machine can do (outputs, EGL/GLES, VA-API) and, given an input, its video stream."
    )

    @Argument(help: "Optional file path or URL to describe, - for standard input.") var input: String?
    @Flag(help: "Print the report as JSON: outputs, planes, EGL, VA-API, NVDEC, the verdict on each player type and, given an input, its video stream.") var json = false
    @OptionGroup var options: InputOptions

    func run() throws {
        options.installLog()
        try runReporting {
            var machine = MachineProbe.report()
            let environment = try options.decoder.environment
            var demuxerOptions = options.demuxer
            demuxerOptions.acceptsAudioOnly = true
            let d = try input.map { try Demuxer(input: mediaInput($0), options: demuxerOptions) }
            let verdicts = DecoderSelector.verdicts(environment: environment, demuxer: d)
            machine.playerTypes = verdicts.map { .init(type: $0.type.rawValue, available: $0.available, reason: $0.reason.description) }
            if let input, let d {
                var described = MachineReport.Input(input: input, demuxer: d)
                described.takeFrameMetadata(from: input, options: demuxerOptions)
                machine.input = described
            }
            if json {
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
            let sound = ALSADevice.list()
            print("audio:    \(sound.isEmpty ? "no ALSA playback device" : "\(sound.count) ALSA playback devices (--audio-device NAME)")")
            for h in sound { print("  \(h.name)\(h.description.isEmpty ? "" : ": " + h.description)") }
            print("player types\(d == nil ? "" : " (for the input's stream)"):")
            for v in verdicts {
                print("  \(pad(v.type.rawValue + ":", 8))\(v.available ? "available" : "unavailable"): \(v.reason)")
            }
            print("  auto -> \(verdicts.first { $0.available }?.type ?? .sw)")
            for line in machine.input?.lines ?? [] { print(line) }
        }
    }
}
