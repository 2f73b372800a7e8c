import CEGL
import ScanoutCore

// The GL objects of the asynchronous readback (GLES 3): a pixel buffer that glReadPixels writes
// into without waiting, and a fence that says when it has. Like those in GLObjects.swift, each
// keeps its context alive, deletes its object once in `deinit` on the context's thread, and is
// not Sendable.

/// A `GL_PIXEL_PACK_BUFFER`: `glReadPixels` into it returns at once, the copy happens on the GPU
/// after the drawing before it; mapping it (after its fence) gives the pixels to the CPU.
/// Leaves no buffer bound to `GL_PIXEL_PACK_BUFFER` after any call, so that the synchronous
/// `glReadPixels` of the same context keeps reading into client memory.
final class GLPixelPackBuffer {
    let context: EGLDisplayContext
    private let name: GLuint
    /// Bytes of storage allocated (grown by `read` when a larger picture comes).
    private(set) var capacity = 0

    init(context: EGLDisplayContext) throws {
        self.context = context
        var b: GLuint = 0
        glGenBuffers(1, &b)
        guard b != 0 else { throw RenderError.glCall("glGenBuffers(pixel pack buffer)", code: glGetError()) }
        name = b
    }

    deinit {
        if currentForRelease(context) {
            var b = name
            glDeleteBuffers(1, &b)
        }
    }

    /// Starts reading the bound read framebuffer's `width`×`height` RGBA8 pixels into the buffer
    /// (rows packed, alignment 1). `glReadPixels` with a pack buffer bound.
    func read(width: Int, height: Int) throws {
        let count = width * height * 4
        glBindBuffer(GLenum(GL_PIXEL_PACK_BUFFER), name)
        defer { glBindBuffer(GLenum(GL_PIXEL_PACK_BUFFER), 0) }
        if capacity < count {
            glBufferData(GLenum(GL_PIXEL_PACK_BUFFER), count, nil, GLenum(GL_STREAM_READ))
            try checkGL("glBufferData(GL_PIXEL_PACK_BUFFER, \(count) bytes)")
            capacity = count
        }
        glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 1)
        glReadPixels(0, 0, GLsizei(width), GLsizei(height), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), nil)
        try checkGL("glReadPixels into a pixel pack buffer (\(width)x\(height))")
    }

    /// Maps the first `count` bytes for reading and passes them to `body`; unmapped before this
    /// returns (the pointer must not outlive `body`). Call once the read's fence has signalled,
    /// or the map waits for it. `glMapBufferRange(GL_MAP_READ_BIT)`, `glUnmapBuffer`.
    func withMappedBytes<R>(count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        precondition(count <= capacity, "GLPixelPackBuffer: mapping past what was read")
        glBindBuffer(GLenum(GL_PIXEL_PACK_BUFFER), name)
        defer { glBindBuffer(GLenum(GL_PIXEL_PACK_BUFFER), 0) }
        guard let p = glMapBufferRange(GLenum(GL_PIXEL_PACK_BUFFER), 0, count, GLbitfield(GL_MAP_READ_BIT)) else {
            let code = glGetError()
            throw RenderError.glCall("glMapBufferRange(GL_PIXEL_PACK_BUFFER, \(count) bytes, GL_MAP_READ_BIT)", code: code)
        }
        defer { glUnmapBuffer(GLenum(GL_PIXEL_PACK_BUFFER)) }
        return try body(UnsafeRawBufferPointer(start: p, count: count))
    }
}

/// A fence after the commands issued so far (`glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE)`),
/// flushed so that it signals without anyone waiting. Deleted once (`glDeleteSync`).
final class GLFence {
    let context: EGLDisplayContext
    private let sync: GLsync

    init(context: EGLDisplayContext) throws {
        self.context = context
        guard let s = glFenceSync(GLenum(GL_SYNC_GPU_COMMANDS_COMPLETE), 0) else {
            throw RenderError.glCall("glFenceSync", code: glGetError())
        }
        sync = s
        glFlush()
    }

    deinit {
        if currentForRelease(context) { glDeleteSync(sync) }
    }

    /// Blocks until the commands before the fence have completed, or throws after `limit`
    /// (a GPU that stopped). `glClientWaitSync`, in slices of 100 ms.
    func wait(limit: Duration = .seconds(10)) throws {
        let slice: GLuint64 = 100_000_000
        let slices = max(1, Int((Double(limit.nanosecondCount) / Double(slice)).rounded(.up)))
        for _ in 0..<slices {
            switch Int32(bitPattern: glClientWaitSync(sync, GLbitfield(GL_SYNC_FLUSH_COMMANDS_BIT), slice)) {
            case GL_ALREADY_SIGNALED, GL_CONDITION_SATISFIED: return
            case GL_TIMEOUT_EXPIRED: continue
            default: throw RenderError.glCall("glClientWaitSync", code: glGetError())
            }
        }
        throw RenderError.glCall("glClientWaitSync: the readback was not done after \(limit) (has the GPU stopped?)",
                                 code: UInt32(GL_TIMEOUT_EXPIRED))
    }
}
