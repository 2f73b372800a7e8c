import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ScanoutOffline

extension ControlAPI {
    /// `GET /proof-of-play[?from=&to=&format=csv]`: the plays that started in the range (ISO 8601
    /// or seconds since 1970; default: all kept), oldest first, as JSON or CSV.
    func proofOfPlayRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        routes.get("/proof-of-play") { [self] request, _ in
            let q = request.uri.queryParameters
            let from = try Self.instant(q["from"].map(String.init), field: "from")
            let to = try Self.instant(q["to"].map(String.init), field: "to")
            let format = q["format"].map(String.init) ?? "json"
            guard ["json", "csv"].contains(format) else { throw APIError.badRequest("format", "must be json or csv (got \"\(format)\")") }
            let plays: [PlayRecord]
            do { plays = try proofOfPlay.plays(from: from, to: to) } catch { throw APIError(.internalServerError, "proof of play: \(error)", field: nil) }
            if format == "csv" {
                var headers = HTTPFields()
                headers[.contentType] = "text/csv; charset=utf-8"
                return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: Self.csv(plays))))
            }
            return jsonResponse(Wire.Plays(plays: plays.map(Wire.Play.init), stored: proofOfPlay.store != nil, days: proofOfPlay.days))
        }
        return routes
    }

    /// ISO 8601 with an offset, or seconds since 1970.
    static func instant(_ text: String?, field: String) throws -> Double? {
        guard let text else { return nil }
        if let s = Double(text), s.isFinite { return s }
        guard let d = ISOTime.parse(text) else {
            throw APIError.badRequest(field, "must be a date and time (ISO 8601 with its offset, 2026-12-01T00:00:00Z) or seconds since 1970 (got \"\(text)\")")
        }
        return d.timeIntervalSince1970
    }

    static func csv(_ plays: [PlayRecord]) -> String {
        func field(_ s: String) -> String { s.contains(where: { ",\"\n\r".contains($0) }) ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s }
        var out = "id,item,source,zone,start,end,seconds,outcome,framesShown,framesDropped\n"
        for p in plays {
            let w = Wire.Play(p)
            out += [w.id, String(w.item), field(w.source), field(w.zone ?? ""), w.start, w.end, String(format: "%.3f", w.seconds), w.outcome,
                    String(w.framesShown), String(w.framesDropped)].joined(separator: ",") + "\n"
        }
        return out
    }
}

extension Wire {
    struct Play: Encodable, Sendable {
        var id: String
        var item: Int
        var source: String
        @Nullable var zone: String?
        var start: String
        var end: String
        var seconds: Double
        var outcome: String
        var framesShown: Int
        var framesDropped: Int

        init(_ p: PlayRecord) {
            id = p.id; item = p.item; source = p.source.redacted; zone = p.zone
            start = ISOTime.format(Date(timeIntervalSince1970: p.start)); end = ISOTime.format(Date(timeIntervalSince1970: p.end))
            seconds = (p.seconds * 1000).rounded() / 1000; outcome = p.outcome.rawValue
            framesShown = p.framesShown; framesDropped = p.framesDropped
        }
    }

    struct Plays: Encodable, Sendable {
        var plays: [Play]
        /// Whether the records are in the offline store (false: in memory, lost at a restart).
        var stored: Bool
        var days: Int
    }
}

extension Wire.ConfigBody {
    /// `proofOfPlay {days}`: how long play records are kept (1 to 3650 days).
    struct ProofOfPlayRequest: Decodable {
        enum Field: String, CodingKey, CaseIterable { case days }
        var days: Int
        init(from decoder: any Swift.Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            days = try c.decodeIfPresent(Int.self, forKey: .days, in: 1...3650) ?? 90
        }
    }
}
