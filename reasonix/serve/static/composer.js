// The message box: sending, / and @ completion, the picker a command may open, and the
// dock's controls (stop, mode, model).
import { $, el, state, toast } from "./dom.js";
import { openSession } from "./sessions.js";
import { api } from "./transport.js";

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

export function wireComposer() {
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
  $("picker-close").addEventListener("click", () => { $("picker").hidden = true; });
}
