import CEGL
import CScanoutShims
import ScanoutCore
import ScanoutDemux
import ScanoutDecode

/// CUDA's registrations of GL textures (`cuGraphicsGLRegisterImage`), so that NVDEC pictures are
/// copied into them on the GPU (`cuMemcpy2D` device-to-array between map and unmap), as mpv's
/// CUDA interop does. Owned by a `FrameImporter`; each registration is released
/// (`cuGraphicsUnregisterResource`) before its texture is replaced, or when this goes, on the GL
/// context's thread. Needs the CUDA–GL entry points of libcuda (`CUDADriver.hasGLInterop`).
/// Not Sendable.
final class CUDAGLInterop {
    private struct Registration {
        var texture: GLuint
        var resource: UnsafeMutableRawPointer
        var context: UnsafeMutableRawPointer
    }
    private var registrations: [Registration] = []

    deinit { unregisterAll() }

    func unregisterAll() {
        for r in registrations { _ = scanout_cuda_gl_unregister(r.context, r.resource) }
        registrations = []
    }

    /// Copies `picture`'s planes into `textures` (one per plane; `planes` gives each copy's row
    /// bytes and rows). Registers the textures with the picture's CUDA context first when they
    /// are new to it.
    func copy(_ picture: CUDAFrame, into textures: [GLTexture], planes: [(rowBytes: Int, rows: Int)]) throws {
        guard CUDADriver.hasGLInterop else {
            throw RenderError.importRefused("libcuda has no CUDA-GL interop entry points (cuGraphicsGLRegisterImage)")
        }
        let names = textures.map(\.name)
        if registrations.map(\.texture) != names || registrations.contains(where: { $0.context != picture.context }) {
            unregisterAll()
            for name in names {
                var resource: UnsafeMutableRawPointer?
                let r = scanout_cuda_gl_register(picture.context, name, &resource)
                guard r == 0, let resource else {
                    throw RenderError.importRefused("cuGraphicsGLRegisterImage(texture \(name)) failed with error \(r) (\(CUDADriver.errorName(r)))")
                }
                registrations.append(Registration(texture: name, resource: resource, context: picture.context))
            }
        }
        var copies = planes.enumerated().map { i, p in
            let plane = picture.plane(i)
            return scanout_cuda_plane_copy(src_device: plane.device, src_pitch: plane.pitch, width_bytes: p.rowBytes,
                                           height: p.rows, resource: registrations[i].resource)
        }
        var step: UnsafePointer<CChar>?
        let r = scanout_cuda_copy_to_gl(picture.context, &copies, Int32(copies.count), &step)
        guard r == 0 else {
            throw RenderError.importRefused("\(step.map { String(cString: $0) } ?? "CUDA copy") failed with error \(r) (\(CUDADriver.errorName(r)))")
        }
    }
}
