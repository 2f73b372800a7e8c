-- For the network benchmark: prints on stderr one line per frame mpv shows (as its playback
-- time changes), with mpv's own clock, the video height (which HLS variant) and the cache state;
-- then mpv's drop counters when the file ends.
--   netbench-frame MPV_TIME_S TIME_POS_S HEIGHT
--   netbench-cache MPV_TIME_S yes|no          (paused-for-cache: mpv waits for its cache)
--   netbench-end dropped=N decoder-dropped=N delayed=N reason=R
local height = 0
local counts = {}
local function line(s) io.stderr:write(s .. "\n"); io.stderr:flush() end
mp.observe_property("video-params/h", "number", function(_, v) height = v or 0 end)
mp.observe_property("time-pos", "number", function(_, v)
  if v then
    local h = mp.get_property_number("video-params/h") or height
    line(string.format("netbench-frame %.6f %.6f %d", mp.get_time(), v, h))
  end
end)
mp.observe_property("paused-for-cache", "bool", function(_, v)
  line(string.format("netbench-cache %.6f %s", mp.get_time(), v and "yes" or "no"))
end)
for _, p in ipairs({"frame-drop-count", "decoder-frame-drop-count", "vo-delayed-frame-count"}) do
  counts[p] = 0
  mp.observe_property(p, "number", function(_, v) if v then counts[p] = v end end)
end
mp.register_event("end-file", function(e)
  line(string.format("netbench-end dropped=%d decoder-dropped=%d delayed=%d reason=%s",
    counts["frame-drop-count"], counts["decoder-frame-drop-count"], counts["vo-delayed-frame-count"], e.reason or "?"))
end)
