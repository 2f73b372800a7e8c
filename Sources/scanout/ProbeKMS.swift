import Foundation
import ScanoutDisplay
import ScanoutKMS
import ScanoutRender
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio

/// What `scanout probe` reports of the machine, as plain values: printed as a table, or as JSON
/// with `--json`.
struct MachineReport: Codable {
    struct Mode: Codable { var name: String; var preferred: Bool }
    struct Connector: Codable {
        var name: String
        var id: UInt32
        var type: String
        var status: String
        var modes: [Mode]
        var properties: [String: UInt64]
        /// "Undesired", "Desired", "Enabled", or nil when the connector has no such property.
        var contentProtection: String?
        /// What its EDID says of HDR (the CTA-861 HDR Static Metadata and Colorimetry blocks);
        /// nil when it has no EDID or neither block.
        var hdr: DisplayHDRCapability?
    }
    struct Plane: Codable {
        var id: UInt32
        var type: String
        var possibleCRTCs: UInt32
        var formats: [String]
        /// Format → modifiers (hex), from IN_FORMATS.
        var modifiers: [String: [String]]
    }
    struct Card: Codable {
        var path: String
        var driver: String
        var error: String?
        var crtcs: [UInt32]
        var connectors: [Connector]
        var planes: [Plane]
    }
    struct EGL: Codable {
        /// "surfaceless", "device" or "default" for the headless entry (the first; "headless" when
        /// no platform opened), "gbm PATH" for a card's.
        var platform: String
        var available: Bool
        var reason: String?
        /// The headless entry's platform choice: the device used, and why earlier platforms were passed over.
        var headlessPlatform: HeadlessPlatformChoice?
        /// Why GLES renders in software here (llvmpipe), nil when it looks like a GPU.
        var softwareRasterizer: String?
        var vendor: String?
        var version: String?
        var glesRenderer: String?
        var glesVersion: String?
        var dmaBufImport: Bool
        var dmaBufImportModifiers: Bool
        var extensions: [String]
    }
    var output: String
    var outputReason: String
    var cards: [Card]
    var egl: [EGL]
    var vaapi: String
    /// NVDEC (CUDA) availability, with the reason when unavailable.
    var nvdec: String
    /// The decoder selector's verdict on each player type, with its reason.
    struct Verdict: Codable { var type: String; var available: Bool; var reason: String }
    var playerTypes: [Verdict] = []
    /// The input's video stream, with `probe INPUT`; `playerTypes` are then for this stream.
    var input: Input?

    /// What `probe INPUT` says of the input's video stream.
    struct Input: Codable {
        var input: String
        var container: String
        var stream: Int
        var codec: String
        var profile: String?
        var width: Int
        var height: Int
        var pixelFormat: String
        var bitDepth: Int
        /// FFmpeg's guess, "num/den" and frames per second; nil when unknown.
        var frameRate: String?
        var framesPerSecond: Double?
        var timeBase: String
        var durationSeconds: Double?
        var declaredFrameCount: Int?
        var colorSpace: String
        var colorRange: String
        var colorPrimaries: String
        var colorTransfer: String
        /// "sdr", "pq" (HDR10) or "hlg", by the transfer.
        var dynamicRange: String
        /// HDR10's static metadata as the container states it; nil when it states none.
        var masteringDisplay: MasteringDisplay?
        var contentLightLevel: ContentLightLevel?
        /// The YUV→RGB matrix rendering uses (the stream's, or BT.601/BT.709 by size when unstated).
        var matrixUsed: String
        var sampleAspectRatio: String
        /// Degrees clockwise, then mirrored left–right when `mirrored`.
        var rotation: Int
        var mirrored: Bool
        /// Every stream: video, audio and subtitle tracks (`ProbeTrack`).
        var tracks: [ProbeTrack]
        /// No video stream (or only a cover picture): the audio plays with a still.
        var audioOnly: Bool

        init(input: String, demuxer d: Demuxer) {
            let v = d.video
            self.input = input
            container = d.formatName
            stream = v.index
            codec = v.codecName
            profile = v.profile
            width = v.width
            height = v.height
            pixelFormat = v.pixelFormat.description
            bitDepth = v.pixelFormat.bitDepth
            frameRate = v.frameRate.isValid ? v.frameRate.description : nil
            framesPerSecond = v.frameRate.isValid ? v.frameRate.doubleValue : nil
            timeBase = v.timeBase.description
            durationSeconds = v.durationSeconds
            declaredFrameCount = v.declaredFrameCount
            colorSpace = v.colorSpace.description
            colorRange = v.colorRange.rawValue
            colorPrimaries = v.colorPrimaries.description
            colorTransfer = v.colorTransfer.description
            dynamicRange = v.colorTransfer.dynamicRange.rawValue
            masteringDisplay = v.masteringDisplay
            contentLightLevel = v.contentLightLevel
            matrixUsed = ColorSpace(rawValue: UInt32(Scaler.effectiveMatrix(for: v.colorSpace))).description
            sampleAspectRatio = v.sampleAspectRatio.isValid ? v.sampleAspectRatio.description : "1/1"
            rotation = v.orientation.rotation
            mirrored = v.orientation.mirrored
            tracks = ProbeTrack.list(d.tracks)
            audioOnly = d.audioOnly
        }

        /// An HDR stream's static metadata from its first frame where the container states none
        /// (HEVC in MPEG-TS carries it in SEI only). Not for standard input, read once.
        mutating func takeFrameMetadata(from input: String, options: DemuxerOptions) {
            guard dynamicRange != "sdr", input != "-", masteringDisplay == nil || contentLightLevel == nil,
                  let reader = try? FrameReader(input: input, demuxerOptions: options) else { return }
            let frame = VideoFrame()
            guard (try? reader.next(into: frame)) == true else { return }
            masteringDisplay = masteringDisplay ?? frame.masteringDisplay
            contentLightLevel = contentLightLevel ?? frame.contentLightLevel
        }

        /// "SDR", or the HDR kind with its static metadata, on one line.
        var hdrSummary: String {
            guard dynamicRange != "sdr" else { return "SDR" }
            var parts = [dynamicRange == "pq" ? "HDR (PQ)" : "HDR (HLG)"]
            if let m = masteringDisplay {
                func xy(_ p: Chromaticity?) -> String { p.map { String(format: "%.4f,%.4f", $0.x, $0.y) } ?? "?" }
                var text = "mastered on R \(xy(m.red)) G \(xy(m.green)) B \(xy(m.blue)) W \(xy(m.white))"
                if let lo = m.minLuminance, let hi = m.maxLuminance { text += String(format: ", %.4f to %.0f cd/m²", lo, hi) }
                parts.append(text)
            } else {
                parts.append("no mastering display stated")
            }
            parts.append(contentLightLevel.map { "MaxCLL \($0.maxCLL), MaxFALL \($0.maxFALL) cd/m²" } ?? "no light levels stated")
            return parts.joined(separator: "; ")
        }

        /// The lines of the human table.
        var lines: [String] {
            if audioOnly {
                return ["input:    \(input)", "  container: \(container)",
                        "  video:     none (audio only: the cover picture, else the slate, is shown)",
                        "  duration:  \(durationSeconds.map { format2($0) + " s" } ?? "unknown")"]
                    + tracks.filter { $0.kind == "audio" || $0.kind == "subtitle" || $0.kind == "video" }.map(\.line)
            }
            return [
                "input:    \(input)",
                "  container: \(container)",
                "  video:     stream \(stream), \(codec)\(profile.map { " (\($0))" } ?? ""), \(width)x\(height), \(pixelFormat), \(bitDepth)-bit",
                "  rate:      \(frameRate.map { "\($0) (\(format2(framesPerSecond ?? 0)) fps)" } ?? "unknown"), time base \(timeBase)",
                "  duration:  \(durationSeconds.map { format2($0) + " s" } ?? "unknown"), \(declaredFrameCount.map { "\($0) frames declared" } ?? "frame count not declared")",
                "  colour:    \(colorSpace), \(colorRange) range; matrix used: \(matrixUsed)",
                "  transfer:  \(colorTransfer), primaries \(colorPrimaries): \(hdrSummary)",
                "  shape:     sample aspect \(sampleAspectRatio), \(Orientation(rotation: rotation, mirrored: mirrored))",
            ] + tracks.filter { $0.kind == "audio" || $0.kind == "subtitle" }.map(\.line)
        }
    }
}

enum MachineProbe {
    /// A screen's HDR capability on one line: its EOTFs, luminance and colorimetry.
    static func hdrLine(_ h: DisplayHDRCapability) -> String {
        var parts = [h.eotfs.isEmpty ? "no HDR static metadata block" : "EOTFs " + h.eotfs.map(\.rawValue).joined(separator: ", ")]
        if let max = h.maxLuminance { parts.append(String(format: "max %.0f cd/m²", max)) }
        if let avg = h.maxFrameAverageLuminance { parts.append(String(format: "frame-average %.0f cd/m²", avg)) }
        if let min = h.minLuminance { parts.append(String(format: "min %.4f cd/m²", min)) }
        parts.append(h.colorimetry.isEmpty ? "no colorimetry block" : "colorimetry " + h.colorimetry.joined(separator: ", "))
        return parts.joined(separator: "; ")
    }

    static func report() -> MachineReport {
        let choice = OutputSelector.choose()
        var cards: [MachineReport.Card] = []
        var egl: [MachineReport.EGL] = [headlessEGL()]
        for info in OutputSelector.cards() {
            var card = MachineReport.Card(path: info.path, driver: info.driver, error: nil, crtcs: [], connectors: [], planes: [])
            do {
                let device = try DRMDevice(path: info.path, requireMaster: false)
                let res = try device.resources()
                card.crtcs = res.crtcs.map(\.id)
                card.connectors = res.connectors.map { c in
                    let cp = c.properties["Content Protection"].map { ["Undesired", "Desired", "Enabled"][Int(min($0, 2))] }
                    let edid = c.properties["EDID"].flatMap { $0 == 0 ? nil : try? device.propertyBlob(UInt32(truncatingIfNeeded: $0)) }
                    return MachineReport.Connector(name: c.name, id: c.id, type: c.typeName, status: c.connection.rawValue,
                                                   modes: c.modes.map { .init(name: $0.description, preferred: $0.preferred) },
                                                   properties: c.properties, contentProtection: cp,
                                                   hdr: edid.flatMap { DisplayHDRCapability.parse(edid: $0) })
                }
                card.planes = res.planes.map { p in
                    var mods: [String: [String]] = [:]
                    for (format, list) in p.modifiers { mods[FourCC.name(format)] = list.map { "0x" + String($0, radix: 16) } }
                    return MachineReport.Plane(id: p.id, type: p.type.rawValue, possibleCRTCs: p.possibleCRTCs,
                                               formats: p.formats.map(FourCC.name), modifiers: mods)
                }
            } catch {
                card.error = "\(error)"
            }
            cards.append(card)
            egl.append(gbmEGL(info.path))
        }
        return MachineReport(output: choice.kind.rawValue, outputReason: choice.reason, cards: cards, egl: egl, vaapi: VAAPIProbe.summary(), nvdec: CUDADriver.summary())
    }

    static func headlessEGL() -> MachineReport.EGL {
        let caps = EGLProbe.headless()
        return describe(caps, platform: caps.platform?.platform.rawValue ?? "headless")
    }

    static func gbmEGL(_ path: String) -> MachineReport.EGL {
        do {
            return describe(EGLProbe.describe(try EGLDisplayContext(gbmDevicePath: path)), platform: "gbm \(path)")
        } catch {
            return describe(.unavailable("\(error)"), platform: "gbm \(path)")
        }
    }

    static func describe(_ c: EGLCapabilities, platform: String) -> MachineReport.EGL {
        guard c.available else {
            return .init(platform: platform, available: false, reason: c.reason, dmaBufImport: false, dmaBufImportModifiers: false, extensions: [])
        }
        return .init(platform: platform, available: true, reason: nil, headlessPlatform: c.platform, softwareRasterizer: c.softwareRasterizer,
                     vendor: c.vendor, version: c.version, glesRenderer: c.glesRenderer, glesVersion: c.glesVersion,
                     dmaBufImport: c.dmaBufImport, dmaBufImportModifiers: c.dmaBufImportModifiers, extensions: c.extensions)
    }

    static func json(_ r: MachineReport) throws -> String {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try e.encode(r), as: UTF8.self)
    }

    /// The headless EGL lines of the human table.
    static func headlessLines(_ e: MachineReport.EGL) -> [String] {
        guard e.available else { return ["egl:      unavailable: \(e.reason ?? "unknown")"] }
        var lines = ["egl:      \(e.vendor ?? "?") EGL \(e.version ?? "?"); GLES \(e.glesVersion ?? "?") on \(e.glesRenderer ?? "?")\(e.softwareRasterizer.map { " (\($0))" } ?? "")"]
        if let choice = e.headlessPlatform {
            lines.append("  headless platform: \(choice.platform.rawValue)\(choice.device.map { ", \($0)" } ?? "")")
            for p in choice.passedOver { lines.append("    \(p.platform.rawValue) passed over: \(p.reason)") }
        }
        lines.append("  dma-buf import: \(e.dmaBufImport ? "yes" : "no")\(e.dmaBufImportModifiers ? " (with modifiers)" : ""), surfaceless context: \(e.extensions.contains("EGL_KHR_surfaceless_context") ? "yes" : "no")")
        return lines
    }

    /// The KMS and EGL part of the human table.
    static func table(_ r: MachineReport) -> [String] {
        var lines: [String] = []
        for card in r.cards {
            lines.append("  \(card.path) (\(card.driver)): \(card.crtcs.count) CRTCs\(card.error.map { "; \($0)" } ?? "")")
            for c in card.connectors {
                let modes = c.modes.prefix(6).map { $0.name + ($0.preferred ? "*" : "") }.joined(separator: " ")
                let more = c.modes.count > 6 ? " (+\(c.modes.count - 6))" : ""
                lines.append("    connector \(c.name) [\(c.id)] \(c.status)\(modes.isEmpty ? "" : ": \(modes)\(more)")")
                lines.append("      content protection: \(c.contentProtection ?? "not supported (no property)")")
                lines.append("      hdr: \(c.hdr.map(Self.hdrLine) ?? "none stated (no EDID, or no HDR or colorimetry block)")")
            }
            for p in card.planes {
                let mods = p.modifiers.isEmpty ? "" : "; modifiers for \(p.modifiers.keys.sorted().joined(separator: ", "))"
                lines.append("    plane \(p.id) \(p.type), CRTCs 0x\(String(p.possibleCRTCs, radix: 16)): \(p.formats.joined(separator: " "))\(mods)")
            }
        }
        for e in r.egl.dropFirst() {
            if e.available {
                lines.append("egl (\(e.platform)): \(e.glesRenderer ?? "?"), \(e.glesVersion ?? "?"); dma-buf import: \(e.dmaBufImport ? "yes" : "no")\(e.dmaBufImportModifiers ? " (with modifiers)" : "")")
            } else {
                lines.append("egl (\(e.platform)): unavailable: \(e.reason ?? "?")")
            }
        }
        return lines
    }
}
