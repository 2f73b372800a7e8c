@testable import ScanoutBench
import Testing

@Suite("bench peer decoder")
struct PeerDecodingTests {
    @Test("the ffmpeg peer's decoder follows the label of Scanout's decoder")
    func fromLabel() {
        let vaapi = PeerDecoding(scanoutDecoder: "VA-API /dev/dri/renderD129 (Intel iHD driver)")
        #expect(vaapi == .vaapi(device: "/dev/dri/renderD129"))
        #expect(vaapi.ffmpegArguments(threads: 2) == ["-vaapi_device", "/dev/dri/renderD129", "-hwaccel", "vaapi", "-hwaccel_output_format", "vaapi"])
        let nvdec = PeerDecoding(scanoutDecoder: "NVDEC h264 (NVIDIA H100)")
        #expect(nvdec.ffmpegArguments(threads: 2) == ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda"])
        for label in ["libavcodec h264 (software)", "software stand-in for VA-API (SCANOUT_FAULTS=hw-standin; not hardware)"] {
            #expect(PeerDecoding(scanoutDecoder: label).ffmpegArguments(threads: 2) == ["-threads", "2"])
        }
    }
}
