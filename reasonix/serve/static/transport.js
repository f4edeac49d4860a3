// The two ways the page talks to the server: JSON requests and the session's event stream.
import { state } from "./dom.js";

export async function api(method, path, body) {
  const opts = { method, credentials: "same-origin", headers: {} };
  if (method !== "GET") {
    opts.headers["Content-Type"] = "application/json";
    opts.headers["X-Reasonix-CSRF"] = state.csrf;
    opts.body = JSON.stringify(body || {});
  }
  let res;
  try {
    res = await fetch(path, opts);
  } catch (err) {
    return { ok: false, status: 0, data: { error: "the server cannot be reached" } };
  }
  let data = {};
  try { data = await res.json(); } catch (err) { data = {}; }
  return { ok: res.ok, status: res.status, data };
}

// Follows the open session from the last event seen; `onEvent` gets each new event once,
// `reopen(sid)` starts over when the server refuses the stream. Both are passed in by
// sessions.js so that this module imports nothing that imports it.
export function connect(onEvent, reopen) {
  if (state.es) state.es.close();
  const sid = state.session;
  const es = new EventSource(`/api/sessions/${encodeURIComponent(sid)}/events?after=${state.seq}`);
  state.es = es;
  es.onmessage = (msg) => {
    let ev;
    try { ev = JSON.parse(msg.data); } catch (err) { return; }
    if (sid !== state.session) return;
    if (ev.type !== "reset" && ev.seq <= state.seq) return; // seen already
    state.seq = ev.seq;
    state.retry = 0;
    onEvent(ev);
  };
  es.onerror = () => {
    if (es.readyState === EventSource.CLOSED && state.es === es) {
      // refused (logged out, session gone, server restarted): start over after a pause
      state.retry = Math.min(state.retry + 1, 5);
      setTimeout(() => { if (state.es === es) reopen(sid); }, 1000 * state.retry);
    }
  };
}
