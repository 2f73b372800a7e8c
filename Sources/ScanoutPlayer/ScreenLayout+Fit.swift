import ScanoutRender

extension ScreenLayout {
    /// This layout on an output of `W`×`H` (a KMS screen's mode), with the output's own size: a
    /// layout of another size is scaled in whole, keeping its shape, centred on the output turned
    /// upright (the screen's background around it); each zone's place, size and border are then
    /// pixels of the output. A layout with no size of its own, or the output's, is itself.
    public func fitted(outputWidth W: Int, outputHeight H: Int) -> ScreenLayout {
        let upright = rotation % 180 == 0 ? (width: W, height: H) : (width: H, height: W)
        let own = canvasSize(outputWidth: W, outputHeight: H)
        guard own != upright, own.width > 0, own.height > 0 else { return self }
        let scale = min(Double(upright.width) / Double(own.width), Double(upright.height) / Double(own.height))
        let origin = ((Double(upright.width) - Double(own.width) * scale) / 2, (Double(upright.height) - Double(own.height) * scale) / 2)
        // Both edges of a zone are scaled, so that zones side by side stay side by side.
        func x(_ v: Int) -> Int { Int((origin.0 + Double(v) * scale).rounded()) }
        func y(_ v: Int) -> Int { Int((origin.1 + Double(v) * scale).rounded()) }
        var fitted = self
        fitted.width = upright.width
        fitted.height = upright.height
        fitted.zones = zones.map { zone in
            let r = zone.rect(canvasWidth: own.width, canvasHeight: own.height)
            var z = zone
            z.x = .pixels(x(r.x))
            z.y = .pixels(y(r.y))
            z.width = .pixels(x(r.x + r.width) - x(r.x))
            z.height = .pixels(y(r.y + r.height) - y(r.y))
            z.border = zone.border.map { b in
                Canvas.Border(width: b.width > 0 ? max(1, Int((Double(b.width) * scale).rounded())) : b.width, color: b.color)
            }
            return z
        }
        return fitted
    }
}
