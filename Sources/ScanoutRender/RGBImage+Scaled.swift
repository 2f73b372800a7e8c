/// Smaller pictures of an `RGBImage`, for snapshots (`GET /snapshot?width=`).
extension RGBImage {
    /// This picture `width` pixels wide (the height in proportion, at least 1): each pixel the
    /// mean of the source pixels its area covers (a box filter; no wider than the source: a
    /// width above it gives the picture as it is). 8-bit pictures only; others are returned as
    /// they are.
    public func shrunk(toWidth width: Int) -> RGBImage {
        guard layout == .rgb24, width > 0, width < self.width, self.height > 0 else { return self }
        let height = max(1, Int((Double(self.height) * Double(width) / Double(self.width)).rounded()))
        var out = [UInt8](repeating: 0, count: width * height * 3)
        let rowBytes = self.width * 3
        for y in 0..<height {
            let y0 = y * self.height / height, y1 = max(y0 + 1, (y + 1) * self.height / height)
            for x in 0..<width {
                let x0 = x * self.width / width, x1 = max(x0 + 1, (x + 1) * self.width / width)
                var sum = (0, 0, 0)
                for sy in y0..<y1 {
                    var i = sy * rowBytes + x0 * 3
                    for _ in x0..<x1 {
                        sum.0 += Int(bytes[i]); sum.1 += Int(bytes[i + 1]); sum.2 += Int(bytes[i + 2])
                        i += 3
                    }
                }
                let n = (y1 - y0) * (x1 - x0), o = (y * width + x) * 3
                out[o] = UInt8((sum.0 + n / 2) / n); out[o + 1] = UInt8((sum.1 + n / 2) / n); out[o + 2] = UInt8((sum.2 + n / 2) / n)
            }
        }
        return RGBImage(width: width, height: height, layout: .rgb24, bytes: out)
    }

    /// A black picture of this size (what a snapshot shows of content that denies capture).
    public var blackedOut: RGBImage { RGBImage(width: width, height: height, layout: layout, bytes: [UInt8](repeating: 0, count: bytes.count)) }

    /// This picture with the rectangle `(x, y, w, h)` black (clipped to the picture).
    public func blackingOut(x: Int, y: Int, width w: Int, height h: Int) -> RGBImage {
        var out = self
        let bpp = layout.bytesPerPixel
        let x0 = max(0, x), x1 = min(width, x + w), y0 = max(0, y), y1 = min(height, y + h)
        guard x0 < x1, y0 < y1 else { return self }
        for row in y0..<y1 {
            let start = (row * width + x0) * bpp
            for i in start..<(start + (x1 - x0) * bpp) { out.bytes[i] = 0 }
        }
        return out
    }
}
