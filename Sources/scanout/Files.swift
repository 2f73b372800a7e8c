#if canImport(Glibc)
import Glibc
#endif
import ScanoutMedia

/// Creates `path` and its parents (`mkdir -p`).
func makeDirectory(_ path: String) throws {
    var current = path.hasPrefix("/") ? "" : "."
    for part in path.split(separator: "/") {
        current += "/" + part
        if mkdir(current, 0o755) != 0 && errno != EEXIST {
            throw MediaError.outputFailed(path: path, reason: String(cString: strerror(errno)))
        }
    }
}
