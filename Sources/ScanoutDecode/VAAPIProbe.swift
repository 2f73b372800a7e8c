import CVAAPI
import ScanoutCore
import ScanoutDemux
#if canImport(Glibc)
import Glibc
#endif

/// One DRM render node and what VA-API says about it.
public struct VAAPIDeviceInfo: Sendable, Equatable {
    public var path: String
    /// Whether `vaInitialize` succeeded.
    public var usable: Bool
    /// Driver vendor string, or why the node is not usable.
    public var detail: String
    public var version: String
    /// Number of decode/encode profiles the driver lists.
    public var profiles: Int
    /// The status `vaInitialize` returned when it failed (nil when it succeeded or was not reached).
    public var vaStatus: Int32? = nil
    /// libva's text for `vaStatus`.
    public var vaMessage: String = ""
}

/// Finds the render nodes (`/dev/dri/renderD*`) and initialises VA-API on each
/// (`vaGetDisplayDRM`, `vaInitialize`); every display is terminated and every fd closed before
/// returning.
public enum VAAPIProbe {
    public static func devices(directory: String = "/dev/dri") -> [VAAPIDeviceInfo] {
        renderNodes(directory: directory).map(probe)
    }

    /// The render nodes (`renderD*`) in `directory`, sorted.
    public static func renderNodes(directory: String = "/dev/dri") -> [String] {
        guard let dir = opendir(directory) else { return [] }
        var nodes: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("renderD") { nodes.append(directory + "/" + name) }
        }
        closedir(dir)
        return nodes.sorted()
    }

    /// The kernel driver behind a DRM node ("i915", "amdgpu", "vgem"), from
    /// `/sys/class/drm/NAME/device/driver`; nil when sysfs does not say.
    public static func driverName(node: String) -> String? {
        let name = node.split(separator: "/").last.map(String.init) ?? node
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink("/sys/class/drm/\(name)/device/driver", &buf, buf.count - 1)
        guard n > 0 else { return nil }
        let target = String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return target.split(separator: "/").last.map(String.init)
    }

    static func probe(_ path: String) -> VAAPIDeviceInfo {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            return VAAPIDeviceInfo(path: path, usable: false, detail: "cannot open: \(String(cString: strerror(errno)))", version: "", profiles: 0)
        }
        defer { close(fd) }
        guard let display = vaGetDisplayDRM(fd) else {
            return VAAPIDeviceInfo(path: path, usable: false, detail: "vaGetDisplayDRM returned no display", version: "", profiles: 0)
        }
        var major: Int32 = 0, minor: Int32 = 0
        let status = vaInitialize(display, &major, &minor)
        guard status == SCANOUT_VA_STATUS_SUCCESS else {
            let text = vaErrorStr(status).map { String(cString: $0) } ?? "unknown"
            vaTerminate(display)
            return VAAPIDeviceInfo(path: path, usable: false, detail: "vaInitialize failed with status \(status) (\(text))", version: "", profiles: 0,
                                   vaStatus: status, vaMessage: text)
        }
        defer { vaTerminate(display) }
        let vendor = vaQueryVendorString(display).map { String(cString: $0) } ?? "unknown vendor"
        var profiles = [VAProfile](repeating: VAProfileNone, count: Int(vaMaxNumProfiles(display)))
        var n: Int32 = 0
        vaQueryConfigProfiles(display, &profiles, &n)
        return VAAPIDeviceInfo(path: path, usable: true, detail: vendor, version: "\(major).\(minor)", profiles: Int(n))
    }

    /// Why hardware decoding is or is not available, in one line.
    public static func summary(directory: String = "/dev/dri") -> String {
        let found = devices(directory: directory)
        if found.isEmpty { return "unavailable: no render node (\(directory)/renderD* missing)" }
        if let ok = found.first(where: \.usable) {
            return "available: \(ok.path), \(ok.detail), VA-API \(ok.version), \(ok.profiles) profiles"
        }
        return "unavailable: " + found.map { "\($0.path): \($0.detail)" }.joined(separator: "; ")
    }
}
