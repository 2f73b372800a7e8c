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

    @Test("every stage in shaders/ passes glslangValidator (GLSL ES 3.00)")
    func validate() throws {
        let names = Self.files
        #expect(names == ["overlay.frag", "rgb.frag", "video.vert", "yuv.frag"])
        for name in names {
            let r = try Proc.run("glslangValidator", [Self.directory.appendingPathComponent(name).path])
            #expect(r.status == 0, "\(name): \(r.stdoutText) \(r.stderrText)")
        }
    }

    @Test("the two-plane variant of yuv.frag (SEMI_PLANAR defined) passes glslangValidator too")
    func validateSemiPlanar() throws {
        let scratch = try Scratch()
        let path = scratch.path("yuv_semiplanar.frag")
        let source = try String(contentsOf: Self.directory.appendingPathComponent("yuv.frag"), encoding: .utf8)
        let variant = GLRenderer.defining("SEMI_PLANAR", in: source)
        #expect(variant.split(separator: "\n").prefix(2).map(String.init) == ["#version 300 es", "#define SEMI_PLANAR 1"])
        try variant.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try Proc.run("glslangValidator", [path])
        #expect(r.status == 0, "\(r.stdoutText) \(r.stderrText)")
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
