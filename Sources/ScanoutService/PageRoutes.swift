import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// One file of the management page: where it is served, its bytes (built into the binary from
/// Sources/ScanoutService/Page by SwiftPM's `embedInCode`), its media type and its entity tag.
struct PageAsset: Sendable {
    let path: String
    let bytes: [UInt8]
    let contentType: String
    /// A strong validator of the bytes: FNV-1a (64 bits) of them, quoted.
    let etag: String

    init(path: String, bytes: [UInt8], contentType: String) {
        self.path = path
        self.bytes = bytes
        self.contentType = contentType
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { hash = (hash ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        etag = "\"" + String(hash, radix: 16) + "\""
    }
}

/// The management page `serve` answers at `/`: static HTML, CSS and JavaScript with no data in
/// them, so that any client may load them without a token (`AuthMiddleware` lets exactly these
/// GETs through); every figure on the page comes from API calls, which need the token from other
/// machines as always. Nothing is fetched from elsewhere: the policy allows this origin only.
enum ManagementPage {
    /// Every file of the page, by the path it is served at.
    static let assets: [PageAsset] = [
        PageAsset(path: "/", bytes: PackageResources.index_html, contentType: "text/html; charset=utf-8"),
        PageAsset(path: "/page/app.js", bytes: PackageResources.app_js, contentType: "text/javascript; charset=utf-8"),
        PageAsset(path: "/page/api.js", bytes: PackageResources.api_js, contentType: "text/javascript; charset=utf-8"),
        PageAsset(path: "/page/views.js", bytes: PackageResources.views_js, contentType: "text/javascript; charset=utf-8"),
        PageAsset(path: "/page/plots.js", bytes: PackageResources.plots_js, contentType: "text/javascript; charset=utf-8"),
        PageAsset(path: "/page/style.css", bytes: PackageResources.style_css, contentType: "text/css; charset=utf-8"),
        PageAsset(path: "/page/icon.svg", bytes: PackageResources.icon_svg, contentType: "image/svg+xml"),
    ]

    /// The paths a client may GET without a token.
    static let publicPaths: Set<String> = Set(assets.map(\.path))

    /// Scripts, styles, images and API calls of this origin only; snapshots are shown from blob:
    /// URLs (they are fetched with the token). No inline script or style, no frames, no plugins.
    static let contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "
        + "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    /// `asset` as an answer: 304 when `If-None-Match` names its tag. Browsers revalidate each
    /// load (`no-cache`): a new binary's page is never mixed with an old one's script.
    static func response(_ asset: PageAsset, ifNoneMatch: String?) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = asset.contentType
        headers[.cacheControl] = "no-cache"
        headers[.eTag] = asset.etag
        headers[.contentSecurityPolicy] = contentSecurityPolicy
        headers[.xContentTypeOptions] = "nosniff"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        if let tags = ifNoneMatch, tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == asset.etag }) {
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: asset.bytes)))
    }
}

extension ControlAPI {
    /// `GET /` and `GET /page/...`: the management page (`ManagementPage`).
    func pageRoutes() -> RouteCollection<ServiceRequestContext> {
        let routes = RouteCollection(context: ServiceRequestContext.self)
        for asset in ManagementPage.assets {
            routes.get(RouterPath(asset.path)) { request, _ in
                ManagementPage.response(asset, ifNoneMatch: request.headers[.ifNoneMatch])
            }
        }
        return routes
    }
}
