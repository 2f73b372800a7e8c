import ScanoutCore
import CEGL

// One small final class per GL object: each creates its object with its context current, keeps
// the context alive, and deletes the object exactly once in `deinit`. Like the context, they
// belong to one thread and are not Sendable.

/// Makes `context` current for a `deinit` (where nothing can be thrown): a context that cannot be
/// made current any more has lost its objects with it.
func currentForRelease(_ context: EGLDisplayContext) -> Bool {
    (try? context.makeCurrent()) != nil
}

/// A 2D texture.
final class GLTexture {
    let context: EGLDisplayContext
    let name: GLuint
    /// GL_TEXTURE_2D, or GL_TEXTURE_EXTERNAL_OES for an external image.
    let target: GLenum
    /// The internal format, size and filter it was made with (what the pool compares).
    let key: Key

    struct Key: Equatable {
        var internalFormat: GLint
        var width: Int
        var height: Int
    }

    init(context: EGLDisplayContext, key: Key, target: GLenum = GLenum(GL_TEXTURE_2D)) throws {
        self.context = context
        self.key = key
        self.target = target
        var t: GLuint = 0
        glGenTextures(1, &t)
        guard t != 0 else { throw RenderError.glCall("glGenTextures", code: glGetError()) }
        name = t
        glBindTexture(target, t)
        glTexParameteri(target, GLenum(GL_TEXTURE_MIN_FILTER), GL_NEAREST)
        glTexParameteri(target, GLenum(GL_TEXTURE_MAG_FILTER), GL_NEAREST)
        glTexParameteri(target, GLenum(GL_TEXTURE_WRAP_S), GL_CLAMP_TO_EDGE)
        glTexParameteri(target, GLenum(GL_TEXTURE_WRAP_T), GL_CLAMP_TO_EDGE)
    }

    deinit {
        if currentForRelease(context) {
            var t = name
            glDeleteTextures(1, &t)
        }
    }

    func setFilter(linear: Bool) {
        glBindTexture(target, name)
        let f = linear ? GL_LINEAR : GL_NEAREST
        glTexParameteri(target, GLenum(GL_TEXTURE_MIN_FILTER), f)
        glTexParameteri(target, GLenum(GL_TEXTURE_MAG_FILTER), f)
    }
}

/// A vertex buffer holding the unit square (two triangles as a strip). Drawn through the default
/// vertex array (GLES 2 has no vertex array objects; GLES 3 keeps object 0), its attribute set
/// at every draw.
final class GLQuad {
    let context: EGLDisplayContext
    let buffer: GLuint

    init(context: EGLDisplayContext) {
        self.context = context
        var b: GLuint = 0
        glGenBuffers(1, &b)
        buffer = b
        glBindBuffer(GLenum(GL_ARRAY_BUFFER), b)
        let square: [Float] = [0, 0, 1, 0, 0, 1, 1, 1]
        square.withUnsafeBytes { glBufferData(GLenum(GL_ARRAY_BUFFER), $0.count, $0.baseAddress, GLenum(GL_STATIC_DRAW)) }
    }

    func draw() {
        glBindBuffer(GLenum(GL_ARRAY_BUFFER), buffer)
        glEnableVertexAttribArray(0)
        glVertexAttribPointer(0, 2, GLenum(GL_FLOAT), GLboolean(GL_FALSE), 0, nil)
        glDrawArrays(GLenum(GL_TRIANGLE_STRIP), 0, 4)
    }

    deinit {
        if currentForRelease(context) {
            var b = buffer
            glDeleteBuffers(1, &b)
        }
    }
}

/// A linked program of a vertex and a fragment shader, with its uniform locations cached.
final class GLProgram {
    let context: EGLDisplayContext
    let program: GLuint
    let name: String
    private var locations: [String: GLint] = [:]

    /// Compiles and links; throws `shaderCompile` / `programLink` with the driver's info log.
    init(context: EGLDisplayContext, name: String, vertex: (name: String, source: String), fragment: (name: String, source: String)) throws {
        self.context = context
        self.name = name
        let vs = try Self.compile(type: GLenum(GL_VERTEX_SHADER), name: vertex.name, source: vertex.source)
        defer { glDeleteShader(vs) }
        let fs = try Self.compile(type: GLenum(GL_FRAGMENT_SHADER), name: fragment.name, source: fragment.source)
        defer { glDeleteShader(fs) }
        let p = glCreateProgram()
        guard p != 0 else { throw RenderError.glCall("glCreateProgram", code: glGetError()) }
        glAttachShader(p, vs)
        glAttachShader(p, fs)
        glBindAttribLocation(p, 0, "a_pos")
        glLinkProgram(p)
        var ok: GLint = 0
        glGetProgramiv(p, GLenum(GL_LINK_STATUS), &ok)
        if ok == GL_FALSE {
            let log = Self.infoLog(p, program: true)
            glDeleteProgram(p)
            throw RenderError.programLink(name: name, log: log)
        }
        program = p
    }

    deinit {
        if currentForRelease(context) { glDeleteProgram(program) }
    }

    func use() { glUseProgram(program) }

    func location(_ uniform: String) -> GLint {
        if let l = locations[uniform] { return l }
        let l = glGetUniformLocation(program, uniform)
        locations[uniform] = l
        return l
    }

    func set(_ uniform: String, int v: Int) { glUniform1i(location(uniform), GLint(v)) }
    func set(_ uniform: String, float v: Float) { glUniform1f(location(uniform), v) }
    func set(_ uniform: String, vec2 v: (Float, Float)) { glUniform2f(location(uniform), v.0, v.1) }
    func set(_ uniform: String, vec3 v: (Float, Float, Float)) { glUniform3f(location(uniform), v.0, v.1, v.2) }
    func set(_ uniform: String, vec4 v: (Float, Float, Float, Float)) { glUniform4f(location(uniform), v.0, v.1, v.2, v.3) }
    /// A 3×3 matrix given row by row (as the colour matrices are kept).
    func set(_ uniform: String, rowMajor m: [Double]) {
        precondition(m.count == 9)
        set(uniform, mat3: [m[0], m[3], m[6], m[1], m[4], m[7], m[2], m[5], m[8]].map { Float($0) })
    }
    /// A 3×3 matrix given column by column.
    func set(_ uniform: String, mat3 columns: [Float]) {
        precondition(columns.count == 9)
        columns.withUnsafeBufferPointer { glUniformMatrix3fv(location(uniform), 1, GLboolean(GL_FALSE), $0.baseAddress) }
    }

    static func compile(type: GLenum, name: String, source: String) throws -> GLuint {
        let s = glCreateShader(type)
        guard s != 0 else { throw RenderError.glCall("glCreateShader(\(name))", code: glGetError()) }
        source.withCString { cs in
            var p: UnsafePointer<GLchar>? = cs
            glShaderSource(s, 1, &p, nil)
        }
        glCompileShader(s)
        var ok: GLint = 0
        glGetShaderiv(s, GLenum(GL_COMPILE_STATUS), &ok)
        if ok == GL_FALSE {
            let log = infoLog(s, program: false)
            glDeleteShader(s)
            throw RenderError.shaderCompile(name: name, log: log)
        }
        return s
    }

    private static func infoLog(_ object: GLuint, program: Bool) -> String {
        var length: GLint = 0
        if program { glGetProgramiv(object, GLenum(GL_INFO_LOG_LENGTH), &length) } else { glGetShaderiv(object, GLenum(GL_INFO_LOG_LENGTH), &length) }
        guard length > 1 else { return "" }
        var buffer = [GLchar](repeating: 0, count: Int(length))
        var written: GLsizei = 0
        if program { glGetProgramInfoLog(object, length, &written, &buffer) } else { glGetShaderInfoLog(object, length, &written, &buffer) }
        return String(decoding: buffer.prefix(Int(written)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A framebuffer object with a renderbuffer as its colour buffer: a scanout buffer's DMA-BUF
/// imported as an EGLImage (`init(context:buffer:)`), or RGBA8 storage of GL's own for offscreen
/// drawing (`init(context:width:height:)`: the renderer's readback framebuffer, the headless
/// output). Owns the framebuffer, the renderbuffer and the image (released once, in `deinit`).
public final class GLRenderTarget {
    let context: EGLDisplayContext
    private let image: EGLImageHandle?
    let framebuffer: GLuint
    private let renderbuffer: GLuint
    public let width: Int
    public let height: Int
    /// What its pixels hold: 8-bit SDR, or (XRGB2101010, RGB10_A2) a 10-bit HDR signal.
    public let format: CanvasFormat

    /// A render target for `buffer`, whose pixels mean what `format` says (an XRGB2101010
    /// buffer for `.xrgb2101010`).
    convenience init(context: EGLDisplayContext, buffer: DMABufFrame, format: CanvasFormat = .xrgb8888) throws {
        guard context.hasEGLExtension("EGL_EXT_image_dma_buf_import") else {
            throw RenderError.missingExtension("EGL_EXT_image_dma_buf_import", neededFor: "rendering into scanout buffers")
        }
        guard context.hasGLExtension("GL_OES_EGL_image") else {
            throw RenderError.missingExtension("GL_OES_EGL_image", neededFor: "rendering into scanout buffers")
        }
        let create = try context.procAddress("eglCreateImageKHR", as: FrameImporter.CreateImage.self)
        let destroy = try context.procAddress("eglDestroyImageKHR", as: FrameImporter.DestroyImage.self)
        typealias Storage = @convention(c) (GLenum, GLeglImageOES?) -> Void
        let storage = try context.procAddress("glEGLImageTargetRenderbufferStorageOES", as: Storage.self)
        let attribs = DMABufFrame.attributes(width: buffer.width, height: buffer.height, fourcc: buffer.fourcc,
                                             planes: buffer.planes, modifier: buffer.modifier)
        let image = try EGLImageHandle(context: context, create: create, destroy: destroy, attributes: attribs,
                                       what: "a \(FourCC.name(buffer.fourcc)) scanout buffer")
        try self.init(context: context, width: buffer.width, height: buffer.height, format: format, image: image,
                      storageCall: "glEGLImageTargetRenderbufferStorageOES",
                      describing: "\(FourCC.name(buffer.fourcc)) scanout buffer \(buffer.width)x\(buffer.height)") {
            image.withImage { storage(GLenum(GL_RENDERBUFFER), $0) }
        }
    }

    /// Offscreen: storage of `width`×`height` owned by GL, RGBA8 for `.xrgb8888` and RGB10_A2
    /// (GLES 3) for `.xrgb2101010`.
    convenience init(context: EGLDisplayContext, width: Int, height: Int, format: CanvasFormat = .xrgb8888) throws {
        let deep = format != .xrgb8888
        let name = deep ? "RGB10_A2" : "RGBA8"
        try self.init(context: context, width: width, height: height, format: format, image: nil,
                      storageCall: "glRenderbufferStorage(\(name), \(width)x\(height))", describing: "\(width)x\(height) \(name)") {
            glRenderbufferStorage(GLenum(GL_RENDERBUFFER), glEnum(deep ? GL_RGB10_A2 : GL_RGBA8), GLsizei(width), GLsizei(height))
        }
    }

    /// Makes the framebuffer and the renderbuffer, gives the renderbuffer (bound) its storage with
    /// `allocate`, and attaches it. On a failure `deinit` deletes both.
    private init(context: EGLDisplayContext, width: Int, height: Int, format: CanvasFormat, image: EGLImageHandle?, storageCall: String,
                 describing what: String, allocate: () -> Void) throws {
        self.context = context
        self.width = width
        self.height = height
        self.format = format
        self.image = image
        var fb: GLuint = 0, rb: GLuint = 0
        glGenFramebuffers(1, &fb)
        glGenRenderbuffers(1, &rb)
        framebuffer = fb
        renderbuffer = rb
        glBindRenderbuffer(GLenum(GL_RENDERBUFFER), rb)
        allocate()
        try checkGL(storageCall)
        try attachColorRenderbuffer(rb, to: fb, describing: what)
    }

    deinit {
        if currentForRelease(context) {
            var fb = framebuffer, rb = renderbuffer
            glDeleteFramebuffers(1, &fb)
            glDeleteRenderbuffers(1, &rb)
        }
    }
}

/// An offscreen target drawn into and then sampled: a framebuffer whose colour buffer is an
/// RGBA texture (a see-through zone, drawn on its own and then blended onto the canvas).
final class GLTextureTarget {
    let context: EGLDisplayContext
    let framebuffer: GLuint
    let texture: GLTexture
    var width: Int { texture.key.width }
    var height: Int { texture.key.height }

    init(context: EGLDisplayContext, width: Int, height: Int) throws {
        self.context = context
        texture = try GLTexture(context: context, key: .init(internalFormat: GL_RGBA, width: width, height: height))
        glTexImage2D(GLenum(GL_TEXTURE_2D), 0, GL_RGBA, GLsizei(width), GLsizei(height), 0, GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), nil)
        try checkGL("glTexImage2D (a \(width)x\(height) zone)")
        var fb: GLuint = 0
        glGenFramebuffers(1, &fb)
        framebuffer = fb
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), fb)
        glFramebufferTexture2D(GLenum(GL_FRAMEBUFFER), GLenum(GL_COLOR_ATTACHMENT0), GLenum(GL_TEXTURE_2D), texture.name, 0)
        let status = glCheckFramebufferStatus(GLenum(GL_FRAMEBUFFER))
        guard status == GLenum(GL_FRAMEBUFFER_COMPLETE) else {
            throw RenderError.glCall("glCheckFramebufferStatus (a \(width)x\(height) zone)", code: status)
        }
    }

    deinit {
        if currentForRelease(context) {
            var fb = framebuffer
            glDeleteFramebuffers(1, &fb)
        }
    }
}

/// Attaches renderbuffer `rb` as the colour buffer of framebuffer `fb` (left bound) and checks that
/// the framebuffer is complete; `what` names it in the error.
func attachColorRenderbuffer(_ rb: GLuint, to fb: GLuint, describing what: String) throws {
    glBindFramebuffer(GLenum(GL_FRAMEBUFFER), fb)
    glFramebufferRenderbuffer(GLenum(GL_FRAMEBUFFER), GLenum(GL_COLOR_ATTACHMENT0), GLenum(GL_RENDERBUFFER), rb)
    let status = glCheckFramebufferStatus(GLenum(GL_FRAMEBUFFER))
    guard status == GLenum(GL_FRAMEBUFFER_COMPLETE) else {
        throw RenderError.glCall("glCheckFramebufferStatus (\(what))", code: status)
    }
}
