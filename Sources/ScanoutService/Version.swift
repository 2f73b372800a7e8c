/// The version `scanout serve` reports (`GET /version`, `scanout --version`).
public enum ScanoutVersion {
    public static let string = "0.14.0"
}
