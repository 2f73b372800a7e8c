import ScanoutCore
import ScanoutKMS
import ScanoutRender

/// How a turned canvas (a portrait screen: `Canvas.turn`) reaches an output.
public enum KMSTurnPath: Sendable, Equatable, CustomStringConvertible {
    /// Drawn upright into a buffer of the canvas's size; the primary plane's `rotation` turns it.
    case plane(KMSRotation)
    /// Drawn turned by the compositor into a buffer of the mode's size, for the reason given.
    case compositor(String)

    /// "plane (rotate-270)", "compositor (the primary plane has no rotation property)".
    public var description: String {
        switch self {
        case let .plane(r): "plane (\(r))"
        case let .compositor(reason): "compositor (\(reason))"
        }
    }
}

/// Turning a composed screen with the primary plane: when the plane's `rotation` property offers
/// the turn and a `TEST_ONLY` commit takes it, the canvas is drawn upright and the plane turns
/// it as it scans out (no turn in the renderer, whose draw stays the upright one); otherwise the
/// compositor turns it (`Canvas.turn`), as on a plane without the property. Decided once per
/// output and turn, said once through `onTurnChosen`, kept in `turnPaths`.
extension KMSDisplay {
    /// The primary plane's rotation that shows a canvas turned by `turn` on `output`, or nil when
    /// the canvas is drawn as it is (upright, or turned by the compositor).
    func planeRotation(for turn: Orientation, on output: Output) throws -> KMSRotation? {
        guard !turn.isIdentity else { return nil }
        if let choice = output.turnChoice, choice.turn == turn { return choice.path.rotation }
        let path = try chooseTurnPath(turn, on: output)
        output.turnChoice = (turn, path)
        turnPaths[output.name] = path
        onTurnChosen?(output.name, path)
        return path.rotation
    }

    /// The plane when its `rotation` offers the turn and a `TEST_ONLY` commit of an upright
    /// buffer so turned passes; the compositor otherwise, with the reason.
    private func chooseTurnPath(_ turn: Orientation, on output: Output) throws -> KMSTurnPath {
        guard !turn.mirrored else { return .compositor("a mirrored turn") }
        let wanted = KMSRotation.clockwise(turn.rotation)
        guard let plane = resources.planes.first(where: { $0.id == output.planeID }), plane.properties["rotation"] != nil else {
            return .compositor("the primary plane has no rotation property")
        }
        guard plane.rotations.contains(wanted) else {
            return .compositor("the primary plane's rotation offers \(plane.rotations), not \(wanted)")
        }
        let upright = turn.swapsDimensions ? (output.mode.height, output.mode.width) : (output.mode.width, output.mode.height)
        try ensureBuffers(output)
        let index = freeBuffer(output)
        try fitBuffer(output, index, width: upright.0, height: upright.1)
        var probe = AtomicRequest()
        setPrimary(output, fb: output.framebufferIDs[index], source: upright, rotation: wanted, in: &probe)
        do {
            try device.atomicCommit(probe, flags: testFlags(output))
        } catch {
            return .compositor("TEST_ONLY refused \(wanted): \(error)")
        }
        return .plane(wanted)
    }

    /// Makes buffer `index` of `output` `width`×`height`: one of another size (the mode's, for an
    /// upright canvas after a turned one, or the other way round) is replaced, with its
    /// framebuffer. Only a buffer neither on screen nor queued is ever refitted.
    func fitBuffer(_ output: Output, _ index: Int, width: Int, height: Int) throws {
        let old = output.buffers[index]
        guard old.width != width || old.height != height else { return }
        (output.buffers[index], output.framebuffers[index]) = try makeScanoutBuffer(output, format: output.bufferFormat, width: width, height: height)
    }
}

extension KMSTurnPath {
    /// The plane's rotation, for `.plane`.
    var rotation: KMSRotation? {
        if case let .plane(r) = self { return r }
        return nil
    }
}
