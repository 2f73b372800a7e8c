import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import ScanoutService
import Testing

/// The route table (405 answers, `Allow`) is read from the route collections the router holds.
@Suite struct RouteTableTests {
    @Test func aPathAskedWithAMethodItDoesNotHaveIsRefusedWithTheMethodsItHas() async throws {
        let service = try await HeadlessService()
        let routes = service.api.routes
        #expect(routes.count == Set(routes.map { "\($0.method) \($0.path)" }).count, "a route is listed twice")
        let literal = Dictionary(grouping: routes.filter { !$0.path.contains("{") }, by: \.path).mapValues { Set($0.map(\.method)) }
        #expect(literal["/playlist"] == ["GET", "PUT"])
        #expect(literal["/config"] == ["GET", "PUT"])
        #expect(literal["/downloads"] == ["GET", "POST"])
        #expect(literal["/playlist/next"] == ["POST"])
        #expect(routes.contains { $0 == ("POST", "/assets/{id}/refresh") })
        try await Application(router: service.api.router()).test(.router) { client in
            for (path, methods) in literal {
                let wrong: HTTPRequest.Method = methods.contains("DELETE") ? .patch : .delete
                try await client.execute(uri: path, method: wrong) { r in
                    #expect(r.status == .methodNotAllowed, "\(wrong) \(path): \(r.status)")
                    #expect(r.headers[.allow] == methods.sorted().joined(separator: ", "), "\(path)")
                    #expect(refusal(r).field == "method", "\(path)")
                }
            }
            // A path the API does not have.
            try await client.execute(uri: "/playlists", method: .get) { r in #expect(r.status == .notFound) }
        }
    }
}
