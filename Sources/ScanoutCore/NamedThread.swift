import Foundation

extension Thread {
    /// A thread that gives itself `name` when it starts: the name `top -H`, `ps -L` and a
    /// debugger show. (Foundation on Linux applies a name only when the thread sets it on itself;
    /// one set before `start` is kept but never reaches the system, so the thread would show
    /// the name of the thread that created it.)
    public convenience init(named name: String, block: @escaping @Sendable () -> Void) {
        self.init {
            Thread.current.name = name
            block()
        }
    }
}
