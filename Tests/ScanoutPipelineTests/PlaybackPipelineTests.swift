import Foundation
import ScanoutCore
import ScanoutDecode
import ScanoutDisplay
import ScanoutKMS
import ScanoutPipeline
import ScanoutPolicy
import ScanoutTestSupport
import ScanoutTesting
import Testing

/// What `PlaybackPipeline` assembles for `play`, `render` and `serve`: the output and its renderer
/// (each choice said in one line), the decoder options that go with it, and the content policy on
/// the outputs; without a screen, headless, and on a screen (the fake KMS device), native planes.
@Suite struct PlaybackPipelineTests {
    @Test func headlessWithTheCPURendererDecodesInSoftwareAndRestrictsNothing() throws {
        var notes: [String] = []
        let settings = OutputSettings(kind: .headless, renderer: .cpu, headlessWidth: 640, headlessHeight: 360)
        let pipeline = try PlaybackPipeline.open(settings) { notes.append($0) }
        #expect(notes == ["output: headless (headless output requested)", "renderer: cpu (asked for)"])
        #expect(pipeline.kms == nil)
        #expect(pipeline.display is HeadlessDisplay)
        #expect(pipeline.headlessRenderer?.renderer.name == "cpu")
        // No plane to put frames on, and the CPU renderer wants them in memory.
        #expect(pipeline.nativePlane == .unavailable("no KMS display (headless output)"))
        let decoding = pipeline.decoding(DecoderOptions())
        #expect(decoding.environment.nativePlane == .unavailable("no KMS display (headless output)"))
        #expect(decoding.destination == .cpu)
        #expect(decoding.surfaceAllocator == nil)
        // No output to restrict, nothing to restore, and no writeback to capture from.
        pipeline.apply(policy: .strictest)
        #expect(pipeline.outputGuard == nil)
        #expect(throws: KMSDisplayError.noWriteback(path: "the headless output")) { try pipeline.capture(to: "/nonexistent") }
        #expect(pipeline.close() == nil)
    }

    @Test func autoWithNoCardIsHeadlessAndSaysWhy() throws {
        let cards = try Scratch()
        var notes: [String] = []
        let pipeline = try PlaybackPipeline.open(OutputSettings(renderer: .cpu, directory: cards.url.path)) { notes.append($0) }
        #expect(notes.first == "output: headless (no KMS device (\(cards.url.path) has no card that opens))")
        #expect(pipeline.kms == nil)
        _ = pipeline.close()
    }

    @Test func kmsAskedForByNameFailsInsteadOfPlayingHeadless() throws {
        let cards = try Scratch()
        for settings in [OutputSettings(kind: .kms, renderer: .cpu, directory: cards.url.path),
                         OutputSettings(connectors: ["HDMI-A-1"], renderer: .cpu, directory: cards.url.path)] {
            #expect(settings.explicitKMS)
            var notes: [String] = []
            #expect(throws: KMSDisplayError.self) { _ = try PlaybackPipeline.open(settings) { notes.append($0) } }
            #expect(!notes.contains { $0.hasPrefix("output: headless") }, "\(notes)")
        }
        #expect(!OutputSettings().explicitKMS && !OutputSettings(kind: .headless).explicitKMS)
    }

    @Test func onAScreenFramesMayGoOnPlanesAndThePolicyGuardsEveryOutput() throws {
        let device = FakeKMSDevice.singleScreen(clock: ManualClock())
        let pipeline = PlaybackPipeline(display: try KMSDisplay(device: device, renderer: MemoryScanoutRenderer()))
        let kms = try #require(pipeline.kms)
        #expect(kms.nativePlanes)
        #expect(pipeline.nativePlane == .available)
        var base = DecoderOptions()
        base.playerType = .native
        let decoding = pipeline.decoding(base)
        #expect(decoding.environment.nativePlane == .available)
        #expect(decoding.destination == .gpu)
        #expect(decoding.playerType == .native)
        // The memory renderer has no GBM device for the stand-in to export into.
        #expect(decoding.surfaceAllocator == nil)
        // The first policy puts a guard on the outputs; the next one goes to the same guard.
        #expect(pipeline.outputGuard == nil)
        pipeline.apply(policy: .unrestricted)
        let guarding = try #require(pipeline.outputGuard)
        pipeline.apply(policy: .strictest)
        #expect(pipeline.outputGuard === guarding)
        _ = pipeline.close()
    }
}

/// Items authorised before anything is opened: the policy each token verified to, remembered for
/// the output side; content without a token under the default policy; capture refused up front.
@Suite struct ContentAuthorizerTests {
    @Test func withoutATokenTheDefaultPolicyAndNoHint() async throws {
        let authorizer = ContentAuthorizer()
        let item = try await authorizer.authorize(input: "/srv/a.mp4", token: nil)
        #expect(item.input == "/srv/a.mp4" && item.policy == .unrestricted && item.contentHint == nil)
        #expect(authorizer.policy(token: nil) == .unrestricted)
        // A token never verified here fails closed.
        #expect(authorizer.policy(token: "eyJhbGciOiJIUzI1NiJ9.e30.c2ln") == .strictest)
        await #expect(throws: AuthorizationError.self) { _ = try await authorizer.authorize(input: nil, token: nil) }
        await #expect(throws: AuthorizationError.self) { _ = try await authorizer.authorize(input: "/srv/a.mp4", token: "a.b.c") }
    }

    @Test func captureIsRefusedBeforeAnythingOpensWhenThePolicyDeniesIt() async throws {
        let strict = ContentAuthorizer(configuration: PolicyConfiguration(defaultPolicy: .strictest))
        await #expect(throws: CaptureRefused(purpose: .file, policy: .strictest)) {
            _ = try await strict.authorize(input: "/srv/a.mp4", token: nil, capture: .file)
        }
        let item = try await strict.authorize(input: "/srv/a.mp4", token: nil)
        #expect(item.policy == .strictest)
        let open = ContentAuthorizer()
        #expect(try await open.authorize(input: "/srv/a.mp4", token: nil, capture: .writeback).policy == .unrestricted)
    }

    @Test func aTokensPlayerTypeClaimIsADecoderHint() {
        #expect(PlayerTypeHint.allCases.map(\.playerType) == [nil, .native, .hw, .sw])
    }
}
