import Foundation

extension Thread {
    /// A thread that gives itself `name` when it starts: the name `top -H`, `ps -L` and a
    /// debugger show. (Foundation on Linux applies a name only when the thread sets it on itself;
    /// one set before `start` is kept but never reaches the system, so the thread would show
    /// the name of the thread that created it.) Linux keeps 15 bytes of a thread's name and
    /// refuses a longer one outright, so the name is cut to its first 15 bytes
    /// ("scanout-readahead" shows as "scanout-readahe").
    public convenience init(named name: String, block: @escaping @Sendable () -> Void) {
        let kept = Thread.systemName(name)
        self.init {
            // The kernel's name written directly (Foundation's setter was seen, once, under heavy
            // load, to leave the creating thread's), and Foundation's for `Thread.current.name`.
            try? kept.write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            Thread.current.name = kept
            block()
        }
    }

    /// `name` as the system keeps it: at most 15 bytes of UTF-8, cut at a character boundary.
    public static func systemName(_ name: String) -> String {
        var kept = ""
        for c in name {
            guard kept.utf8.count + String(c).utf8.count <= 15 else { break }
            kept.append(c)
        }
        return kept
    }
}
