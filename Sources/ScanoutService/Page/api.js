// The control API as the page uses it: JSON calls with the bearer token (kept in sessionStorage
// once given), and the event stream read with fetch (EventSource cannot send the token).

const tokenKey = "scanout.token";

/** A call the API refused: its status, and the message and field of its JSON answer. */
export class APIError extends Error {
  constructor(status, message, field) {
    super(message);
    this.status = status;
    this.field = field;
  }
  /** Whether the refusal is for want of a (valid) token. */
  get needsToken() { return (this.status === 401 || this.status === 403) && this.field === "Authorization"; }
}

/** Called with the refusal when a call needs a token; set by the page. */
let onTokenNeeded = () => {};
export function whenTokenNeeded(handler) { onTokenNeeded = handler; }

export function setToken(token) { sessionStorage.setItem(tokenKey, token); }

function headers(extra = {}) {
  const token = sessionStorage.getItem(tokenKey);
  return token ? { ...extra, Authorization: `Bearer ${token}` } : extra;
}

async function refusal(response) {
  let body = {};
  try { body = await response.json(); } catch { /* not JSON: the status says it */ }
  const error = new APIError(response.status, body.error || `${response.status} ${response.statusText}`, body.field);
  if (error.needsToken) onTokenNeeded(error);
  return error;
}

/** `method path` with `body` as JSON; the answer's JSON, or an APIError. */
export async function call(method, path, body) {
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }), cache: "no-store" };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  if (!response.ok) throw await refusal(response);
  return response.json();
}

export const get = (path) => call("GET", path);

/** The bytes of `path` as a Blob (the snapshot's PNG). */
export async function blob(path) {
  const response = await fetch(path, { headers: headers(), cache: "no-store" });
  if (!response.ok) throw await refusal(response);
  return response.blob();
}

/**
 * Reads `/events` until `signal` aborts, calling `onEvent(type, data, id)` for each message; on a
 * dropped connection it reconnects after the server's `retry:` with `Last-Event-ID`, as
 * EventSource would. `onOpen(open)` says whether the stream is up.
 */
export async function readEvents(onEvent, onOpen, signal) {
  let lastId = null, retry = 2000;
  while (!signal.aborted) {
    try {
      const response = await fetch("/events", { headers: headers(lastId ? { "Last-Event-ID": lastId } : {}), signal, cache: "no-store" });
      if (!response.ok) throw await refusal(response);
      onOpen(true);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const message = parseMessage(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (message.retry) retry = message.retry;
          if (message.id) lastId = message.id;
          if (message.data) onEvent(message.event || "message", JSON.parse(message.data), message.id);
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof APIError && error.needsToken) { onOpen(false); return; }
    }
    onOpen(false);
    await new Promise((resolve) => setTimeout(resolve, retry));
  }
}

/** One SSE message's fields (`event`, `data` joined by newlines, `id`, `retry`). */
function parseMessage(text) {
  const message = { data: "" };
  for (const line of text.split("\n")) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "data") message.data += (message.data ? "\n" : "") + value;
    else if (field === "event") message.event = value;
    else if (field === "id") message.id = value;
    else if (field === "retry" && /^\d+$/.test(value)) message.retry = Number(value);
  }
  return message;
}
