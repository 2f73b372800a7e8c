import ScanoutKMS

/// The connector property changes of several output filters (the screen's content guard and each
/// zone's, `KMSDisplay.zoneFilters`) made into one commit's. Per object and property the highest
/// value asked goes (`Content Protection` Desired over Undesired, `HDCP Content Type` 1 over 0),
/// and a release (Undesired) is left out while another filter still holds the connector's
/// protection: a zone whose item ends must not turn HDCP off under a zone that still needs it.
struct KMSFilterChanges {
    /// The filters that hold `Content Protection` = Desired on each connector, as committed.
    private(set) var holders: [UInt32: Set<ObjectIdentifier>] = [:]

    typealias Asked = (filter: ObjectIdentifier, changes: [AtomicRequest.Assignment])

    func merged(_ asked: [Asked]) -> [AtomicRequest.Assignment] {
        var out: [AtomicRequest.Assignment] = []
        for (filter, changes) in asked {
            for change in changes {
                if change.property == ContentProtection.property, change.value == ContentProtection.undesired.rawValue {
                    let others = (holders[change.objectID] ?? []).subtracting([filter])
                    let askedByOthers = asked.contains { $0.filter != filter && $0.changes.contains { $0.objectID == change.objectID && $0.property == change.property } }
                    if !others.isEmpty && !askedByOthers { continue }
                }
                if let i = out.firstIndex(where: { $0.objectID == change.objectID && $0.property == change.property }) {
                    out[i].value = max(out[i].value, change.value)
                } else {
                    out.append(change)
                }
            }
        }
        return out
    }

    /// The commit carrying `asked` went through: who holds protection now.
    mutating func committed(_ asked: [Asked]) {
        for (filter, changes) in asked {
            for change in changes where change.property == ContentProtection.property {
                if change.value == ContentProtection.undesired.rawValue {
                    holders[change.objectID, default: []].remove(filter)
                } else {
                    holders[change.objectID, default: []].insert(filter)
                }
            }
        }
    }
}
