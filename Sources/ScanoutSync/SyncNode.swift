import ScanoutCore
/// One member of a sync group as a state machine: what it sends and what it knows, driven by its
/// own clock's readings (`tick`) and the messages it receives (`receive`), with no socket and no
/// thread of its own, so that a group of them runs in virtual time in a test and over UDP in
/// `serve`.
///
/// - **Leadership.** Members that may lead (`leader`, `auto`) announce themselves every
///   `announceInterval`; the leader is the one with the highest priority heard within
///   `leaderTimeout` (ties: the lowest sender id), a `follower` never leads. When the leader falls
///   silent for `leaderTimeout`, the next one takes over with the term one higher.
/// - **The group's clock** is the leader's. A follower asks the leader for the time every
///   `requestInterval` (every fifth of that for its first second) and feeds the answers to a
///   `ClockEstimator`. A member that takes over leads on its estimate of the old leader's clock,
///   so the group's time goes on without a step.
/// - **The timeline** is the leader's to set (`publish`), sent every `timelineInterval` and at
///   once when it changes; followers keep the one of the highest term.
public struct SyncNode: Sendable {
    public enum Role: String, Sendable, Codable { case leader, follower, auto }

    public struct Configuration: Sendable {
        public var role: Role
        /// Among members that may lead, the highest leads.
        public var priority: UInt32
        public var announceInterval: Int64 = 500_000_000
        public var leaderTimeout: Int64 = 2_000_000_000
        public var requestInterval: Int64 = 250_000_000
        public var timelineInterval: Int64 = 250_000_000
        /// A follower is in lock once its clock has this many exchanges and an answer came within
        /// `leaderTimeout`.
        public var lockExchanges = 4
        /// Every member's clock is the group's already (the system clock, disciplined by chrony
        /// or PTP): no time is asked for, and a member is in lock once it hears a leader.
        public var systemClock = false

        public init(role: Role, priority: UInt32 = 100) {
            self.role = role
            self.priority = priority
        }
    }

    /// What the member knows, for `GET /sync`.
    public struct Status: Equatable, Sendable {
        public var leading: Bool
        public var leader: UInt64?
        public var term: UInt64
        public var locked: Bool
        /// The group's clock minus this member's (ns) and the drift (ppm); nil while leading on
        /// its own clock, or before the first answer.
        public var offset: Double?
        public var driftPPM: Double?
        public var exchanges: Int
    }

    public let id: UInt64
    public let configuration: Configuration
    private var sequence: UInt64 = 0
    private var estimator = ClockEstimator()
    private var replay = ReplayGuard()
    /// Heard from members that may lead: priority and when (local time).
    private var candidates: [UInt64: (priority: UInt32, heard: Int64)] = [:]
    private(set) public var leader: UInt64?
    private(set) public var term: UInt64 = 0
    /// While this member leads after another: its last model of the group's clock, frozen.
    private var inherited: ClockEstimator.Model?
    private(set) public var timeline: SyncTimeline?
    private var started: Int64?
    private var nextAnnounce: Int64 = .min
    private var nextRequest: Int64 = .min
    private var nextTimeline: Int64 = .min
    private var outstanding: [UInt64: Int64] = [:]
    private var nonce: UInt64 = 0
    private var lastAnswer: Int64?
    /// Leaderships this member saw change.
    public private(set) var leaderChanges = 0

    public init(id: UInt64, configuration: Configuration) {
        self.id = id
        self.configuration = configuration
    }

    public var leading: Bool { leader == id }

    /// The group's time at this member's time `local`: its own clock while it leads from the
    /// start, its frozen estimate of the previous leader's when it took over, the estimate of the
    /// leader's otherwise; nil before it knows.
    public func groupTime(atLocal local: Int64) -> Int64? {
        if configuration.systemClock { return local }
        if leading { return inherited.map { $0.groupTime(atLocal: local) } ?? local }
        return estimator.model?.groupTime(atLocal: local)
    }

    public func status(atLocal local: Int64) -> Status {
        let model = leading ? inherited : estimator.model
        let answered = lastAnswer.map { local - $0 <= configuration.leaderTimeout } ?? false
        let clockKnown = configuration.systemClock ? leader != nil : answered && (estimator.model?.exchanges ?? 0) >= configuration.lockExchanges
        return Status(leading: leading, leader: leader, term: term,
                      locked: leading || clockKnown,
                      offset: model?.offset(at: local), driftPPM: model?.driftPPM, exchanges: estimator.model?.exchanges ?? 0)
    }

    /// The leader sets the timeline (a new item, a seek, a pause): sent at the next tick.
    public mutating func publish(_ t: SyncTimeline) {
        guard leading else { return }
        var t = t
        t.term = term
        timeline = t
        nextTimeline = .min
    }

    /// What to send at this member's time `local`.
    public mutating func tick(atLocal local: Int64) -> [SyncMessage] {
        if started == nil { started = local }
        elect(at: local)
        var out: [SyncMessage] = []
        if configuration.role != .follower, local >= nextAnnounce {
            out.append(message(.announce(priority: configuration.priority, term: term), at: local))
            nextAnnounce = local + configuration.announceInterval
        }
        if leading {
            if let t = timeline, local >= nextTimeline {
                out.append(message(.timeline(t), at: local))
                nextTimeline = local + configuration.timelineInterval
            }
        } else if leader != nil, !configuration.systemClock, local >= nextRequest {
            nonce &+= 1
            outstanding[nonce] = local
            outstanding = outstanding.filter { local - $0.value <= configuration.leaderTimeout }
            out.append(message(.timeRequest(nonce: nonce, t1: local), at: local))
            let fast = (estimator.model?.exchanges ?? 0) < 8
            nextRequest = local + (fast ? configuration.requestInterval / 5 : configuration.requestInterval)
        }
        return out
    }

    /// Takes `m`, received at this member's time `local`; returns what to send in answer.
    public mutating func receive(_ m: SyncMessage, atLocal local: Int64) -> [SyncMessage] {
        guard m.sender != id else { return [] }
        // Ages are judged on the group's clock once this member is in lock, except a time
        // request's: a follower not yet in lock stamps its own clock (a replayed request gets an
        // answer whose nonce its asker no longer waits for).
        var judged = status(atLocal: local).locked
        if case .timeRequest = m.body { judged = false }
        guard replay.check(m, groupNow: judged ? groupTime(atLocal: local) : nil) == .fresh else { return [] }
        switch m.body {
        case let .announce(priority, heardTerm):
            candidates[m.sender] = (priority, local)
            if heardTerm > term && m.sender == bestCandidate(at: local) { term = heardTerm }
            elect(at: local)
        case let .timeRequest(n, t1):
            guard leading, let t2 = groupTime(atLocal: local) else { return [] }
            return [message(.timeResponse(follower: m.sender, nonce: n, t1: t1, t2: t2, t3: t2), at: local)]
        case let .timeResponse(follower, n, t1, t2, t3):
            guard follower == id, m.sender == leader, outstanding.removeValue(forKey: n) == t1 else { return [] }
            if estimator.add(ClockExchange(t1: t1, t2: t2, t3: t3, t4: local)) { lastAnswer = local }
        case let .timeline(t):
            guard m.sender == leader, t.term >= (timeline?.term ?? 0) else { return [] }
            timeline = t
        }
        return []
    }

    private mutating func message(_ body: SyncMessage.Body, at local: Int64) -> SyncMessage {
        sequence += 1
        return SyncMessage(sender: id, sequence: sequence, sentAt: groupTime(atLocal: local) ?? local, body: body)
    }

    /// The member that should lead now: the highest priority heard lately (this one included
    /// when it may lead), ties to the lowest id.
    private func bestCandidate(at local: Int64, includingSelf: Bool = true) -> UInt64? {
        var heard = candidates.filter { local - $0.value.heard <= configuration.leaderTimeout }.map { ($0.key, $0.value.priority) }
        if includingSelf && configuration.role != .follower { heard.append((id, configuration.priority)) }
        return heard.max { a, b in a.1 != b.1 ? a.1 < b.1 : a.0 > b.0 }?.0
    }

    private mutating func elect(at local: Int64) {
        // A member that may lead waits one timeout after it starts before leading, so that it
        // hears a leader already there first (role `leader` leads at once).
        let listening = configuration.role == .auto && local - (started ?? local) < configuration.leaderTimeout
        var best = bestCandidate(at: local)
        if listening && best == id { best = bestCandidate(at: local, includingSelf: false) }
        guard best != leader else { return }
        if leader != nil { leaderChanges += 1 }
        if best == id {
            // Taking over: lead on the estimate of the old leader's clock, frozen.
            inherited = estimator.model
            term += 1
            timeline?.term = term   // the timeline goes on under this leadership
            nextTimeline = .min
        } else {
            // Following a new leader: the estimate goes on (a leader that took over leads on the
            // group's time; one whose clock differs is a step, which the estimator starts over on).
            inherited = nil
            outstanding = [:]
            nextRequest = .min
        }
        leader = best
    }
}
