import Foundation

/// A 20x10 RGBA PNG made with ffmpeg: the left half opaque red (255, 0, 0, 255), the right half
/// fully transparent green (0, 255, 0, 0). Returns its path in `scratch`.
public func makeLogoPNG(in scratch: Scratch, name: String = "logo.png") throws -> String {
    let path = scratch.path(name)
    _ = try Proc.ffmpeg(["-f", "lavfi", "-i", "color=c=black:s=20x10,format=rgba,geq=r='if(lt(X,10),255,0)':g='if(lt(X,10),0,255)':b=0:a='if(lt(X,10),255,0)'",
                         "-frames:v", "1", "-y", path])
    return path
}

/// What source-over blending of an 8-bit `source` channel with alpha 255 at `opacity` gives over
/// `under` (the overlay's rule: alpha scaled to 1/255 steps, rounded to nearest).
public func blended(_ source: UInt8, over under: UInt8, opacity: Double) -> UInt8 {
    let a = 255 * Int((opacity * 255).rounded()), full = 255 * 255
    return UInt8((Int(source) * a + Int(under) * (full - a) + full / 2) / full)
}
