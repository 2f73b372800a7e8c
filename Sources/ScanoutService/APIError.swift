import Foundation
import HTTPTypes
import Hummingbird

/// A request the API refuses: the HTTP status, a one-line message, and the field it concerns
/// (a JSON path such as `playlist[1].rotation`, or `Authorization`, `body`, `index`).
public struct APIError: Error, HTTPResponseError, CustomStringConvertible, Equatable {
    public var status: HTTPResponse.Status
    public var message: String
    public var field: String?

    public init(_ status: HTTPResponse.Status, _ message: String, field: String? = nil) {
        self.status = status
        self.message = message
        self.field = field
    }

    public static func badRequest(_ field: String, _ message: String) -> APIError {
        APIError(.badRequest, "\(field): \(message)", field: field)
    }

    public var description: String { message }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        // A refusal may quote a source URL: its userinfo is not sent back.
        jsonResponse(Wire.Refusal(error: message.redacted, field: field), status: status)
    }
}
