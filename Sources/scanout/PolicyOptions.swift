import ArgumentParser
import Dispatch
import Foundation
import ScanoutPipeline
import ScanoutPlayer
import ScanoutPolicy

/// The content-policy options of every command that opens media: the content token and the keys
/// that verify it.
struct PolicyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Content token (a signed JWT), or @FILE to read it from FILE.", valueName: "token-or-@file"))
    var token: String?

    @Option(help: ArgumentHelp("JSON file with the token keys and the default policy (default: $SCANOUT_KEYS).", valueName: "file"))
    var keys: String?

    /// The media to open and its policy: `input` (which may be nil when the token names the URL)
    /// under the token's policy, or the default policy without a token. With `capture`, content
    /// whose policy denies capture is refused before anything is opened.
    func authorize(input: String?, capture: CapturePurpose? = nil) throws -> AuthorizedItem {
        let authorizer = try ContentAuthorizer(keysFile: keysFile)
        let tokenText = try readToken()
        return try waitFor { try await authorizer.authorize(input: input, token: tokenText, capture: capture) }
    }

    /// `layout` with every zone's items verified as `authorize(input:)` verifies one (each item's
    /// own token; the default policy without one), each source the authorised input, and the
    /// authorizer that verified them (it gives each zone's policy as its items play). A token
    /// that does not verify, or a policy that denies `capture`, fails naming the item.
    func authorize(layout: ScreenLayout, capture: CapturePurpose? = nil) throws -> (ScreenLayout, ContentAuthorizer) {
        let authorizer = try ContentAuthorizer(keysFile: keysFile)
        var out = layout
        for (z, zone) in layout.zones.enumerated() {
            for (i, item) in zone.playlist.enumerated() {
                let a: AuthorizedItem
                do {
                    a = try waitFor { try await authorizer.authorize(input: item.source.isEmpty ? nil : item.source, token: item.token, capture: capture) }
                } catch {
                    throw ValidationError("--layout: zones[\(z)].playlist[\(i)]: \(error)")
                }
                out.zones[z].playlist[i].source = a.input
                out.zones[z].playlist[i].contentHint = a.contentHint
            }
        }
        return (out, authorizer)
    }

    /// The key file named by --keys or SCANOUT_KEYS; none: no keys, everything unrestricted.
    private var keysFile: String? {
        keys ?? ProcessInfo.processInfo.environment["SCANOUT_KEYS"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The token text: the option itself, or the contents of the file after '@'.
    private func readToken() throws -> String? {
        guard let token else { return nil }
        guard token.hasPrefix("@") else { return token }
        let path = String(token.dropFirst())
        do {
            return try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            throw PolicyOptionError.tokenUnreadable(path: path, reason: (error as NSError).localizedDescription)
        }
    }
}

enum PolicyOptionError: Error, CustomStringConvertible {
    case tokenUnreadable(path: String, reason: String)

    var description: String {
        switch self {
        case let .tokenUnreadable(path, reason): "cannot read the content token from \(path): \(reason)"
        }
    }
}

/// One line on stderr saying which policy applies and where it came from.
func describePolicy(_ a: ContentAuthorization) -> String {
    var line = "policy: \(a.policy) (\(a.source))"
    if let t = a.token { line += "; playerType \(t.playerType.rawValue)\(t.live ? ", live" : "")" }
    return line
}

/// Holds an async result for the thread that waits for it.
/// `@unchecked Sendable`: `value` is written once by the task before it signals the semaphore and
/// read by the waiting thread only after the wait returns, so the two never touch it at once.
private final class ResultBox<T: Sendable>: @unchecked Sendable {
    var value: Result<T, any Error>?
}

/// Runs `body` (token verification: jwt-kit's key collection is an actor) to completion from a
/// synchronous command. Called on the main thread, which is not one of the concurrency pool's
/// threads, so the task can always run while this thread waits.
func waitFor<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { box.value = .success(try await body()) } catch { box.value = .failure(error) }
        done.signal()
    }
    done.wait()
    return try box.value!.get()
}
