// The session list, opening and starting sessions, and what arrives on the open
// session's event stream (handled here because an event can switch the session).
import { approvalCard, approvalDone } from "./approvals.js";
import { $, el, state, toast } from "./dom.js";
import { showLogin } from "./login.js";
import { setBusy, showStatus } from "./status.js";
import {
  addUser, appendReasoning, appendText, commandOutput, endAssistant, escapeCard, notice,
  phaseLine, renderHistory, searchCard, toolCard, toolResult,
} from "./transcript.js";
import { api, connect } from "./transport.js";

function ago(t) {
  const s = Math.max(0, Date.now() / 1000 - t);
  if (s < 60) return "just now";
  if (s < 3600) return Math.floor(s / 60) + " min ago";
  if (s < 86400) return Math.floor(s / 3600) + " h ago";
  return new Date(t * 1000).toLocaleDateString();
}

export async function loadSessions() {
  const r = await api("GET", "/api/sessions");
  if (!r.ok) return;
  const list = $("sessions");
  list.replaceChildren();
  for (const s of r.data.sessions) {
    if (s.id === state.session && s.title) setTitle(s.title);
    const li = el("li");
    const b = li.appendChild(el("button", s.id === state.session ? "current" : ""));
    b.type = "button";
    b.dataset.session = s.id;
    b.appendChild(el("span", "s-title", s.title || "(untitled)"));
    const meta = b.appendChild(el("span", "s-meta", ago(s.modified)));
    if (s.busy) meta.appendChild(el("span", "dot", " ● working"));
    b.addEventListener("click", () => { openSession(s.id); closeSidebar(); });
    list.appendChild(li);
  }
}

export async function openSession(id) {
  if (state.es) { state.es.close(); state.es = null; }
  state.session = id;
  const url = new URL(location.href);
  url.searchParams.set("session", id);
  url.hash = "";
  history.replaceState(null, "", url.pathname + url.search);
  const r = await api("GET", `/api/sessions/${encodeURIComponent(id)}`);
  if (!r.ok) {
    if (r.status === 401) return showLogin("Your login expired; log in again.");
    toast(r.data.error || "cannot open the session");
    return newSession();
  }
  if (state.session !== id) return;
  setTitle(r.data.title);
  renderHistory(r.data.items);
  state.seq = r.data.seq;
  showStatus(r.data.status);
  connect(handle, openSession);
  $("input").disabled = false;
  loadSessions();
}

export async function newSession() {
  const r = await api("POST", "/api/sessions", {});
  if (!r.ok) { toast(r.data.error || "cannot start a session"); return; }
  await openSession(r.data.id);
}

function setTitle(title) {
  $("title").textContent = title || "New session";
  document.title = (title ? title + " · " : "") + "Reasonix";
}

export function closeSidebar() { $("app").classList.remove("side-open"); }

// ---- the live stream: one event of the open session ----------------------------------
function handle(ev) {
  switch (ev.type) {
    case "user":
      addUser(ev.text);
      loadSessions(); // the first prompt titles the session; the list shows it working
      break;
    case "turn": setBusy(ev.state === "start"); if (ev.state === "end") { endAssistant(); loadSessions(); } break;
    case "text": appendText(ev.text); break;
    case "reasoning": appendReasoning(ev.text); break;
    case "tool_start": toolCard(ev); break;
    case "tool_end": {
      const card = state.cards.get(ev.call_id) || toolCard(ev);
      toolResult(card, ev.content, ev.is_error, ev.blocked);
      break;
    }
    case "approval": approvalCard(ev); break;
    case "web_search": searchCard(ev); break;
    case "phase": phaseLine(ev); break;
    case "sandbox_escape": escapeCard(ev); break;
    case "approval_done": approvalDone(ev); break;
    case "status": showStatus(ev); break;
    case "notice": notice(ev.text); break;
    case "error": notice(ev.message, "error"); break;
    case "command": commandOutput(ev); break;
    case "switched": openSession(ev.session); break;
    case "reset": openSession(state.session); break;
    default: break;
  }
}

export function wireSessions() {
  $("new-session").addEventListener("click", () => { closeSidebar(); newSession(); });
  $("toggle-sidebar").addEventListener("click", () => $("app").classList.toggle("side-open"));
  $("scrim").addEventListener("click", closeSidebar);
}
