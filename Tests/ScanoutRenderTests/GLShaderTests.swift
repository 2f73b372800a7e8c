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
        #expect(names == ["overlay.frag", "rgb.frag", "video.vert", "yuv_planar.frag", "yuv_semiplanar.frag"])
        for name in names {
            let r = try Proc.run("glslangValidator", [Self.directory.appendingPathComponent(name).path])
            #expect(r.status == 0, "\(name): \(r.stdoutText) \(r.stderrText)")
        }
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
