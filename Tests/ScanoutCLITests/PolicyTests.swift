import Foundation
import ScanoutTestSupport
import Testing

private func environment(_ extra: [String: String]) -> [String: String] {
    var env = ProcessInfo.processInfo.environment
    env["SCANOUT_KEYS"] = nil
    for (k, v) in extra { env[k] = v }
    return env
}

private func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

@Suite("content policy on the command line")
struct PolicyTests {
    @Test("capture: deny refuses framemd5, decode and render with exit 1, one line naming the policy, and no output")
    func captureDenyRefusesEveryCaptureCommand() async throws {
        let p = try await TokenPublisher()
        let clip = try Fixtures.path("counter.mp4")
        let token = try await p.token(capture: "deny")
        let out = p.scratch.path("out")
        let runs: [(String, [String], String)] = [
            ("framemd5", ["framemd5", clip, "-o", out + ".md5"], out + ".md5"),
            ("decode", ["decode", clip, "-o", out + ".y4m"], out + ".y4m"),
            ("decode to stdout", ["decode", clip, "-o", "-"], ""),
            ("render", ["render", clip, "--frames", "0", "--out", out + "-pngs"], out + "-pngs"),
        ]
        for (name, args, path) in runs {
            let r = try CLI.run(args + ["--token", token, "--keys", p.keyFile])
            #expect(r.status == 1, "\(name): \(r.stderrText)")
            #expect(r.stderrLines.count == 1, "\(name): \(r.stderrText)")
            #expect(r.stderrLines.first?.hasPrefix("scanout: ") == true)
            #expect(r.stderrText.contains("refused: the content policy denies capture (capture=deny"), "\(name): \(r.stderrText)")
            #expect(r.stdout.isEmpty, "\(name) wrote to stdout")
            if !path.isEmpty { #expect(!exists(path), "\(name) created \(path)") }
        }
    }

    @Test("capture: allow renders as without a token; the token comes from @FILE and the keys from SCANOUT_KEYS")
    func captureAllowWorks() async throws {
        let p = try await TokenPublisher()
        let clip = try Fixtures.path("counter.mp4")
        let tokenFile = p.scratch.path("token.jwt")
        try (try await p.token(url: clip, capture: "allow") + "\n").write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let env = environment(["SCANOUT_KEYS": p.keyFile])
        let plain = try CLI.run(["framemd5", clip], environment: environment([:]))
        #expect(plain.status == 0, "\(plain.stderrText)")
        // The input may be left out: the token's url names it.
        let tokened = try CLI.run(["framemd5", "--token", "@" + tokenFile], environment: env)
        #expect(tokened.status == 0, "\(tokened.stderrText)")
        #expect(tokened.stdoutText == plain.stdoutText)
        #expect(tokened.stderrLines == ["policy: externalOutput=allow hdcp=none capture=allow (token k1 (HS256)); playerType auto"])
    }

    @Test("content without a token (unrestricted) still renders")
    func unrestrictedContentRenders() throws {
        let scratch = try Scratch()
        let clip = try Fixtures.path("counter.mp4")
        let r = try CLI.run(["render", clip, "--frames", "0", "--out", scratch.path("pngs")], environment: environment([:]))
        #expect(r.status == 0, "\(r.stderrText)")
        #expect(exists(scratch.path("pngs/frame-000000.png")))
        let d = try CLI.run(["decode", clip, "-o", scratch.path("a.y4m"), "--frames", "2"], environment: environment([:]))
        #expect(d.status == 0, "\(d.stderrText)")
        #expect(exists(scratch.path("a.y4m")))
    }

    @Test("a key file's default policy applies to content without a token")
    func defaultPolicyFromTheKeyFile() throws {
        let scratch = try Scratch()
        let keys = scratch.path("keys.json")
        try #"{"keys": [], "defaultPolicy": {"externalOutput": "allow", "hdcp": "none", "capture": "deny"}}"#
            .write(toFile: keys, atomically: true, encoding: .utf8)
        let out = scratch.path("x.md5")
        let r = try CLI.run(["framemd5", try Fixtures.path("counter.mp4"), "-o", out, "--keys", keys], environment: environment([:]))
        #expect(r.status == 1)
        #expect(r.stderrText.contains("capture=deny"))
        #expect(!exists(out))
    }

    @Test("refused tokens: wrong url, bad signature, expired, no keys, unreadable @FILE — exit 1 and one line")
    func refusedTokens() async throws {
        let p = try await TokenPublisher()
        let clip = try Fixtures.path("counter.mp4")
        let other = try await TokenPublisher()
        let cases: [(args: [String], message: String)] = [
            (["framemd5", clip, "--token", try await p.token(url: "https://cdn.example/other.mp4", capture: "allow"), "--keys", p.keyFile],
             "the content token is for https://cdn.example/other.mp4, not for \(clip)"),
            (["framemd5", clip, "--token", try await other.token(capture: "allow"), "--keys", p.keyFile],
             "content token signature does not verify with key \"k1\""),
            (["framemd5", clip, "--token", try await p.token(capture: "allow", expiresIn: -10), "--keys", p.keyFile],
             "content token expired at"),
            (["framemd5", clip, "--token", try await p.token(capture: "allow")],
             "a content token needs keys to verify it: give --keys FILE or set SCANOUT_KEYS"),
            (["framemd5", clip, "--token", "@/nonexistent/token", "--keys", p.keyFile],
             "cannot read the content token from /nonexistent/token"),
            (["framemd5", "--keys", p.keyFile], "no input"),
            (["play", clip, "--untimed", "--token", "e30.e30.", "--keys", p.keyFile], "content token is malformed"),
            (["decode", clip, "-o", p.scratch.path("never.y4m"), "--token", "x.y.z", "--keys", "/nonexistent/keys.json"],
             "cannot read the key file /nonexistent/keys.json"),
        ]
        for c in cases {
            let r = try CLI.run(c.args, environment: environment([:]))
            #expect(r.status == 1, "\(c.args): \(r.stderrText)")
            #expect(r.stderrLines.count == 1, "\(c.args): \(r.stderrText)")
            #expect(r.stderrText.contains(c.message), "\(c.args): \(r.stderrText)")
            #expect(r.stdout.isEmpty)
        }
        #expect(!exists(p.scratch.path("never.y4m")))
    }

    @Test("play verifies the token and reports its policy")
    func playReportsThePolicy() async throws {
        let p = try await TokenPublisher()
        let clip = try Fixtures.path("counter.mp4")
        let r = try CLI.run(["play", clip, "--untimed", "--output", "headless", "--token", try await p.token(url: clip, capture: "deny"),
                             "--keys", p.keyFile], environment: environment([:]))
        #expect(r.status == 0, "\(r.stderrText)")
        #expect(r.stderrLines.contains("policy: externalOutput=allow hdcp=none capture=deny (token k1 (HS256)); playerType auto"))
    }
}
