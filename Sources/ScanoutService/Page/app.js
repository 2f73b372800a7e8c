// The management page: reads the service once a second (state, figures, a snapshot), follows
// its event stream, and sends what the forms and buttons ask. Everything goes through the API,
// with the token from sessionStorage when this is not the machine itself.
import { APIError, blob, call, get, readEvents, setToken, whenTokenNeeded } from "./api.js";
import { Rates, Sparkline } from "./plots.js";
import * as view from "./views.js";

const { $ } = view;
const page = {
  config: null, state: null, zones: null, running: false, events: null, snapshotBusy: false, snapshotURL: null,
  timers: [], pending: new Map(), dirty: new Set(),
};
const rates = new Rates();
let plots = null;

function say(text, bad = false) {
  $("status").textContent = text;
  $("status").className = bad ? "bad" : "";
}

/** Runs `action`; a refusal is said in the status line (a missing token opens the token form). */
async function attempt(action, done) {
  try {
    await action();
    if (done) say(done);
  } catch (error) {
    if (!(error instanceof APIError && error.needsToken)) say(error.message, true);
  }
}

/** `refresh` at most once per `ms`, however many events ask for it. */
function soon(name, refresh, ms = 250) {
  if (page.pending.has(name)) return;
  page.pending.set(name, setTimeout(() => { page.pending.delete(name); attempt(refresh); }, ms));
}

async function refreshState() {
  const state = await get("/state");
  page.state = state;
  view.showNow(state);
  view.showPlaylist(state, (i) => attempt(() => call("POST", "/playlist/jump", { index: i }).then(refreshState), `Playing item ${i + 1}.`));
  if (!page.dirty.has("playlist-sources")) $("playlist-sources").value = state.playlist.map((item) => item.source).join("\n");
  if (!page.dirty.has("playlist-repeat")) $("playlist-repeat").value = state.repeat;
  if (page.config.layout) {
    page.zones = await get("/zones");
    view.showZones(page.zones);
  }
}

async function refreshStats() {
  const stats = await get("/stats");
  plots.presented.push(rates.rate("presented", stats.framesPresented));
  plots.dropped.push(rates.rate("dropped", stats.framesDropped));
  plots.pacing.push(stats.pacingP99Ms);
  plots.decode.push(stats.decodeMsPerFrame);
  plots.buffer.push(stats.buffer && stats.buffer.seconds !== null ? stats.buffer.seconds : null);
}

async function refreshSnapshot() {
  const s = page.state;
  if (document.hidden || page.snapshotBusy || !s || ["idle", "stopped", "error", "preparing"].includes(s.state)) return;
  page.snapshotBusy = true;
  try {
    const img = $("snapshot");
    const width = Math.min(1280, Math.max(160, Math.round(img.clientWidth * window.devicePixelRatio)));
    const url = URL.createObjectURL(await blob(`/snapshot?width=${width}`));
    img.addEventListener("load", () => { if (page.snapshotURL) URL.revokeObjectURL(page.snapshotURL); page.snapshotURL = url; }, { once: true });
    img.src = url;
    const time = new Date().toLocaleTimeString([], { hour12: false });
    const playing = s.item !== null && s.playlist[s.item] ? s.playlist[s.item].source : "nothing";
    img.alt = `The screen at ${time}, showing ${playing}`;
    $("snapshot-caption").textContent = `Taken at ${time}, ${s.state}.`;
  } finally {
    page.snapshotBusy = false;
  }
}

async function refreshSchedule() {
  let schedule;
  try {
    schedule = await get("/schedule");
  } catch (error) {
    if (!(error instanceof APIError) || error.status !== 404) throw error;
    $("schedule-now").textContent = "No schedule is set: the playlist plays. Saving one starts it.";
    return;
  }
  if (!page.dirty.has("schedule-json")) $("schedule-json").value = JSON.stringify(view.scheduleRequest(schedule), null, 2);
  view.showScheduleNow(await get("/schedule/now"));
}

const tune = (id) => attempt(() => call("POST", "/channel", { id }).then(refreshState), "Tuned.");
const refreshChannels = async () => view.showChannels(await get("/channels"), tune);
async function refreshDownloads() {
  try {
    view.showDownloads(await get("/downloads"));
  } catch (error) {
    if (!(error instanceof APIError) || error.status !== 503) throw error;
    view.showDownloads({ downloads: [] }, `The offline store is off: ${error.message}.`);
  }
}
const refreshPlays = async () => view.showPlays(await get("/proof-of-play"));

function onEvent(type, data) {
  if (type === "position") {
    const zone = page.zones && data.zone ? page.zones.zones.find((z) => z.id === data.zone) : null;
    if (zone) {
      zone.state.position = data.position;
      view.showZones(page.zones);
    }
    if (page.state && (!data.zone || data.zone === (page.zones && page.zones.main))) {
      page.state.position = data.position;
      view.showNow(page.state);
    }
    return;
  }
  view.logEvent(type, data);
  if (type === "scheduleChanged") soon("schedule", refreshSchedule);
  else if (type === "channelChanged" || type === "channelsChanged") soon("channels", refreshChannels);
  else if (type === "downloadProgress" || type === "downloadState") soon("downloads", refreshDownloads, 500);
  if (type !== "downloadProgress") soon("state", refreshState);
}

async function start() {
  if (page.running) return;
  page.running = true;
  try {
    await connect();
  } catch (error) {
    stop();
    throw error;
  }
}

async function connect() {
  page.config = await get("/config");
  const version = await get("/version");
  $("version").textContent = `${version.name} ${version.version}`;
  await refreshState();
  say("Connected.");
  page.events = new AbortController();
  readEvents(onEvent, (open) => { if (page.running) say(open ? "Connected; events live." : "Event stream closed; reconnecting…", !open); }, page.events.signal);
  for (const refresh of [refreshSchedule, refreshChannels, refreshDownloads, refreshPlays]) attempt(refresh);
  const every = (ms, f) => page.timers.push(setInterval(() => attempt(f), ms));
  every(1000, refreshStats);
  every(1000, refreshSnapshot);
  every(5000, refreshState);
  every(10000, refreshPlays);
  attempt(refreshSnapshot);
}

function stop() {
  page.running = false;
  page.timers.forEach(clearInterval);
  page.timers = [];
  if (page.events) page.events.abort();
}

function askForToken(error) {
  stop();
  const form = $("token-form");
  $("token-why").textContent = error.status === 403
    ? `${error.message}. A token must be configured (SCANOUT_TOKEN or the config's token) for other machines.`
    : "This service answers other machines only with its API token. It is kept in this tab until it is closed.";
  form.hidden = false;
  $("panels").hidden = true;
  say("A token is needed.", true);
  $("token-input").focus();
}

function wireForms() {
  for (const id of ["playlist-sources", "playlist-repeat", "schedule-json"]) $(id).addEventListener("input", () => page.dirty.add(id));
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    setToken($("token-input").value.trim());
    $("token-form").hidden = true;
    $("panels").hidden = false;
    attempt(start);
  });
  $("playlist-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const items = $("playlist-sources").value.split("\n").map((s) => s.trim()).filter(Boolean);
    const repeat = $("playlist-repeat").value;
    attempt(async () => {
      await call("PUT", "/playlist", { items });
      if (page.state && repeat !== page.state.repeat) await call("PUT", "/repeat", { repeat });
      page.dirty.delete("playlist-sources");
      page.dirty.delete("playlist-repeat");
      await refreshState();
    }, `Playlist replaced: ${items.length} item${items.length === 1 ? "" : "s"}.`);
  });
  $("schedule-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const field = $("schedule-json");
    let schedule;
    try { schedule = JSON.parse(field.value); field.removeAttribute("aria-invalid"); } catch (error) {
      field.setAttribute("aria-invalid", "true");
      say(`Schedule: not JSON (${error.message}).`, true);
      return;
    }
    attempt(async () => {
      await call("PUT", "/schedule", schedule);
      page.dirty.delete("schedule-json");
      await refreshSchedule();
    }, "Schedule saved.");
  });
  for (const button of document.querySelectorAll("button[data-post]")) {
    button.addEventListener("click", () => attempt(() => call("POST", button.dataset.post).then(refreshState), `${button.textContent}: done.`));
  }
  for (const power of ["on", "off"]) {
    $(`display-${power}`).addEventListener("click", () => attempt(() => call("POST", "/display", { power }).then(refreshState), `Screen ${power}.`));
  }
}

function init() {
  const list = $("plots");
  plots = {
    presented: new Sparkline(list, "Frames presented", "/s"),
    dropped: new Sparkline(list, "Frames dropped", "/s"),
    pacing: new Sparkline(list, "Pacing, 99th percentile", "ms", 2),
    decode: new Sparkline(list, "Decode time a frame", "ms", 2),
    buffer: new Sparkline(list, "Read-ahead held", "s", 1),
  };
  whenTokenNeeded(askForToken);
  wireForms();
  attempt(start);
}

init();
