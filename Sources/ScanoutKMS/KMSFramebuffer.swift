/// A framebuffer registered on a device: added in `init` (`drmModeAddFB2WithModifiers` through
/// `KMSDevice.addFramebuffer`), removed once in `deinit` (`drmModeRmFB`). A plane's `FB_ID` names
/// `id`; whoever shows it keeps the object until the flip that replaces it has completed (the
/// kernel switches a plane off whose framebuffer is removed while shown). Keeps its device alive.
/// Not `Sendable`: used on the thread that uses the device.
public final class KMSFramebuffer {
    public let id: UInt32
    public let device: any KMSDevice

    public init(device: any KMSDevice, _ description: KMSFramebufferDescription) throws {
        id = try device.addFramebuffer(description)
        self.device = device
    }

    deinit { try? device.removeFramebuffer(id) }
}
