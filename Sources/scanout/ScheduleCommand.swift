import ArgumentParser
import Foundation
import ScanoutDemux
import ScanoutService

/// `scanout schedule check FILE`: reads a schedule (or a config file's), names its first mistake,
/// or says what plays at a time and the changes after it.
struct ScheduleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedule",
        abstract: "Check a schedule: what plays when.",
        subcommands: [ScheduleCheck.self]
    )
}

struct ScheduleCheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate a schedule file (or a config file's `schedule`) and print the next changes."
    )

    @Argument(help: "A schedule (JSON), or a config file with `schedule`.") var file: String
    @Option(help: "From this time (ISO 8601, e.g. 2026-12-24T17:00:00+01:00); default: now.") var at: String?
    @Option(help: "How many changes to print.") var count: Int = 10

    func run() throws {
        var t = Date()
        if let at {
            guard let d = ISOTime.parse(at) else { throw ValidationError("--at: must be a date and time with its offset, e.g. 2026-12-24T17:00:00+01:00 (got \"\(at)\")") }
            t = d
        }
        guard (1...1000).contains(count) else { throw ValidationError("--count: must be 1 to 1000 (got \(count))") }
        let schedule: Schedule
        do {
            schedule = try Schedule.load(file: file)
        } catch {
            StandardError.write("scanout: \(error)\n")
            throw ExitCode(Exit.failure)
        }
        print("\(file): valid")
        for line in schedule.report(at: t, count: count) { print(line) }
    }
}
