import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ScanoutDisplay
import ScanoutPlayer
import ScanoutPolicy
import ScanoutRender

extension ControlAPI {
    /// `GET /snapshot[?width=W][&format=png|jpeg]`: a PNG (or a JPEG) of what is on screen now, as
    /// drawn (every zone, overlay and subtitles), shrunk to `W` pixels wide. Content whose policy denies capture is never in
    /// it: its area is black, and `Scanout-Censored` says why. At most two a second (429 past
    /// that).
    func snapshotRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        routes.get("/snapshot") { [self] request, _ in
            var width: Int?
            if let w = request.uri.queryParameters["width"] {
                guard let v = Int(w), (16...7680).contains(v) else {
                    throw APIError.badRequest("width", "must be a whole number of pixels from 16 to 7680 (got \"\(w)\")")
                }
                width = v
            }
            let format = request.uri.queryParameters["format"].map(String.init) ?? "png"
            guard ["png", "jpeg", "jpg"].contains(format) else {
                throw APIError.badRequest("format", "must be png or jpeg (got \"\(format)\")")
            }
            guard snapshotLimit.take("snapshot") == .allowed else {
                throw APIError(.tooManyRequests, "snapshots: at most 2 a second; ask again shortly", field: nil)
            }
            let (picture, censored) = try await snapshot()
            guard var image = picture else { throw APIError(.notFound, "nothing is on screen yet, or this output cannot be read back", field: nil) }
            if let width { image = image.shrunk(toWidth: width) }
            let bytes: [UInt8]
            do {
                bytes = format == "png" ? try PNGEncoder().encode(image) : try JPEGEncoder().encode(image)
            } catch {
                throw APIError(.internalServerError, "snapshot: \(error)", field: nil)
            }
            var headers = HTTPFields()
            headers[.contentType] = format == "png" ? "image/png" : "image/jpeg"
            headers[.cacheControl] = "no-store"
            if !censored.isEmpty { headers[HTTPField.Name("Scanout-Censored")!] = censored.joined(separator: "; ") }
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        return routes
    }

    /// The picture on screen and what was blacked out of it (and why): a screen of zones from its
    /// compositor (each zone whose item denies capture black), else the player's output (all of
    /// it black when its item denies capture).
    func snapshot() async throws -> (RGBImage?, [String]) {
        if let screen {
            guard let canvas = screen.screen.output as? HeadlessCanvasOutput, !canvas.acceptsGPUFrames else {
                throw APIError(.serviceUnavailable, "snapshots of a screen of zones are taken from the CPU compositor into memory only", field: nil)
            }
            guard var image = try canvas.snapshot() else { return (nil, []) }
            var censored: [String] = []
            for p in screen.placements() where denied(p.player.snapshot) {
                image = image.blackingOut(x: p.rect.x, y: p.rect.y, width: p.rect.width, height: p.rect.height)
                censored.append("zone \(p.id): the content policy denies capture")
            }
            return (image, censored)
        }
        let image = try await player.perform { e in try e.display.snapshot() }
        guard let image else { return (nil, []) }
        return denied(player.snapshot) ? (image.blackedOut, ["the content policy denies capture"]) : (image, [])
    }

    /// Whether the item `s` plays denies capture (its token's policy, else the default).
    private func denied(_ s: PlayerSnapshot) -> Bool {
        guard let i = s.index, s.playlist.indices.contains(i) else { return false }
        return (try? CaptureGate.check(policy: authorizer.policy(token: s.playlist[i].token), purpose: .snapshot)) == nil
    }
}
