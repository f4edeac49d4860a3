// The footer's figures (model, mode, context, cache, cost) and the busy state.
import { $, state } from "./dom.js";

function short(n) {
  if (n >= 1e6) return (n / 1e6).toFixed(1) + "M";
  if (n >= 1e3) return (n / 1e3).toFixed(1) + "k";
  return String(n);
}

export function showStatus(st) {
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

export function setBusy(busy) {
  state.busy = busy;
  $("busy").hidden = !busy;
  $("stop").hidden = !busy;
  $("send").hidden = busy;
}
