import Foundation
import ScanoutTestSupport
import Testing

/// NVDEC's selection, refusal reasons and fallback, as the command line shows them, on a machine
/// without NVIDIA's driver: the real absence of libcuda, and a fake libcuda/libnvcuvid (built
/// from Tests/Fixtures/fake-cuda.c) for the reasons past loading.
@Suite("NVDEC selection and reasons without a GPU")
struct NVDECSelectionTests {
    /// A folder holding a fake libcuda.so.1 (and libnvcuvid.so.1 when asked).
    static func fakeDriver(nvcuvid: Bool) throws -> Scratch {
        let scratch = try Scratch()
        let source = Fixtures.packageRoot.appendingPathComponent("Tests/Fixtures/fake-cuda.c").path
        let cc = try Proc.run(try Proc.which("cc"), ["-shared", "-fPIC", "-o", scratch.path("libcuda.so.1"), source])
        #expect(cc.status == 0, "\(cc.stderrText)")
        if nvcuvid {
            let n = try Proc.run(try Proc.which("cc"), ["-shared", "-fPIC", "-DNVCUVID", "-o", scratch.path("libnvcuvid.so.1"), source])
            #expect(n.status == 0, "\(n.stderrText)")
        }
        return scratch
    }

    static func env(_ extra: [String: String] = [:], libraries: Scratch? = nil) -> [String: String] {
        var e = ProcessInfo.processInfo.environment
        e["SCANOUT_FAULTS"] = nil
        if let libraries { e["LD_LIBRARY_PATH"] = libraries.url.path + (e["LD_LIBRARY_PATH"].map { ":" + $0 } ?? "") }
        for (k, v) in extra { e[k] = v }
        return e
    }

    static let noLibcuda = "no libcuda (libcuda.so.1: cannot open shared object file: No such file or directory)"

    @Test("no libcuda: probe names it for nvdec and for hw (both backends' reasons under auto), text and JSON")
    func probeWithoutLibcuda() throws {
        let text = try CLI.run(["probe"], environment: Self.env())
        #expect(text.status == 0)
        #expect(text.stdoutText.contains("nvdec:    unavailable: \(Self.noLibcuda)\n"))
        #expect(text.stdoutText.contains("  hw:     unavailable: VA-API: no render node (/dev/dri/renderD* missing); NVDEC: \(Self.noLibcuda)\n"))
        let nvdec = try CLI.run(["probe", "--hw-backend", "nvdec"], environment: Self.env())
        #expect(nvdec.stdoutText.contains("  hw:     unavailable: \(Self.noLibcuda)\n"))
        #expect(nvdec.stdoutText.contains("  native: unavailable: no KMS display\n"))

        let json = try CLI.run(["probe", "--json", "--hw-backend", "nvdec"], environment: Self.env())
        #expect(json.status == 0)
        let doc = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        #expect(doc["nvdec"] as? String == "unavailable: \(Self.noLibcuda)")
        let types = try #require(doc["playerTypes"] as? [[String: Any]])
        #expect(types.map { $0["type"] as? String } == ["native", "hw", "sw"])
        #expect(types[1]["available"] as? Bool == false)
        #expect(types[1]["reason"] as? String == Self.noLibcuda)
        #expect(types[2]["available"] as? Bool == true)
    }

    @Test("--hw-backend nvdec with no libcuda: software with the reason, or exit 1 with --no-fallback; frames equal ffmpeg's")
    func decideWithoutLibcuda() throws {
        let path = try Fixtures.path("counter.mp4")
        let r = try CLI.run(["framemd5", path, "--player-type", "hw", "--hw-backend", "nvdec", "-v"], environment: Self.env())
        #expect(r.status == 0)
        #expect(r.stderrLines == ["scanout: decoder: sw, libavcodec h264 (software) (requested hw by --player-type; hw: \(Self.noLibcuda))"])
        #expect(r.stdoutText.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") } == (try Proc.ffmpegFrameMD5Lines(path)))

        let strict = try CLI.run(["framemd5", path, "--player-type", "hw", "--hw-backend", "nvdec", "--no-fallback"], environment: Self.env())
        #expect(strict.status == 1)
        #expect(strict.stderrLines == ["scanout: \(path): player type hw unavailable: \(Self.noLibcuda) (--no-fallback given; drop it to fall back to software, or use --player-type sw)"])
        #expect(strict.stdout.isEmpty)
    }

    @Test("native is VA-API only: --hw-backend nvdec says why native cannot be had")
    func nativeNeedsVAAPI() throws {
        let path = try Fixtures.path("counter.mp4")
        let r = try CLI.run(["framemd5", path, "--player-type", "native", "--hw-backend", "nvdec", "--no-fallback"], environment: Self.env())
        #expect(r.status == 1)
        #expect(r.stderrText.contains("player type native unavailable: no KMS display"))
    }

    @Test("a libcuda whose cuInit fails: the error number and CUDA's name for it", arguments: [("100", "cuInit failed with error 100 (CUDA_ERROR_NO_DEVICE)"),
                                                                                              ("999", "cuInit failed with error 999 (CUDA_ERROR_UNKNOWN)"),
                                                                                              ("3", "cuInit failed with error 3 (error 3)")])
    func cuInitFails(status: String, reason: String) throws {
        let libs = try Self.fakeDriver(nvcuvid: true)
        let r = try CLI.run(["probe", "--hw-backend", "nvdec"], environment: Self.env(["FAKE_CUDA_INIT": status], libraries: libs))
        #expect(r.status == 0)
        #expect(r.stdoutText.contains("nvdec:    unavailable: \(reason)\n"), "\(r.stdoutText)")
        #expect(r.stdoutText.contains("  hw:     unavailable: \(reason)\n"))
    }

    @Test("no CUDA device, no NVDEC library, and a device libavutil cannot open: each its own reason")
    func laterReasons() throws {
        let withoutNVCUVID = try Self.fakeDriver(nvcuvid: false)
        let none = try CLI.run(["probe", "--hw-backend", "nvdec"], environment: Self.env(["FAKE_CUDA_DEVICES": "0"], libraries: withoutNVCUVID))
        #expect(none.stdoutText.contains("nvdec:    unavailable: CUDA reports no device\n"), "\(none.stdoutText)")
        let noNVDEC = try CLI.run(["probe", "--hw-backend", "nvdec"], environment: Self.env(libraries: withoutNVCUVID))
        #expect(noNVDEC.stdoutText.contains("nvdec:    unavailable: no NVDEC (libnvcuvid.so.1: cannot open shared object file: No such file or directory)\n"), "\(noNVDEC.stdoutText)")

        // Loading and cuInit pass; libavutil's own CUDA loader finds the fake lacking, so the
        // device does not open: hw falls back to software with that reason, frames exact.
        let full = try Self.fakeDriver(nvcuvid: true)
        let probe = try CLI.run(["probe", "--hw-backend", "nvdec"], environment: Self.env(libraries: full))
        #expect(probe.stdoutText.contains("nvdec:    available: Fake CUDA device 0 (cuda:0), no CUDA-GL interop (frames are downloaded for GL)\n"), "\(probe.stdoutText)")
        let path = try Fixtures.path("counter.mp4")
        let r = try CLI.run(["framemd5", path, "--player-type", "hw", "--hw-backend", "nvdec", "-v"], environment: Self.env(libraries: full))
        #expect(r.status == 0)
        let line = try #require(r.stderrLines.last)
        #expect(line.hasPrefix("scanout: decoder: sw, libavcodec h264 (software) (requested hw by --player-type; hw: init failed: av_hwdevice_ctx_create(CUDA, device 0): "), "\(r.stderrText)")
        #expect(r.stdoutText.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") } == (try Proc.ffmpegFrameMD5Lines(path)))
    }

    @Test("the binary does not link libcuda or libnvcuvid")
    func notLinked() throws {
        let ldd = try Proc.run(try Proc.which("ldd"), [try CLI.binary.get()])
        #expect(ldd.status == 0)
        #expect(!ldd.stdoutText.contains("libcuda.so"))
        #expect(!ldd.stdoutText.contains("libnvcuvid"))
    }
}
