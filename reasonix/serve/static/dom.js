// What every module shares: the page's state, element lookup and the few DOM helpers.
// Everything the model or a tool wrote is inserted with textContent / text nodes.

export const $ = (id) => document.getElementById(id);

// One object, not module-level variables: a module can mutate a property of an imported
// object, never an imported binding.
export const state = {
  csrf: "", auth: "none", session: "", seq: 0, es: null, busy: false,
  cur: null,        // the assistant bubble receiving text: {el, text}
  think: null,      // the reasoning block receiving text: {el, body, text}
  cards: new Map(), // tool call id -> card parts
  approvals: new Map(),
  completion: { items: [], active: 0, kind: "" },
  modes: [], paint: 0, retry: 0,
};

export function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

export function toast(text, ms) {
  const t = $("toast");
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, ms || 5000);
}

export function nearBottom() {
  const t = $("transcript");
  return t.scrollHeight - t.scrollTop - t.clientHeight < 80;
}

export function append(node) {
  const stick = nearBottom();
  $("transcript").appendChild(node);
  if (stick) $("transcript").scrollTop = $("transcript").scrollHeight;
  return node;
}
