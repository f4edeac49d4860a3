// The conversation as it is drawn: messages, reasoning, tool and search cards, notices,
// and a session's history redrawn in one go. Approval cards live in approvals.js.
import { $, append, el, nearBottom, state } from "./dom.js";
import { markdown } from "./markdown.js";

export function addUser(text) {
  endAssistant();
  append(el("div", "msg user", text));
}

export function endAssistant() {
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

export function appendText(text) {
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

export function appendReasoning(text) {
  if (!state.think) { state.cur = null; addReasoning("", true); }
  state.think.text += text;
  state.think.body.textContent = state.think.text;
}

export function diffBlock(lines) {
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

export function toolCard(ev) {
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

export function toolResult(card, content, isError, blocked) {
  card.stateEl.className = "t-state " + (isError ? "err" : "ok");
  card.stateEl.textContent = blocked ? "blocked" : (isError ? "error" : "done");
  if (content) { card.result.textContent = content; card.result.hidden = false; }
}


export function searchCard(ev) {
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

export function escapeCard(ev) {
  const text = `sandbox escape ${ev.granted ? "granted" : "refused"} (${ev.detail}): ${ev.command}`;
  notice(text, ev.granted ? "" : "error");
}

export function phaseLine(ev) {
  if (ev.phase === "route" && (ev.route === "executor" || !ev.route)) return; // the usual path
  const parts = [ev.phase];
  if (ev.route) parts.push(ev.route.replaceAll("_", " "));
  if (ev.plan_id) parts.push("plan " + ev.plan_id);
  if (ev.status) parts.push(ev.status);
  notice(parts.join(" · "));
}

export function notice(text, cls) {
  endAssistant();
  append(el("div", "notice" + (cls ? " " + cls : ""), text));
}

export function commandOutput(ev) {
  endAssistant();
  const box = el("div", "msg command");
  box.appendChild(el("pre", ev.error ? "error" : "", ev.text));
  append(box);
}

export function renderHistory(items) {
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

// A phone turned sideways (or a narrower window) keeps the newest message in view.
export function wireTranscript() {
  let stuck = true;
  $("transcript").addEventListener("scroll", () => { stuck = nearBottom(); });
  new ResizeObserver(() => { if (stuck) $("transcript").scrollTop = $("transcript").scrollHeight; })
    .observe($("transcript"));
}
