import Foundation
import Testing
@testable import ScanoutRender
import ScanoutTestSupport

@Suite("Shaders")
struct GLShaderTests {
    static let directory = Fixtures.packageRoot.appendingPathComponent("shaders")
    static var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".vert") || $0.hasSuffix(".frag") }.sorted()
    }

    @Test("every stage in shaders/ that stands alone passes glslangValidator (GLSL ES 3.00); yuv.frag needs its defines")
    func validate() throws {
        let names = Self.files
        #expect(names == ["overlay.frag", "rgb.frag", "video.vert", "yuv.frag"])
        for name in names where name != "yuv.frag" {
            let r = try Proc.run("glslangValidator", [Self.directory.appendingPathComponent(name).path])
            #expect(r.status == 0, "\(name): \(r.stdoutText) \(r.stderrText)")
        }
    }

    @Test("every program the renderer builds passes glslangValidator in both dialects (GLSL ES 3.00 and 1.00)",
          arguments: [GLSLDialect.es300, .es100])
    func validateVariants(dialect: GLSLDialect) throws {
        let scratch = try Scratch()
        let variants: [(file: String, defines: [String])] = [
            ("video.vert", []), ("rgb.frag", []), ("rgb.frag", ["EXTERNAL"]), ("overlay.frag", []),
        ] + YUVProgramKey.all.map { ("yuv.frag", $0.defines) } + Self.toneMapped.map { ("yuv.frag", $0.defines) }
        #expect(variants.count == 4 + 64 + 36 + 24)
        for (i, v) in variants.enumerated() {
            let source = try String(contentsOf: Self.directory.appendingPathComponent(v.file), encoding: .utf8)
            let text = GLRenderer.prepared(source, dialect: dialect, defines: v.defines)
            let lines = text.split(separator: "\n").prefix(1 + v.defines.count).map(String.init)
            #expect(lines == [dialect == .es300 ? "#version 300 es" : "#version 100"] + v.defines.map { "#define \($0) 1" })
            // glslangValidator takes the stage from the file's extension.
            let path = scratch.path("\(i)-\(v.file)")
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let r = try Proc.run("glslangValidator", [path])
            #expect(r.status == 0, "\(v.file) \(v.defines) as \(dialect.rawValue): \(r.stdoutText) \(r.stderrText)")
        }
    }

    /// Tone mapping programs: every transfer and curve (three planes, cubic chroma), and every
    /// layout and chroma mode a tone mapped picture takes (PQ, hable); then every layout and
    /// chroma mode drawn into a 10-bit target (DEEP).
    static var toneMapped: [YUVProgramKey] {
        let curves = [false, true].flatMap { hlg in
            ToneCurve.allCases.map { YUVProgramKey(semiPlanar: false, bytePairs: true, luminanceAlpha: false, chroma: .cubic, tableMath: false,
                                                   tone: ToneProgram(hlg: hlg, curve: $0)) }
        }
        let layouts = YUVProgramKey.all.filter { !$0.tableMath && [.nearest, .cubic, .bilinear].contains($0.chroma) }
            .map { var k = $0; k.tone = ToneProgram(hlg: false, curve: .hable); return k }
        let deep = YUVProgramKey.all.filter { !$0.tableMath && [.nearest, .cubic, .bilinear].contains($0.chroma) }
            .map { var k = $0; k.deep = true; return k }
        return curves + layouts + deep
    }

    @Test("yuv.frag without a chroma mode, with exact taps but no table math, or tone mapped without a curve or with table math, stops at its #error")
    func yuvNeedsAChromaMode() throws {
        let scratch = try Scratch()
        let source = try String(contentsOf: Self.directory.appendingPathComponent("yuv.frag"), encoding: .utf8)
        let tone = ["CHROMA_NEAREST", "TONE_MAP"]
        for (i, defines) in [[], ["SEMI_PLANAR"], ["CHROMA_CUBIC_EXACT"], tone, tone + ["TABLE_MATH", "TONE_HABLE"]].enumerated() {
            let path = scratch.path("\(i)-yuv.frag")
            try GLRenderer.prepared(source, dialect: .es300, defines: defines).write(toFile: path, atomically: true, encoding: .utf8)
            let r = try Proc.run("glslangValidator", [path])
            #expect(r.status != 0)
            #expect(r.stdoutText.contains("#error"), "\(defines): \(r.stdoutText)")
        }
    }

    @Test("GLSL ES 1.00 has no integer operators: glslangValidator rejects one, so the check above can fail")
    func es100RejectsIntegerShift() throws {
        let scratch = try Scratch()
        let path = scratch.path("shift.frag")
        let text = GLRenderer.prepared("#version 300 es\nprecision highp float;\nuniform int u;\nvoid main() { gl_FragColor = vec4(float(u >> 1)); }\n",
                                       dialect: .es100)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try Proc.run("glslangValidator", [path])
        #expect(r.status != 0)
    }

    @Test("glslangValidator rejects a broken stage (the check above can fail)")
    func validatorRejects() throws {
        let scratch = try Scratch()
        let path = scratch.path("broken.frag")
        try "#version 300 es\nprecision mediump float;\nout vec4 c;\nvoid main() { c = undefinedThing; }\n".write(toFile: path, atomically: true, encoding: .utf8)
        let r = try Proc.run("glslangValidator", [path])
        #expect(r.status != 0)
        #expect(r.stdoutText.contains("undefinedThing"))
    }

    @Test("the embedded sources equal shaders/ (run shaders/embed.sh after editing a shader)")
    func embeddedUpToDate() throws {
        #expect(Set(GLShaderSources.all.keys) == Set(Self.files))
        for name in Self.files {
            var text = try String(contentsOf: Self.directory.appendingPathComponent(name), encoding: .utf8)
            if text.hasSuffix("\n") { text.removeLast() }
            #expect(GLShaderSources.all[name] == text, "\(name) differs from its embedded copy")
        }
    }
}
