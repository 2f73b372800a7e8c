import Foundation

/// Runs blocking work (decoding, probing, name lookups) on a thread of its own, not on the
/// cooperative pool.
func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
        Thread { c.resume(with: Result { try body() }) }.start()
    }
}
