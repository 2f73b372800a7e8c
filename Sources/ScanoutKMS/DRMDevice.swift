import ScanoutCore
import CDRM
#if canImport(Glibc)
import Glibc
#endif

/// A DRM card opened for atomic modesetting through libdrm: the real `KMSDevice`.
///
/// Owns the card's descriptor (and the uevent socket that reports hotplug), both closed once in
/// `deinit`. Asks for universal planes, atomic and writeback connectors; property names are
/// resolved to ids when resources are read and cached per object, so commits are built from names.
/// One thread uses a device (libdrm's event dispatch calls back on the caller's thread); not
/// Sendable.
public final class DRMDevice: KMSDevice {
    public let path: String
    public let driver: String
    /// Whether this descriptor is DRM master (needed for any commit that is not test-only).
    public private(set) var isMaster: Bool
    private let fd: Int32
    private let uevents: UEventSocket?
    private var propertyIDs: [UInt32: [String: UInt32]] = [:]
    /// The values each object's `rotation` property offers, from its enum entries.
    private var rotationEnums: [UInt32: KMSRotation] = [:]
    /// Each object's enum entries and range bounds, by property name (`KMSConnector.enums`, `ranges`).
    private var enumEntries: [UInt32: [String: [String: UInt64]]] = [:]
    private var rangeBounds: [UInt32: [String: ClosedRange<UInt64>]] = [:]
    private let sink = EventSink()
    /// Where the kernel writes writeback out-fences (`WRITEBACK_OUT_FENCE_PTR` is a user pointer).
    private let fenceSlot = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
    /// GEM handles of this descriptor that another owner holds (GBM's buffers, when GBM shares
    /// the descriptor: `GBMDevice(sharing:)`), with how many times each was retained. Importing a
    /// DMA-BUF of such a buffer gives back its handle, which `addFramebuffer` must then not close.
    private var retainedHandles: [UInt32: Int] = [:]

    /// Opens `path`, enables atomic KMS and writeback connectors. With `requireMaster`, fails with
    /// `masterHeld` (naming the processes that have the card open) when another process is DRM master.
    public init(path: String, requireMaster: Bool = true) throws {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            let e = errno
            if e == EACCES || e == EPERM { throw KMSDisplayError.permissionDenied(path: path) }
            throw KMSDisplayError.noDevice(path: path, reason: String(cString: strerror(e)))
        }
        var name = "unknown"
        if let v = drmGetVersion(fd) {
            if let n = v.pointee.name { name = String(cString: n) }
            drmFreeVersion(v)
        }
        guard drmSetClientCap(fd, UInt64(DRM_CLIENT_CAP_ATOMIC), 1) == 0 else {
            close(fd)
            throw KMSDisplayError.noAtomic(path: path, driver: name)
        }
        _ = drmSetClientCap(fd, UInt64(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
        _ = drmSetClientCap(fd, UInt64(DRM_CLIENT_CAP_WRITEBACK_CONNECTORS), 1)
        var master = drmIsMaster(fd) != 0
        if !master { master = drmSetMaster(fd) == 0 }
        if requireMaster && !master {
            close(fd)
            throw KMSDisplayError.masterHeld(path: path, holders: Self.processesHolding(path))
        }
        self.fd = fd
        self.path = path
        self.driver = name
        self.isMaster = master
        uevents = UEventSocket()
        fenceSlot.initialize(to: -1)
    }

    deinit {
        fenceSlot.deallocate()
        close(fd)
    }

    /// Calls `body` with the card's descriptor, for a library that works on the same card (GBM);
    /// the descriptor stays owned here and must not be kept past the owner of what `body` makes.
    package func withDescriptor<R>(_ body: (Int32) throws -> R) rethrows -> R { try body(fd) }

    /// Marks GEM handle `h` as held by another owner of this descriptor (`releaseHandle` undoes it).
    package func retainHandle(_ h: UInt32) { retainedHandles[h, default: 0] += 1 }
    package func releaseHandle(_ h: UInt32) {
        guard let n = retainedHandles[h] else { return }
        retainedHandles[h] = n > 1 ? n - 1 : nil
    }

    // MARK: Resources

    public func resources() throws -> KMSResources {
        guard let res = drmModeGetResources(fd) else { throw KMSError.drmCallFailed(call: "drmModeGetResources", errno: errno) }
        defer { drmModeFreeResources(res) }
        let crtcIDs = Array(UnsafeBufferPointer(start: res.pointee.crtcs, count: Int(res.pointee.count_crtcs)))
        var crtcs: [KMSCRTC] = []
        for id in crtcIDs {
            crtcs.append(KMSCRTC(id: id, properties: try objectProperties(id, type: DRM_MODE_OBJECT_CRTC)))
        }
        var encoders: [KMSEncoder] = []
        for id in UnsafeBufferPointer(start: res.pointee.encoders, count: Int(res.pointee.count_encoders)) {
            guard let e = drmModeGetEncoder(fd, id) else { continue }
            encoders.append(KMSEncoder(id: id, possibleCRTCs: e.pointee.possible_crtcs))
            drmModeFreeEncoder(e)
        }
        var connectors: [KMSConnector] = []
        for id in UnsafeBufferPointer(start: res.pointee.connectors, count: Int(res.pointee.count_connectors)) {
            guard let c = drmModeGetConnector(fd, id) else { continue }
            defer { drmModeFreeConnector(c) }
            let typeName = drmModeGetConnectorTypeName(c.pointee.connector_type).map { String(cString: $0) } ?? "Unknown"
            let state: KMSConnectionState = switch c.pointee.connection {
            case DRM_MODE_CONNECTED: .connected
            case DRM_MODE_DISCONNECTED: .disconnected
            default: .unknown
            }
            let modes = UnsafeBufferPointer(start: c.pointee.modes, count: Int(c.pointee.count_modes)).map(Self.mode)
            let encoderIDs = Array(UnsafeBufferPointer(start: c.pointee.encoders, count: Int(c.pointee.count_encoders)))
            var connector = KMSConnector(id: id, typeName: typeName, typeID: c.pointee.connector_type_id, connection: state,
                                         modes: modes, encoderIDs: encoderIDs,
                                         properties: try objectProperties(id, type: DRM_MODE_OBJECT_CONNECTOR),
                                         widthMM: Int(c.pointee.mmWidth))
            connector.enums = enumEntries[id] ?? [:]
            connector.ranges = rangeBounds[id] ?? [:]
            connectors.append(connector)
        }
        var planes: [KMSPlane] = []
        if let pres = drmModeGetPlaneResources(fd) {
            defer { drmModeFreePlaneResources(pres) }
            for id in UnsafeBufferPointer(start: pres.pointee.planes, count: Int(pres.pointee.count_planes)) {
                guard let p = drmModeGetPlane(fd, id) else { continue }
                defer { drmModeFreePlane(p) }
                let props = try objectProperties(id, type: DRM_MODE_OBJECT_PLANE)
                let type: KMSPlaneType = switch props["type"] {
                case 1: .primary
                case 2: .cursor
                default: .overlay
                }
                var plane = KMSPlane(id: id, type: type, possibleCRTCs: p.pointee.possible_crtcs,
                                     formats: Array(UnsafeBufferPointer(start: p.pointee.formats, count: Int(p.pointee.count_formats))),
                                     properties: props, rotations: rotationEnums[id] ?? [])
                plane.enums = enumEntries[id] ?? [:]
                if let blob = props["IN_FORMATS"], blob != 0, let bytes = try? propertyBlob(UInt32(truncatingIfNeeded: blob)) {
                    plane.modifiers = Self.parseInFormats(bytes)
                }
                planes.append(plane)
            }
        }
        return KMSResources(connectors: connectors, encoders: encoders, crtcs: crtcs, planes: planes)
    }

    static func mode(_ m: drmModeModeInfo) -> KMSMode {
        let name = withUnsafeBytes(of: m.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let timing = KMSModeTiming(clock: m.clock, hdisplay: m.hdisplay, hsyncStart: m.hsync_start, hsyncEnd: m.hsync_end,
                                   htotal: m.htotal, hskew: m.hskew, vdisplay: m.vdisplay, vsyncStart: m.vsync_start,
                                   vsyncEnd: m.vsync_end, vtotal: m.vtotal, vscan: m.vscan, vrefresh: m.vrefresh,
                                   flags: m.flags, type: m.type, name: name)
        return KMSMode(width: Int(m.hdisplay), height: Int(m.vdisplay), refresh: Int(m.vrefresh),
                       preferred: m.type & UInt32(DRM_MODE_TYPE_PREFERRED) != 0, timing: timing)
    }

    /// `IN_FORMATS` (`struct drm_format_modifier_blob`): format → modifiers.
    static func parseInFormats(_ b: [UInt8]) -> [UInt32: [UInt64]] {
        func u32(_ o: Int) -> UInt32 { o + 4 <= b.count ? (0..<4).reduce(0) { $0 | UInt32(b[o + $1]) << (8 * UInt32($1)) } : 0 }
        func u64(_ o: Int) -> UInt64 { o + 8 <= b.count ? (0..<8).reduce(0) { $0 | UInt64(b[o + $1]) << (8 * UInt64($1)) } : 0 }
        let countFormats = Int(u32(8)), formatsOffset = Int(u32(12)), countModifiers = Int(u32(16)), modifiersOffset = Int(u32(20))
        guard formatsOffset + countFormats * 4 <= b.count, modifiersOffset + countModifiers * 24 <= b.count else { return [:] }
        let formats = (0..<countFormats).map { u32(formatsOffset + 4 * $0) }
        var out: [UInt32: [UInt64]] = [:]
        for i in 0..<countModifiers {
            let o = modifiersOffset + 24 * i
            let mask = u64(o), offset = Int(u32(o + 8)), modifier = u64(o + 16)
            for bit in 0..<64 where mask & (1 << UInt64(bit)) != 0 && offset + bit < formats.count {
                out[formats[offset + bit], default: []].append(modifier)
            }
        }
        return out
    }

    /// Property values by name (enum and range values as the kernel stores them), caching the ids.
    private func objectProperties(_ id: UInt32, type: UInt32) throws -> [String: UInt64] {
        guard let props = drmModeObjectGetProperties(fd, id, type) else {
            throw KMSError.drmCallFailed(call: "drmModeObjectGetProperties(\(id))", errno: errno)
        }
        defer { drmModeFreeObjectProperties(props) }
        var values: [String: UInt64] = [:]
        var ids: [String: UInt32] = [:]
        var enums: [String: [String: UInt64]] = [:]
        var ranges: [String: ClosedRange<UInt64>] = [:]
        for i in 0..<Int(props.pointee.count_props) {
            guard let prop = drmModeGetProperty(fd, props.pointee.props[i]) else { continue }
            let name = withUnsafeBytes(of: prop.pointee.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            values[name] = props.pointee.prop_values[i]
            ids[name] = prop.pointee.prop_id
            if name == "rotation" { rotationEnums[id] = Self.bitmaskValues(prop.pointee) }
            if let entries = Self.enumEntries(prop.pointee) { enums[name] = entries }
            if let bounds = Self.rangeBounds(prop.pointee) { ranges[name] = bounds }
            drmModeFreeProperty(prop)
        }
        propertyIDs[id] = ids
        enumEntries[id] = enums
        rangeBounds[id] = ranges
        return values
    }

    /// An enum property's entries, name → value; nil for other kinds.
    private static func enumEntries(_ prop: drmModePropertyRes) -> [String: UInt64]? {
        guard prop.flags & UInt32(DRM_MODE_PROP_ENUM) != 0, let enums = prop.enums else { return nil }
        var entries: [String: UInt64] = [:]
        for e in UnsafeBufferPointer(start: enums, count: Int(prop.count_enums)) {
            let name = withUnsafeBytes(of: e.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            entries[name] = e.value
        }
        return entries
    }

    /// An unsigned range property's bounds; nil for other kinds.
    private static func rangeBounds(_ prop: drmModePropertyRes) -> ClosedRange<UInt64>? {
        guard prop.flags & UInt32(DRM_MODE_PROP_RANGE) != 0, prop.count_values >= 2, let v = prop.values, v[0] <= v[1] else { return nil }
        return v[0]...v[1]
    }

    /// The values a bitmask property offers: each enum entry's `value` is the number of its bit.
    private static func bitmaskValues(_ prop: drmModePropertyRes) -> KMSRotation {
        guard prop.flags & UInt32(DRM_MODE_PROP_BITMASK) != 0, let enums = prop.enums else { return [] }
        return UnsafeBufferPointer(start: enums, count: Int(prop.count_enums)).reduce(into: KMSRotation()) { set, e in
            if e.value < 64 { set.insert(KMSRotation(rawValue: 1 << e.value)) }
        }
    }

    // MARK: Commits

    public func atomicCommit(_ request: AtomicRequest, flags: AtomicFlags, writebackConnector: UInt32?) throws -> KMSFence? {
        guard let req = drmModeAtomicAlloc() else { throw KMSError.drmCallFailed(call: "drmModeAtomicAlloc", errno: ENOMEM) }
        defer { drmModeAtomicFree(req) }
        for a in request.assignments {
            guard let ids = propertyIDs[a.objectID] else { throw KMSError.unknownObject(a.objectID) }
            guard let pid = ids[a.property] else {
                throw KMSError.unknownProperty(objectID: a.objectID, property: a.property, available: Array(ids.keys))
            }
            guard drmModeAtomicAddProperty(req, a.objectID, pid, a.value) >= 0 else {
                throw KMSError.drmCallFailed(call: "drmModeAtomicAddProperty", errno: errno)
            }
        }
        let wantsFence = writebackConnector != nil && !flags.contains(.testOnly)
        if wantsFence, let wb = writebackConnector {
            guard let pid = propertyIDs[wb]?["WRITEBACK_OUT_FENCE_PTR"] else {
                throw KMSError.unknownProperty(objectID: wb, property: "WRITEBACK_OUT_FENCE_PTR", available: Array(propertyIDs[wb]?.keys ?? [:].keys))
            }
            fenceSlot.pointee = -1
            _ = drmModeAtomicAddProperty(req, wb, pid, UInt64(UInt(bitPattern: fenceSlot)))
        }
        let user = Unmanaged.passUnretained(sink).toOpaque()
        let r = drmModeAtomicCommit(fd, req, flags.rawValue, user)
        if r != 0 {
            let e = errno
            throw KMSError.commitRejected(errno: e, reason: String(cString: strerror(e)))
        }
        return wantsFence ? KMSFence(fd: fenceSlot.pointee) : nil
    }

    public func createPropertyBlob(_ data: [UInt8]) throws -> UInt32 {
        var id: UInt32 = 0
        let r = data.withUnsafeBytes { drmModeCreatePropertyBlob(fd, $0.baseAddress, $0.count, &id) }
        guard r == 0 else { throw KMSError.drmCallFailed(call: "drmModeCreatePropertyBlob", errno: -r) }
        return id
    }

    public func destroyPropertyBlob(_ id: UInt32) throws {
        let r = drmModeDestroyPropertyBlob(fd, id)
        guard r == 0 else { throw KMSError.unknownBlob(id) }
    }

    public func propertyBlob(_ id: UInt32) throws -> [UInt8] {
        guard let blob = drmModeGetPropertyBlob(fd, id) else { throw KMSError.unknownBlob(id) }
        defer { drmModeFreePropertyBlob(blob) }
        guard let data = blob.pointee.data else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: Int(blob.pointee.length)))
    }

    // MARK: Framebuffers

    public func addFramebuffer(_ d: KMSFramebufferDescription) throws -> UInt32 {
        guard (1...4).contains(d.planes.count) else { throw KMSError.drmCallFailed(call: "drmModeAddFB2 (\(d.planes.count) planes)", errno: EINVAL) }
        var handles: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        var pitches: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        var offsets: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        var modifiers: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var imported: [UInt32] = []
        // The framebuffer holds its own references; a handle another owner holds stays open.
        defer { for h in imported where retainedHandles[h] == nil { drmCloseBufferHandle(fd, h) } }
        for (i, p) in d.planes.enumerated() {
            let handle: UInt32
            switch p.memory {
            case let .gemHandle(h): handle = h
            case let .dmaBuf(buffer):
                var h: UInt32 = 0
                guard drmPrimeFDToHandle(fd, buffer.rawValue, &h) == 0 else { throw KMSError.drmCallFailed(call: "drmPrimeFDToHandle", errno: errno) }
                if !imported.contains(h) { imported.append(h) }
                handle = h
            }
            withUnsafeMutableBytes(of: &handles) { $0.storeBytes(of: handle, toByteOffset: 4 * i, as: UInt32.self) }
            withUnsafeMutableBytes(of: &pitches) { $0.storeBytes(of: p.pitch, toByteOffset: 4 * i, as: UInt32.self) }
            withUnsafeMutableBytes(of: &offsets) { $0.storeBytes(of: p.offset, toByteOffset: 4 * i, as: UInt32.self) }
            withUnsafeMutableBytes(of: &modifiers) { $0.storeBytes(of: d.modifier ?? 0, toByteOffset: 8 * i, as: UInt64.self) }
        }
        var id: UInt32 = 0
        let flags: UInt32 = d.modifier != nil ? UInt32(DRM_MODE_FB_MODIFIERS) : 0
        let r = withUnsafePointer(to: &handles.0) { h in
            withUnsafePointer(to: &pitches.0) { pi in
                withUnsafePointer(to: &offsets.0) { o in
                    withUnsafePointer(to: &modifiers.0) { m in
                        drmModeAddFB2WithModifiers(fd, UInt32(d.width), UInt32(d.height), d.format, h, pi, o, m, &id, flags)
                    }
                }
            }
        }
        guard r == 0 else {
            throw KMSError.drmCallFailed(call: "drmModeAddFB2WithModifiers(\(FourCC.name(d.format)) \(d.width)x\(d.height))", errno: -r)
        }
        return id
    }

    public func removeFramebuffer(_ id: UInt32) throws {
        let r = drmModeRmFB(fd, id)
        guard r == 0 else { throw KMSError.drmCallFailed(call: "drmModeRmFB(\(id))", errno: -r) }
    }

    // MARK: Events

    public func waitForEvents(timeoutMs: Int32) throws -> Bool {
        if !sink.events.isEmpty { return true }
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        if let u = uevents { fds.append(pollfd(fd: u.fd, events: Int16(POLLIN), revents: 0)) }
        while true {
            let r = poll(&fds, nfds_t(fds.count), timeoutMs)
            if r >= 0 { return r > 0 }
            if errno != EINTR { throw KMSError.drmCallFailed(call: "poll", errno: errno) }
        }
    }

    public func nextEvent() throws -> KMSEvent? {
        if sink.events.isEmpty {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, 0) > 0 {
                var ctx = drmEventContext()
                ctx.version = 3
                ctx.page_flip_handler2 = { _, sequence, sec, usec, crtc, user in
                    guard let user else { return }
                    let sink = Unmanaged<EventSink>.fromOpaque(user).takeUnretainedValue()
                    // The kernel stamps the vblank in CLOCK_MONOTONIC seconds and microseconds.
                    sink.events.append(.flipComplete(crtcID: crtc, sequence: UInt64(sequence),
                                                     timestamp: ClockTime(seconds: UInt64(sec), microseconds: UInt64(usec))))
                }
                guard drmHandleEvent(fd, &ctx) == 0 else { throw KMSError.drmCallFailed(call: "drmHandleEvent", errno: errno) }
            }
            if let u = uevents, u.drainHotplug(cardName: String(path.split(separator: "/").last ?? "")) {
                sink.events.append(.hotplug)
            }
        }
        return sink.events.isEmpty ? nil : sink.events.removeFirst()
    }
}

/// Collects the events libdrm's callbacks deliver (reached through the commit's user data).
private final class EventSink {
    var events: [KMSEvent] = []
}
