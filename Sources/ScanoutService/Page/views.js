// What the page shows, drawn from the API's answers: each function fills one part of the page
// from the JSON it is given, with DOM nodes (text is never parsed as HTML).

/** An element with attributes (`on*` ones are listeners) and children (strings become text). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

export const $ = (id) => document.getElementById(id);

/** Seconds as m:ss or h:mm:ss. */
export function clock(s) {
  if (s === null || s === undefined || !Number.isFinite(s)) return "—";
  const t = Math.max(0, Math.floor(s)), h = Math.floor(t / 3600), m = Math.floor((t % 3600) / 60), sec = String(t % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

export function bytes(n) {
  if (!Number.isFinite(n)) return "—";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function current(state) {
  return state.item !== null && state.playlist[state.item] ? state.playlist[state.item].source : null;
}

/** Now playing: the player's state (`GET /state`). */
export function showNow(state) {
  const facts = [
    ["State", state.state],
    ["Item", state.item === null ? "none" : `${state.item + 1} of ${state.playlist.length}: ${current(state) ?? "—"}`],
    ["Position", `${clock(state.position)} / ${clock(state.duration)}${state.live ? " (live)" : ""}`],
    ["Rate", `${state.rate}×`],
    ["Repeat", state.repeat],
    ["Output", state.output],
    ["Screen", state.display],
    ["Service", state.serviceUp ? "up" : `down: ${state.reasons.join(", ")}`],
  ];
  if (state.buffer) facts.push(["Buffer", `${state.buffer.policy}${state.buffer.seconds !== null ? `, ${state.buffer.seconds.toFixed(1)} s held` : ""}`]);
  if (state.lastError) facts.push(["Last error", `${state.lastError.source ?? ""}: ${state.lastError.message}`]);
  const list = $("now");
  list.replaceChildren(...facts.flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-fact": k.toLowerCase() }, String(v))]));
  list.querySelector('[data-fact="service"]').className = state.serviceUp ? "good" : "bad";
}

/** Now playing per zone (`GET /zones`), on a screen of zones. */
export function showZones(zones) {
  const table = $("zones");
  table.hidden = false;
  table.tBodies[0].replaceChildren(...zones.zones.map((z) => el("tr", {},
    el("th", { scope: "row" }, z.main ? `${z.id} (main)` : z.id),
    el("td", {}, z.state.state),
    el("td", {}, current(z.state) ?? "none"),
    el("td", {}, `${clock(z.state.position)} / ${clock(z.state.duration)}`),
    el("td", {}, `${z.rect.width}×${z.rect.height} at ${z.rect.x},${z.rect.y}`))));
}

/** The playlist (`GET /state`'s), each item with a button that makes it current. */
export function showPlaylist(state, jump) {
  $("playlist").replaceChildren(...state.playlist.map((item, i) => el("li", i === state.item ? { class: "current", "aria-current": "true" } : {},
    item.source,
    el("button", { type: "button", class: "quiet", "aria-label": `Play item ${i + 1}`, onclick: () => jump(i) }, "Play"))));
}

/** An item as PUT /playlist and PUT /schedule take it: its source alone unless it says more. */
export function entry(item) {
  const e = { source: item.source };
  for (const k of ["scaling", "playerType", "subtitles", "subtitleTrack", "duration"]) if (item[k] !== null && item[k] !== undefined) e[k] = item[k];
  if (item.rotation) e.rotation = item.rotation;
  if (item.subtitleLanguages && item.subtitleLanguages.length) e.subtitleLanguages = item.subtitleLanguages;
  return Object.keys(e).length === 1 ? item.source : e;
}

/** A schedule as GET /schedule shows it, in the form PUT /schedule takes (nulls left out). */
export function scheduleRequest(s) {
  const rule = (r) => {
    const out = {};
    for (const [k, v] of Object.entries(r)) {
      if (v === null || (k === "power" && v === "on")) continue;
      out[k] = k === "playlist" ? v.map(entry) : v;
    }
    if (out.playlist && out.playlist.length === 0) delete out.playlist;
    return out;
  };
  return { timeZone: s.timeZone, default: s.default.map(entry), slots: s.slots.map(rule), events: s.events.map(rule) };
}

/** What the schedule plays now (`GET /schedule/now`). */
export function showScheduleNow(now) {
  const rule = now.rule === "default" ? "the default" : `${now.rule} ${now.id}`;
  const next = now.next ? ` Next change: ${now.next} (${now.nextRule}).` : " No change within a week.";
  $("schedule-now").textContent = `Playing ${rule}${now.power === "off" ? " (screens off)" : ""}.${next}`;
}

/** The channel list (`GET /channels`), each channel with a button that tunes it. */
export function showChannels(list, tune) {
  const items = list.channels.map((c) => el("li", c.current ? { class: "current", "aria-current": "true" } : {},
    c.group ? `${c.name} (${c.group})` : c.name,
    el("button", { type: "button", class: "quiet", "aria-label": `Tune ${c.name}`, onclick: () => tune(c.id) }, "Tune")));
  $("channels").replaceChildren(...(items.length ? items : [el("li", { class: "muted" }, "No channels (config channels: an M3U list or SAP).")]));
}

/** The offline store's downloads (`GET /downloads`). */
export function showDownloads(list, none = "No downloads.") {
  const rows = list.downloads.map((d) => el("tr", {},
    el("td", {}, d.source),
    el("td", {}, d.reason ? `${d.state}: ${d.reason}` : d.state),
    el("td", {}, `${d.percent.toFixed(0)} % of ${bytes(d.total)}`),
    el("td", {}, d.state === "downloading" ? `${bytes(d.rate)}/s` : "—")));
  $("downloads").tBodies[0].replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { colspan: "4", class: "muted" }, none))]));
}

/** The newest plays of the proof-of-play record (`GET /proof-of-play`), newest first. */
export function showPlays(record, count = 8) {
  const plays = record.plays.slice(-count).reverse().map((p) => el("li", {},
    `${p.start.replace("T", " ").replace(/\.\d+/, "")}: ${p.source} — ${p.outcome}, ${p.seconds.toFixed(1)} s${p.zone ? ` (zone ${p.zone})` : ""}`));
  $("plays").replaceChildren(...(plays.length ? plays : [el("li", { class: "muted" }, "No plays recorded yet.")]));
}

/** One event at the top of the log (position events are not listed: they only move the clock). */
export function logEvent(type, data, keep = 100) {
  const { seq, type: _, ...fields } = data;
  const time = new Date().toLocaleTimeString([], { hour12: false });
  const text = JSON.stringify(fields);
  const log = $("events");
  log.prepend(el("li", {}, `${time} ${type}${text === "{}" ? "" : ` ${text.length > 160 ? `${text.slice(0, 157)}…` : text}`}`));
  while (log.children.length > keep) log.lastElementChild.remove();
}
