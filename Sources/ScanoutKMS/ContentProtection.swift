/// `Content Protection` values (`DRM_MODE_CONTENT_PROTECTION_*`), the connector property through
/// which HDCP is asked for, and the kernel's report of it.
public enum ContentProtection: UInt64, Sendable {
    case undesired = 0, desired = 1, enabled = 2

    public static let property = "Content Protection"
    /// `HDCP Content Type`: 0 (`DRM_MODE_HDCP_CONTENT_TYPE0`) or 1 (`..._TYPE1`).
    public static let contentTypeProperty = "HDCP Content Type"
}
