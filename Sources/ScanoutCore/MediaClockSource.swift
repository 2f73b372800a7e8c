/// A clock that says which point of the input is being heard: the master of the video timeline
/// when there is audio (`PlaybackSession.masterClock`).
public protocol MediaClockSource: AnyObject {
    /// The stream time (media time: seconds on the container's timeline) of item `epoch` heard at
    /// `now` (a time on the session's clock); nil while nothing of that item is playing (not
    /// started, flushed, paused, drained, lost, or another item's samples are heard).
    func streamTime(at now: ClockTime, epoch: Int) -> Double?
}
