#if canImport(Glibc)
import Glibc
#endif
import ScanoutCore
import ScanoutDemux
import ScanoutDecode
import ScanoutAudio
import ArgumentParser

/// The names in directory `path` (no "." or "..").
func listDirectory(_ path: String) throws -> [String] {
    guard let dir = opendir(path) else { throw ValidationError("cannot read directory \(path): \(String(cString: strerror(errno)))") }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// libavformat's name for standard input, which `-` as INPUT stands for.
let standardInput = "pipe:0"

/// What libavformat opens for INPUT: `-` is standard input (read as it comes: no seeking back).
func mediaInput(_ input: String) -> String { input == "-" ? standardInput : input }
