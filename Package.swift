// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Scanout",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "scanout", targets: ["scanout"]),
        .library(name: "ScanoutCore", targets: ["ScanoutCore"]),
        .library(name: "ScanoutDemux", targets: ["ScanoutDemux"]),
        .library(name: "ScanoutDecode", targets: ["ScanoutDecode"]),
        .library(name: "ScanoutAudio", targets: ["ScanoutAudio"]),
        .library(name: "ScanoutRender", targets: ["ScanoutRender"]),
        .library(name: "ScanoutKMS", targets: ["ScanoutKMS"]),
        .library(name: "ScanoutDisplay", targets: ["ScanoutDisplay"]),
        .library(name: "ScanoutPlayer", targets: ["ScanoutPlayer"]),
        .library(name: "ScanoutPolicy", targets: ["ScanoutPolicy"]),
        .library(name: "ScanoutPipeline", targets: ["ScanoutPipeline"]),
        .library(name: "ScanoutService", targets: ["ScanoutService"]),
        // The benchmark harness `scanout bench` runs: suites, peers, reports, child-process measurement.
        .library(name: "ScanoutBench", targets: ["ScanoutBench"]),
        // Test doubles: the fake KMS device, a manual clock, a memory renderer.
        .library(name: "ScanoutTesting", targets: ["ScanoutTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Content tokens (JWT: HS256, RS256, ES256).
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        // Key generation in the policy tests (RSA lives in CryptoExtras); jwt-kit depends on it already.
        .package(url: "https://github.com/apple/swift-crypto", from: "4.1.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // The offline store: SQLite (the system library) and segment downloads over HTTP.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // System libraries. Each module map exposes a shim.h that re-exports what Swift cannot import.
        .systemLibrary(name: "CFFmpeg", pkgConfig: "libavformat libavcodec libavutil libswscale libswresample libavfilter",
                       providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev",
                                         "libswresample-dev", "libavfilter-dev"])]),
        .systemLibrary(name: "CVAAPI", pkgConfig: "libva libva-drm", providers: [.apt(["libva-dev"])]),
        .systemLibrary(name: "CDRM", pkgConfig: "libdrm gbm", providers: [.apt(["libdrm-dev", "libgbm-dev"])]),
        .systemLibrary(name: "CEGL", pkgConfig: "egl glesv2", providers: [.apt(["libegl-dev", "libgles-dev"])]),
        // Audio output: ALSA's PCM devices (HDMI audio is one).
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        // Subtitle rendering (fonts through fontconfig).
        .systemLibrary(name: "CASS", pkgConfig: "libass", providers: [.apt(["libass-dev"])]),
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        // The little real C that is needed (the va_list log callback).
        .target(name: "CScanoutShims", dependencies: ["CFFmpeg"]),

        // Values every stage shares, with no C library behind them: the clock, orientation, threads.
        .target(name: "ScanoutCore"),
        // libavformat: inputs, packets, tracks; live UDP/RTP, SAP, timeshift, adaptive HLS, read-ahead.
        .target(name: "ScanoutDemux", dependencies: ["ScanoutCore", "CFFmpeg", "CScanoutShims"]),
        // libavcodec, VA-API and NVDEC: decoders, their selection and fallback, frames, subtitles.
        .target(name: "ScanoutDecode", dependencies: ["ScanoutCore", "ScanoutDemux", "CFFmpeg", "CScanoutShims", "CVAAPI"]),
        // ALSA: audio decoding, tempo, the output thread and its clock.
        .target(name: "ScanoutAudio", dependencies: ["ScanoutCore", "ScanoutDemux", "CFFmpeg", "CALSA"]),
        .target(name: "ScanoutRender", dependencies: ["ScanoutCore", "ScanoutDemux", "ScanoutDecode", "ScanoutKMS", "CFFmpeg", "CEGL", "CScanoutShims", "CASS"]),
        // Atomic KMS in Swift values: the device protocol, libdrm and GBM on one descriptor, modes,
        // properties, output filters.
        .target(name: "ScanoutKMS", dependencies: ["ScanoutCore", "CDRM"]),
        .target(name: "ScanoutDisplay", dependencies: ["ScanoutCore", "ScanoutKMS", "ScanoutDecode", "ScanoutRender"]),
        .target(name: "ScanoutPlayer", dependencies: ["ScanoutCore", "ScanoutDemux", "ScanoutDecode", "ScanoutAudio", "ScanoutRender", "ScanoutDisplay"]),
        // Content policy: signed content tokens, per-output verdicts (HDCP through KMS), the capture gate.
        // It links neither FFmpeg nor EGL: the display asks it through `OutputFilter`.
        .target(name: "ScanoutPolicy", dependencies: [
            "ScanoutCore", "ScanoutKMS",
            .product(name: "JWTKit", package: "jwt-kit"),
        ]),
        // The pipeline `play`, `render` and `serve` share: display, decoder options, content policy.
        .target(name: "ScanoutPipeline", dependencies: ["ScanoutPlayer", "ScanoutPolicy", "ScanoutKMS", "ScanoutDisplay", "ScanoutCore", "ScanoutDemux", "ScanoutDecode", "ScanoutAudio", "ScanoutRender"]),
        // The offline store: downloads (HLS variant or file) into a GRDB database and a media directory.
        .target(name: "ScanoutOffline", dependencies: [
            "ScanoutCore", "ScanoutDemux", "ScanoutDecode", "ScanoutPolicy",
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The daemon: HTTP/JSON control API, event stream, metrics, runtime configuration.
        .target(name: "ScanoutService", dependencies: [
            "ScanoutPipeline", "ScanoutPolicy", "ScanoutPlayer", "ScanoutCore", "ScanoutDemux", "ScanoutDecode", "ScanoutAudio",
            "ScanoutDisplay", "ScanoutRender", "ScanoutOffline",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),   // SIGHUP: reload
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            "ScanoutSync",
            "ScanoutMQTT",
        ], resources: [
            // The management page (`GET /`): its HTML, CSS and scripts as byte arrays in the binary.
            .embedInCode("Page"),
        ]),
        // A fleet through an MQTT broker: libmosquitto's client behind a typed wrapper.
        .target(name: "ScanoutMQTT", dependencies: ["CMosquitto"]),
        // Screens in lockstep across devices: the group's clock, the sync messages and their keys.
        .target(name: "ScanoutSync", dependencies: [
            "ScanoutCore",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // A blocking HTTP/1.1 and SSE client for loopback servers (tests, `bench zap`).
        .target(name: "ScanoutLoopback", dependencies: ["ScanoutCore"]),
        // The `bench` harness: Scanout and its peers as child processes, their figures, reports (table, JSON, SVG).
        .target(name: "ScanoutBench", dependencies: [
            "ScanoutCore", "ScanoutDemux", "ScanoutDecode", "ScanoutRender", "ScanoutDisplay", "ScanoutPlayer", "ScanoutLoopback",
        ]),
        // Test doubles for every layer's tests (and for users' own): FakeKMSDevice, ManualClock,
        // MemoryScanoutRenderer, FakeAudioSink.
        .target(name: "ScanoutTesting", dependencies: ["ScanoutCore", "ScanoutKMS", "ScanoutDecode", "ScanoutRender", "ScanoutDisplay", "ScanoutAudio"]),
        .executableTarget(name: "scanout", dependencies: [
            "ScanoutCore", "ScanoutDemux", "ScanoutDecode", "ScanoutAudio", "ScanoutRender", "ScanoutKMS", "ScanoutDisplay",
            "ScanoutPlayer", "ScanoutPolicy", "ScanoutPipeline", "ScanoutService", "ScanoutBench", "ScanoutLoopback",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // Fixtures, subprocesses, scratch directories and frame checksums for every test target.
        .target(name: "ScanoutTestSupport", dependencies: [
            "ScanoutCore", "ScanoutDemux", "ScanoutDecode", "ScanoutAudio", "ScanoutLoopback", "ScanoutOffline", .product(name: "JWTKit", package: "jwt-kit"),
            .product(name: "Logging", package: "swift-log"),
        ], path: "Tests/ScanoutTestSupport"),
        // One test target per module, named for it; tests that play through several modules sit with
        // the highest one they need (the player's, the service's, the CLI's).
        .testTarget(name: "ScanoutCoreTests", dependencies: ["ScanoutCore"]),
        .testTarget(name: "ScanoutDemuxTests", dependencies: ["ScanoutDemux", "ScanoutCore", "ScanoutTestSupport"]),
        .testTarget(name: "ScanoutDecodeTests", dependencies: ["ScanoutDecode", "ScanoutDemux", "ScanoutCore", "ScanoutTestSupport"]),
        .testTarget(name: "ScanoutAudioTests", dependencies: [
            "ScanoutAudio", "ScanoutDecode", "ScanoutDemux", "ScanoutCore", "ScanoutTesting", "ScanoutTestSupport",
        ]),
        .testTarget(name: "ScanoutSyncTests", dependencies: ["ScanoutSync", "ScanoutCore"]),
        .testTarget(name: "ScanoutMQTTTests", dependencies: ["ScanoutMQTT", "ScanoutTestSupport"]),
        .testTarget(name: "ScanoutKMSTests", dependencies: ["ScanoutKMS", "ScanoutCore", "ScanoutTesting", "ScanoutTestSupport"]),
        .testTarget(name: "ScanoutDisplayTests", dependencies: [
            "ScanoutDisplay", "ScanoutKMS", "ScanoutRender", "ScanoutDecode", "ScanoutDemux", "ScanoutCore", "ScanoutTesting", "ScanoutTestSupport",
        ]),
        .testTarget(name: "ScanoutRenderTests", dependencies: ["ScanoutRender", "ScanoutCore", "ScanoutDemux", "ScanoutDecode", "ScanoutTestSupport"]),
        .testTarget(name: "ScanoutPlayerTests", dependencies: [
            "ScanoutPlayer", "ScanoutKMS", "ScanoutDisplay", "ScanoutCore", "ScanoutDemux", "ScanoutDecode", "ScanoutAudio", "ScanoutTesting", "ScanoutTestSupport",
        ]),
        .testTarget(name: "ScanoutPolicyTests", dependencies: [
            "ScanoutPolicy", "ScanoutKMS", "ScanoutDisplay", "ScanoutCore", "ScanoutDecode", "ScanoutTesting", "ScanoutTestSupport",
            .product(name: "JWTKit", package: "jwt-kit"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "CryptoExtras", package: "swift-crypto"),
        ]),
        .testTarget(name: "ScanoutOfflineTests", dependencies: [
            "ScanoutOffline", "ScanoutPolicy", "ScanoutDemux", "ScanoutCore", "ScanoutTestSupport",
        ]),
        .testTarget(name: "ScanoutPipelineTests", dependencies: [
            "ScanoutPipeline", "ScanoutPolicy", "ScanoutDisplay", "ScanoutKMS", "ScanoutDecode", "ScanoutCore", "ScanoutTesting", "ScanoutTestSupport",
        ]),
        .testTarget(name: "ScanoutServiceTests", dependencies: [
            "ScanoutService", "ScanoutPipeline", "ScanoutPolicy", "ScanoutPlayer", "ScanoutKMS", "ScanoutDisplay", "ScanoutTesting", "ScanoutTestSupport",
            "ScanoutOffline", "ScanoutCore", "ScanoutDemux", "ScanoutDecode", "ScanoutAudio",
            .product(name: "HummingbirdTesting", package: "hummingbird"),
        ]),
        .testTarget(name: "ScanoutBenchTests", dependencies: ["ScanoutBench", "ScanoutDemux", "ScanoutCore"]),
        .testTarget(name: "ScanoutCLITests", dependencies: [
            "scanout", "ScanoutTestSupport",
            .product(name: "JWTKit", package: "jwt-kit"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)

// Micro-benchmarks (package-benchmark: time and allocations per frame) in Benchmarks/. Only with
// SCANOUT_BENCHMARKS=1, so that ordinary builds and CI do not compile the benchmark framework:
//   SCANOUT_BENCHMARKS=1 swift package benchmark
if Context.environment["SCANOUT_BENCHMARKS"] != nil {
    package.dependencies.append(.package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]))
    package.targets.append(.executableTarget(
        name: "ScanoutBenchmarks",
        dependencies: [
            .product(name: "Benchmark", package: "benchmark"),
            "ScanoutCore", "ScanoutDemux", "ScanoutDecode", "ScanoutRender",
        ],
        path: "Benchmarks/ScanoutBenchmarks",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ))
}
