// A tool call waiting for the user's answer: the card with its choices, and the answer
// once the session has taken it (from this tab or another).
import { append, el, state, toast } from "./dom.js";
import { diffBlock, endAssistant } from "./transcript.js";
import { api } from "./transport.js";

const CHOICE_LABEL = {
  once: "Allow once", session: "Allow for this session", always: "Always allow", deny: "Deny",
};

export function approvalCard(ev) {
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

export function approvalDone(ev) {
  const card = state.approvals.get(ev.id);
  if (!card) return;
  card.buttons.forEach((b) => { b.disabled = true; });
  card.answered.hidden = false;
  card.answered.textContent = "answer: " + (CHOICE_LABEL[ev.choice] || ev.choice);
}
