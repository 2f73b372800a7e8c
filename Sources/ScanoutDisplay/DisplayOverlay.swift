import ScanoutRender

extension KMSDisplay {
    /// Drawn by the scanout renderer over each composited frame, placed on each output's mode;
    /// while one is set, frames are composited rather than put on a plane of their own.
    public var overlay: Overlay? {
        get { composition.overlay }
        set { composition.overlay = newValue }
    }
}
