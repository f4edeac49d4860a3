// Reasonix in the browser: plain functions over the DOM, no framework, no build step.
// Everything the model or a tool wrote is inserted with textContent / text nodes.
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  csrf: "", auth: "none", session: "", seq: 0, es: null, busy: false,
  cur: null,        // the assistant bubble receiving text: {el, text}
  think: null,      // the reasoning block receiving text: {el, body, text}
  cards: new Map(), // tool call id -> card parts
  approvals: new Map(),
  completion: { items: [], active: 0, kind: "" },
  modes: [], paint: 0, retry: 0,
};

// ---- small helpers ----------------------------------------------------------
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

async function api(method, path, body) {
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

function toast(text, ms) {
  const t = $("toast");
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, ms || 5000);
}

function nearBottom() {
  const t = $("transcript");
  return t.scrollHeight - t.scrollTop - t.clientHeight < 80;
}

function append(node) {
  const stick = nearBottom();
  $("transcript").appendChild(node);
  if (stick) $("transcript").scrollTop = $("transcript").scrollHeight;
  return node;
}

// ---- Markdown, kept simple ----------------------------------------------------------
const KEYWORDS = new Set(("def class return if elif else for while in not and or import from as " +
  "with try except finally raise lambda yield None True False pass break continue async await " +
  "function const let var new this null undefined true false typeof switch case default func " +
  "package type struct interface go defer fn impl pub use mod match mut self echo then fi do done")
  .split(" "));
const TOKEN = /("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`]*`)|(#[^\n]*|\/\/[^\n]*|\/\*[\s\S]*?\*\/)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_][A-Za-z0-9_]*)/g;

function highlight(code, lang) {
  const frag = document.createDocumentFragment();
  const hashComments = /^(py|python|sh|bash|shell|zsh|toml|yaml|yml|rb|ruby|conf|ini)$/i.test(lang);
  let last = 0;
  for (const m of code.matchAll(TOKEN)) {
    let cls = "";
    if (m[1]) cls = "tok-str";
    else if (m[2]) cls = (m[2][0] === "#" && !hashComments) ? "" : "tok-com";
    else if (m[3]) cls = "tok-num";
    else if (m[4] && KEYWORDS.has(m[4])) cls = "tok-kw";
    if (!cls) continue;
    if (m.index > last) frag.appendChild(document.createTextNode(code.slice(last, m.index)));
    frag.appendChild(el("span", cls, m[0]));
    last = m.index + m[0].length;
  }
  if (last < code.length) frag.appendChild(document.createTextNode(code.slice(last)));
  return frag;
}

const INLINE = /(`+)([\s\S]*?)\1|\*\*([^*\n]+)\*\*|(?<![\w*])\*([^*\s][^*\n]*?)\*(?![\w*])|\[([^\]\n]+)\]\(([^)\s]+)\)/g;

function inline(parent, text) {
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) parent.appendChild(document.createTextNode(text.slice(last, m.index)));
    if (m[1]) parent.appendChild(el("code", "", m[2]));
    else if (m[3]) parent.appendChild(el("strong", "", m[3]));
    else if (m[4]) parent.appendChild(el("em", "", m[4]));
    else if (m[5]) {
      if (/^https?:\/\//i.test(m[6])) {
        const a = el("a", "", m[5]);
        a.href = m[6];
        a.rel = "noopener noreferrer";
        a.target = "_blank";
        parent.appendChild(a);
      } else parent.appendChild(document.createTextNode(m[0]));
    }
    last = m.index + m[0].length;
  }
  if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
}

function inlineLines(parent, lines) {
  lines.forEach((line, i) => {
    if (i) parent.appendChild(document.createElement("br"));
    inline(parent, line);
  });
}

function markdown(target, text) {
  target.replaceChildren();
  const lines = text.split("\n");
  let i = 0;
  let para = [];
  const flush = () => {
    if (para.length) { const p = el("p"); inlineLines(p, para); target.appendChild(p); }
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(/^\s*(```+|~~~+)\s*([\w+-]*)/);
    if (fence) {
      flush();
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      i += 1;
      const pre = el("pre");
      const code = el("code");
      if (fence[2]) code.dataset.lang = fence[2];
      code.appendChild(highlight(body.join("\n"), fence[2]));
      pre.appendChild(code);
      target.appendChild(pre);
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    if (heading) {
      flush();
      const h = el("h" + heading[1].length);
      inline(h, heading[2]);
      target.appendChild(h);
      i += 1;
      continue;
    }
    const bullet = /^\s*[-*+]\s+/;
    const number = /^\s*\d+[.)]\s+/;
    if (bullet.test(line) || number.test(line)) {
      flush();
      const ordered = number.test(line);
      const pattern = ordered ? number : bullet;
      const list = el(ordered ? "ol" : "ul");
      while (i < lines.length && pattern.test(lines[i])) {
        const li = el("li");
        inline(li, lines[i].replace(pattern, ""));
        list.appendChild(li);
        i += 1;
      }
      target.appendChild(list);
      continue;
    }
    if (/^>\s?/.test(line)) {
      flush();
      const quote = el("blockquote");
      const body = [];
      while (i < lines.length && /^>\s?/.test(lines[i])) body.push(lines[i++].replace(/^>\s?/, ""));
      inlineLines(quote, body);
      target.appendChild(quote);
      continue;
    }
    if (!line.trim()) flush();
    else para.push(line);
    i += 1;
  }
  flush();
}

// ---- transcript items -----------------------------------------------------------------
function addUser(text) {
  endAssistant();
  append(el("div", "msg user", text));
}

function endAssistant() {
  paint();
  state.cur = null;
  state.think = null;
}

function addAssistant(text) {
  const box = append(el("div", "msg assistant"));
  state.cur = { el: box, text: text || "", painted: text || "" };
  markdown(box, state.cur.text);
  return state.cur;
}

// Streamed text is re-rendered at most every 30 ms (a timer, unlike animation frames,
// also runs in a background tab).
function paint() {
  if (state.paint) { clearTimeout(state.paint); state.paint = 0; }
  const cur = state.cur;
  if (!cur || cur.painted === cur.text) return;
  const stick = nearBottom();
  markdown(cur.el, cur.text);
  cur.painted = cur.text;
  if (stick) $("transcript").scrollTop = $("transcript").scrollHeight;
}

function appendText(text) {
  state.think = null;
  if (!state.cur) addAssistant("");
  state.cur.text += text;
  if (!state.paint) state.paint = setTimeout(paint, 30);
}

function addReasoning(text, open) {
  const box = el("details", "msg reasoning");
  box.open = !!open;
  box.appendChild(el("summary", "", "thinking"));
  const body = box.appendChild(el("div", "", text));
  append(box);
  state.think = { el: box, body, text };
  return state.think;
}

function appendReasoning(text) {
  if (!state.think) { state.cur = null; addReasoning("", true); }
  state.think.text += text;
  state.think.body.textContent = state.think.text;
}

function diffBlock(lines) {
  const pre = el("pre", "diff");
  for (const line of lines) {
    let cls = "ctx";
    if (line.startsWith("+++") || line.startsWith("---")) cls = "hunk";
    else if (line.startsWith("+")) cls = "add";
    else if (line.startsWith("-")) cls = "del";
    else if (line.startsWith("@@")) cls = "hunk";
    pre.appendChild(el("span", cls, line));
  }
  return pre;
}

function toolCard(ev) {
  endAssistant();
  const box = el("details", "msg card tool");
  const head = box.appendChild(el("summary"));
  const stateEl = head.appendChild(el("span", "t-state run", "running"));
  head.appendChild(el("span", "t-name", ev.name));
  head.appendChild(el("span", "t-sum", ev.summary && ev.summary !== ev.name ?
    ev.summary.replace(ev.name + ": ", "") : ""));
  const body = box.appendChild(el("div", "t-body"));
  if (ev.diff && ev.diff.length) {
    body.appendChild(diffBlock(ev.diff));
    box.open = true;
  } else if (ev.arguments && ev.arguments !== "{}") {
    body.appendChild(el("pre", "args", ev.arguments));
  }
  const result = body.appendChild(el("pre", "result"));
  result.hidden = true;
  const card = { box, stateEl, result };
  state.cards.set(ev.call_id, card);
  append(box);
  return card;
}

function toolResult(card, content, isError, blocked) {
  card.stateEl.className = "t-state " + (isError ? "err" : "ok");
  card.stateEl.textContent = blocked ? "blocked" : (isError ? "error" : "done");
  if (content) { card.result.textContent = content; card.result.hidden = false; }
}

const CHOICE_LABEL = {
  once: "Allow once", session: "Allow for this session", always: "Always allow", deny: "Deny",
};

function approvalCard(ev) {
  endAssistant();
  const box = el("div", "msg card approval");
  box.dataset.approval = ev.id;
  box.appendChild(el("h3", "", "Allow " + ev.summary + "?"));
  if (ev.reason) box.appendChild(el("p", "reason", ev.reason));
  if (ev.diff && ev.diff.length) box.appendChild(diffBlock(ev.diff));
  else if (ev.command) box.appendChild(el("pre", "", ev.command));
  if (ev.rule && ev.choices.includes("session")) {
    const p = box.appendChild(el("p", "rule", "For this session adds the rule "));
    p.appendChild(el("code", "", ev.rule));
  }
  if (ev.rule && ev.choices.includes("always")) {
    const p = box.appendChild(el("p", "rule", "Always allow saves "));
    p.appendChild(el("code", "", ev.rule));
    p.appendChild(document.createTextNode(" to ./reasonix.toml [permissions].allow"));
    if (ev.preview) box.appendChild(el("pre", "preview", ev.preview));
  }
  const row = box.appendChild(el("div", "choices"));
  const buttons = [];
  for (const choice of ev.choices) {
    const b = row.appendChild(el("button", choice === "once" ? "primary" : "", CHOICE_LABEL[choice] || choice));
    b.type = "button";
    b.dataset.choice = choice;
    b.addEventListener("click", async () => {
      buttons.forEach((x) => { x.disabled = true; });
      const r = await api("POST", `/api/sessions/${state.session}/approve`, { id: ev.id, choice });
      if (!r.ok) { toast(r.data.error || "the answer was not taken"); buttons.forEach((x) => { x.disabled = false; }); }
    });
    buttons.push(b);
  }
  const answered = box.appendChild(el("p", "answered"));
  answered.hidden = true;
  state.approvals.set(ev.id, { box, buttons, answered });
  append(box);
}

function approvalDone(ev) {
  const card = state.approvals.get(ev.id);
  if (!card) return;
  card.buttons.forEach((b) => { b.disabled = true; });
  card.answered.hidden = false;
  card.answered.textContent = "answer: " + (CHOICE_LABEL[ev.choice] || ev.choice);
}

function searchCard(ev) {
  endAssistant();
  const box = el("details", "msg card search");
  box.open = true;
  const head = box.appendChild(el("summary"));
  head.appendChild(el("span", "t-state " + (ev.error ? "err" : "ok"), ev.error ? ev.error : "searched"));
  head.appendChild(el("span", "t-name", "web search"));
  head.appendChild(el("span", "t-sum", ev.query));
  const list = box.appendChild(el("ul", "t-body hits"));
  for (const hit of ev.results || []) {
    const li = list.appendChild(el("li"));
    if (/^https?:\/\//i.test(hit.url)) {
      const a = li.appendChild(el("a", "", hit.title || hit.url));
      a.href = hit.url;
      a.rel = "noopener noreferrer";
      a.target = "_blank";
    } else li.appendChild(el("span", "", hit.title || hit.url));
    if (hit.title) li.appendChild(el("span", "url", " " + hit.url));
  }
  append(box);
}

function escapeCard(ev) {
  const text = `sandbox escape ${ev.granted ? "granted" : "refused"} (${ev.detail}): ${ev.command}`;
  notice(text, ev.granted ? "" : "error");
}

function phaseLine(ev) {
  if (ev.phase === "route" && (ev.route === "executor" || !ev.route)) return; // the usual path
  const parts = [ev.phase];
  if (ev.route) parts.push(ev.route.replaceAll("_", " "));
  if (ev.plan_id) parts.push("plan " + ev.plan_id);
  if (ev.status) parts.push(ev.status);
  notice(parts.join(" · "));
}

function notice(text, cls) {
  endAssistant();
  append(el("div", "notice" + (cls ? " " + cls : ""), text));
}

function commandOutput(ev) {
  endAssistant();
  const box = el("div", "msg command");
  box.appendChild(el("pre", ev.error ? "error" : "", ev.text));
  append(box);
}

function renderHistory(items) {
  $("transcript").replaceChildren();
  state.cards.clear();
  state.approvals.clear();
  endAssistant();
  for (const it of items) {
    if (it.type === "user") addUser(it.text);
    else if (it.type === "assistant") { addAssistant(it.text); endAssistant(); }
    else if (it.type === "reasoning") { addReasoning(it.text, false); state.think = null; }
    else if (it.type === "tool") {
      const card = toolCard(it);
      if (it.result !== null && it.result !== undefined) {
        toolResult(card, it.result, false, false);
        card.box.open = false;
      }
    } else if (it.type === "notice") notice(it.text);
    else if (it.type === "web_search") searchCard(it);
    else if (it.type === "sandbox_escape") escapeCard(it);
  }
  $("transcript").scrollTop = $("transcript").scrollHeight;
}

// ---- the live stream ------------------------------------------------------------------
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

function connect() {
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
    handle(ev);
  };
  es.onerror = () => {
    if (es.readyState === EventSource.CLOSED && state.es === es) {
      // refused (logged out, session gone, server restarted): start over after a pause
      state.retry = Math.min(state.retry + 1, 5);
      setTimeout(() => { if (state.es === es) openSession(sid); }, 1000 * state.retry);
    }
  };
}

// ---- footer ---------------------------------------------------------------------
function short(n) {
  if (n >= 1e6) return (n / 1e6).toFixed(1) + "M";
  if (n >= 1e3) return (n / 1e3).toFixed(1) + "k";
  return String(n);
}

function showStatus(st) {
  if (st.session && st.session !== state.session) return;
  if (st.model && document.activeElement !== $("model")) $("model").value = st.model;
  if (st.mode) $("mode").value = st.mode;
  const win = st.context_window || 0;
  const used = st.context_tokens || 0;
  $("ctx").textContent = win ? `ctx ${short(used)}/${short(win)} (${Math.round(100 * used / win)}%)` :
    (used ? `ctx ${short(used)}` : "");
  $("cache").textContent = st.cache_hit === null || st.cache_hit === undefined ? "" :
    `cache ${Math.round(100 * st.cache_hit)}%`;
  const sign = st.currency === "CNY" ? "¥" : "$";
  $("cost").textContent = st.cost === null || st.cost === undefined ? "" : `${sign}${Number(st.cost).toFixed(4)}`;
  setBusy(!!st.busy);
}

function setBusy(busy) {
  state.busy = busy;
  $("busy").hidden = !busy;
  $("stop").hidden = !busy;
  $("send").hidden = busy;
}

// ---- sessions -------------------------------------------------------------------
function ago(t) {
  const s = Math.max(0, Date.now() / 1000 - t);
  if (s < 60) return "just now";
  if (s < 3600) return Math.floor(s / 60) + " min ago";
  if (s < 86400) return Math.floor(s / 3600) + " h ago";
  return new Date(t * 1000).toLocaleDateString();
}

async function loadSessions() {
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

async function openSession(id) {
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
  connect();
  $("input").disabled = false;
  loadSessions();
}

async function newSession() {
  const r = await api("POST", "/api/sessions", {});
  if (!r.ok) { toast(r.data.error || "cannot start a session"); return; }
  await openSession(r.data.id);
}

function setTitle(title) {
  $("title").textContent = title || "New session";
  document.title = (title ? title + " · " : "") + "Reasonix";
}

function closeSidebar() { $("app").classList.remove("side-open"); }

// ---- composer -------------------------------------------------------------------
async function send(text) {
  const r = await api("POST", `/api/sessions/${encodeURIComponent(state.session)}/prompt`, { text });
  if (!r.ok) { toast(r.data.error || "not sent"); return false; }
  const d = r.data;
  if (d.session && d.session !== state.session) await openSession(d.session);
  if (d.text) toast(d.text);
  if (d.picker) showPicker(d.picker);
  if (d.confirm && window.confirm(d.confirm.text)) await send(d.confirm.command);
  return true;
}

function showPicker(p) {
  $("picker-title").textContent = p.title || "Choose";
  const list = $("picker-items");
  list.replaceChildren();
  for (const item of p.items) {
    const li = list.appendChild(el("li"));
    const b = li.appendChild(el("button", "", item.label));
    b.type = "button";
    if (item.description) b.title = item.description;
    b.addEventListener("click", () => { $("picker").hidden = true; send(`${p.command} ${item.value}`); });
  }
  $("picker").hidden = false;
}

function currentWord() {
  const input = $("input");
  const before = input.value.slice(0, input.selectionStart);
  const m = before.match(/(^|\s)(@\S*)$/);
  return m ? m[2] : "";
}

async function updateCompletions() {
  const input = $("input");
  const value = input.value;
  let kind = "";
  if (currentWord()) kind = "@";
  else if (value.startsWith("/") && !value.startsWith("//") && input.selectionStart === value.length) kind = "/";
  if (!kind) return hideCompletions();
  const q = value.slice(0, input.selectionStart);
  const r = await api("GET", `/api/sessions/${encodeURIComponent(state.session)}/complete?q=${encodeURIComponent(q)}`);
  if (!r.ok || !r.data.items.length) return hideCompletions();
  const box = $("completions");
  box.replaceChildren();
  state.completion = { items: r.data.items, active: 0, kind };
  r.data.items.forEach((item, i) => {
    const li = box.appendChild(el("li", i === 0 ? "active" : ""));
    li.setAttribute("role", "option");
    li.appendChild(el("span", "c-text", item.text));
    if (item.description) li.appendChild(el("span", "c-desc", item.description));
    li.addEventListener("mousedown", (e) => { e.preventDefault(); accept(i); });
  });
  box.hidden = false;
}

function hideCompletions() {
  $("completions").hidden = true;
  state.completion.items = [];
}

function accept(i) {
  const item = state.completion.items[i];
  if (!item) return;
  const input = $("input");
  if (state.completion.kind === "/") {
    input.value = item.text + (item.text.endsWith("/") ? "" : " ");
  } else {
    const pos = input.selectionStart;
    const before = input.value.slice(0, pos).replace(/@\S*$/, item.text + (item.text.endsWith("/") ? "" : " "));
    input.value = before + input.value.slice(pos);
    input.selectionStart = input.selectionEnd = before.length;
  }
  hideCompletions();
  input.focus();
  if (item.text.endsWith("/")) updateCompletions();
}

function typedInFull() {
  // The composer holds exactly the highlighted command: accepting it would only add a space.
  const c = state.completion;
  const item = c.items[c.active];
  return c.kind === "/" && !!item && $("input").value.trim() === item.text;
}

function moveCompletion(step) {
  const c = state.completion;
  const nodes = $("completions").children;
  if (!nodes.length) return;
  nodes[c.active].classList.remove("active");
  c.active = (c.active + step + nodes.length) % nodes.length;
  nodes[c.active].classList.add("active");
  nodes[c.active].scrollIntoView({ block: "nearest" });
}

function wireComposer() {
  const input = $("input");
  let timer = 0;
  input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(updateCompletions, 120); });
  input.addEventListener("keydown", (e) => {
    const open = !$("completions").hidden && state.completion.items.length;
    if (open && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
      e.preventDefault();
      moveCompletion(e.key === "ArrowDown" ? 1 : -1);
    } else if (open && e.key === "Enter" && !e.shiftKey && typedInFull()) {
      // "/model" typed out and Enter: run it, whether or not its completion showed yet
      e.preventDefault();
      hideCompletions();
      $("composer").requestSubmit();
    } else if (open && (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey))) {
      e.preventDefault();
      accept(state.completion.active);
    } else if (open && e.key === "Escape") {
      hideCompletions();
    } else if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("composer").requestSubmit();
    }
  });
  $("composer").addEventListener("submit", async (e) => {
    e.preventDefault();
    const text = input.value;
    if (!text.trim()) return;
    hideCompletions();
    if (await send(text)) input.value = "";
  });
  $("stop").addEventListener("click", () => api("POST", `/api/sessions/${encodeURIComponent(state.session)}/cancel`, {}));
  $("mode").addEventListener("change", async () => {
    const r = await api("POST", `/api/sessions/${encodeURIComponent(state.session)}/mode`, { mode: $("mode").value });
    if (!r.ok) toast(r.data.error || "mode not changed");
  });
  $("model").addEventListener("change", async () => {
    const r = await api("POST", `/api/sessions/${encodeURIComponent(state.session)}/model`, { model: $("model").value });
    if (!r.ok) toast(r.data.error || "model not changed");
  });
  $("new-session").addEventListener("click", () => { closeSidebar(); newSession(); });
  $("toggle-sidebar").addEventListener("click", () => $("app").classList.toggle("side-open"));
  $("scrim").addEventListener("click", closeSidebar);
  $("picker-close").addEventListener("click", () => { $("picker").hidden = true; });
  // a phone turned sideways (or a narrower window) keeps the newest message in view
  let stuck = true;
  $("transcript").addEventListener("scroll", () => { stuck = nearBottom(); });
  new ResizeObserver(() => { if (stuck) $("transcript").scrollTop = $("transcript").scrollHeight; })
    .observe($("transcript"));
}

// ---- start-up and login -------------------------------------------------------------
function showLogin(hint) {
  $("app").hidden = true;
  $("login").hidden = false;
  $("login-hint").textContent = hint;
  $("login-secret").placeholder = state.auth === "password" ? "password" : "token";
  $("login-secret").focus();
}

async function login(secret) {
  const r = await api("POST", "/api/login", { secret });
  if (!r.ok) { $("login-error").textContent = r.data.error || "login failed"; return false; }
  $("login-error").textContent = "";
  return true;
}

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
