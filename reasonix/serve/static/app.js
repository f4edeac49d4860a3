// Reasonix in the browser: plain functions over the DOM, no framework, no build step.
// This is the entry point (<script type="module">); each responsibility is a module beside
// it, imported by relative path, served from /static/ and preloaded by index.html:
//   dom.js         the shared state and DOM helpers
//   transport.js   JSON requests and the session's event stream
//   markdown.js    Markdown to text nodes
//   transcript.js  messages, reasoning, tool and search cards
//   approvals.js   approval cards
//   status.js      the footer's figures and the busy state
//   sessions.js    the session list, opening a session, the events of its stream
//   composer.js    the message box, / and @ completion, the picker
//   login.js       the login form
//   usage.js       the Usage view (`reasonix usage` as a page)
import { wireComposer } from "./composer.js";
import { $, el, state } from "./dom.js";
import { login, showLogin } from "./login.js";
import { newSession, openSession, wireSessions } from "./sessions.js";
import { wireTranscript } from "./transcript.js";
import { api } from "./transport.js";
import { wireUsage } from "./usage.js";

async function startApp() {
  $("login").hidden = true;
  $("app").hidden = false;
  const cfg = await api("GET", "/api/config");
  if (cfg.ok) {
    $("workspace").textContent = cfg.data.workspace;
    const modes = $("mode");
    modes.replaceChildren();
    for (const m of cfg.data.modes) { const o = el("option", "", m); o.value = m; modes.appendChild(o); }
    const models = $("models");
    models.replaceChildren();
    for (const m of cfg.data.models) { const o = el("option"); o.value = m; models.appendChild(o); }
  }
  const wanted = new URL(location.href).searchParams.get("session");
  if (wanted) return openSession(wanted);
  const list = await api("GET", "/api/sessions");
  const first = list.ok && list.data.sessions.length ? list.data.sessions[0].id : "";
  return first ? openSession(first) : newSession();
}

async function boot() {
  // The token travels in the fragment (never sent to a server); take it and clear the bar.
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get("token") || "";
  if (location.hash) history.replaceState(null, "", location.pathname + location.search);
  wireComposer();
  wireSessions();
  wireTranscript();
  wireUsage();
  $("login-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    if (await login($("login-secret").value)) { $("login-secret").value = ""; startApp(); }
  });
  const hello = await api("GET", "/api/hello");
  if (!hello.ok) { document.body.textContent = hello.data.error || "the server refused this page"; return; }
  state.csrf = hello.data.csrf;
  state.auth = hello.data.auth;
  if (hello.data.authenticated) return startApp();
  if (token && await login(token)) return startApp();
  showLogin(state.auth === "password" ? "Enter the password set with `reasonix serve --set-password`." :
    "Open the URL printed by `reasonix serve` (it carries the token), or paste the token here.");
}

document.addEventListener("DOMContentLoaded", boot);
