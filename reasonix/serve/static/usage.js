// The Usage view: `reasonix usage` as a page. GET /api/usage answers exactly what
// `reasonix usage --json` prints; this module only lays it out: the totals, one row per
// day (or model, session, project) with a bar, the sub-agent share, the top sessions by
// cost and the price basis of every cost. An unpriced model is shown as "unpriced",
// never as 0. Everything is built with el()/textContent; the bars are sized through
// element.style (CSSOM), which the page's CSP allows.
import { $, el } from "./dom.js";
import { showLogin } from "./login.js";
import { closeSidebar, openSession } from "./sessions.js";
import { api } from "./transport.js";

const view = { open: false, title: "" };

function k(n) {
  if (n >= 1e6) return (n / 1e6).toFixed(1) + "M";
  if (n >= 1e3) return (n / 1e3).toFixed(1) + "k";
  return String(n);
}

function money(cost) {
  return Object.keys(cost).sort()
    .map((c) => (c === "CNY" ? "¥" : "$") + cost[c].toFixed(4)).join(" + ");
}

// The row's cost as the CLI writes it: unpriced requests are named, never counted as 0.
export function costText(row) {
  const m = money(row.cost);
  if (row.unpriced.requests) {
    const u = `unpriced: ${row.unpriced.requests} req`;
    return m ? `${m} + ${u}` : u;
  }
  return m || "-";
}

function hit(row) {
  return row.cache_hit_ratio === null ? "n/a" : Math.round(row.cache_hit_ratio * 100) + "%";
}

function figure(label, value, cls) {
  const box = el("div", "u-fig" + (cls ? " " + cls : ""));
  box.appendChild(el("span", "u-label", label));
  box.appendChild(el("span", "u-value", value));
  return box;
}

function totals(t, sessions) {
  const box = el("div", "u-totals");
  box.id = "usage-totals";
  box.append(
    figure("cost", costText(t), "u-cost"),
    figure("requests", t.requests),
    figure("sessions", sessions),
    figure("prompt", k(t.prompt_tokens)),
    figure("cached", k(t.cache_read_input_tokens)),
    figure("cache write", k(t.cache_creation_input_tokens)),
    figure("output", k(t.output_tokens)),
    figure("reasoning", k(t.reasoning_tokens)),
    figure("cache hit", hit(t)),
  );
  return box;
}

const COLUMNS = ["", "req", "prompt", "cached", "c.write", "output", "reason", "hit", "cost", "tokens"];

function cells(tr, row) {
  const values = [row.requests, k(row.prompt_tokens), k(row.cache_read_input_tokens),
    k(row.cache_creation_input_tokens), k(row.output_tokens), k(row.reasoning_tokens), hit(row)];
  for (const v of values) tr.appendChild(el("td", "num", v));
  tr.appendChild(el("td", row.unpriced.requests ? "u-costcell unpriced" : "u-costcell",
    costText(row)));
}

function table(report) {
  const tbl = el("table", "u-table");
  tbl.id = "usage-rows";
  const head = tbl.appendChild(el("thead")).appendChild(el("tr"));
  COLUMNS.forEach((c, i) => head.appendChild(el("th", i ? "num" : "", i ? c : report.by)));
  const body = tbl.appendChild(el("tbody"));
  const size = (r) => r.prompt_tokens + r.output_tokens;
  const top = Math.max(1, ...report.rows.map(size));
  for (const row of report.rows) {
    const tr = body.appendChild(el("tr"));
    tr.dataset.key = row.key;
    tr.appendChild(el("td", "u-key", row.key)).title = row.key;
    cells(tr, row);
    const track = tr.appendChild(el("td", "u-bar")).appendChild(el("div", "u-track"));
    const bar = track.appendChild(el("div", "u-fill"));
    bar.style.width = (size(row) ? Math.max(1, (size(row) / top) * 100) : 0).toFixed(1) + "%";
    bar.title = k(size(row)) + " tokens (prompt + output)";
  }
  const foot = tbl.appendChild(el("tfoot")).appendChild(el("tr"));
  foot.appendChild(el("td", "u-key", "total"));
  cells(foot, report.total);
  foot.appendChild(el("td"));
  return tbl;
}

function subagents(t) {
  const share = t.subagent.tokens / Math.max(1, t.prompt_tokens + t.output_tokens);
  const p = el("p", "u-sub", `sub-agents: ${t.subagent.requests} of ${t.requests} requests, ` +
    `${Math.round(share * 100)}% of tokens, cost ${money(t.subagent.cost) || "-"}`);
  p.id = "usage-subagents";
  return p;
}

function topSessions(rows, openable) {
  const box = el("div", "u-top");
  box.appendChild(el("h3", "", "Top sessions by cost"));
  const list = box.appendChild(el("ol"));
  list.id = "usage-top";
  for (const r of rows) {
    const li = list.appendChild(el("li"));
    if (openable) {
      const b = li.appendChild(el("button", "u-open", r.key));
      b.type = "button";
      b.title = "open this session";
      b.addEventListener("click", () => { hideUsage(); openSession(r.key); });
    } else {
      li.appendChild(el("code", "", r.key));
    }
    li.appendChild(el("span", "u-meta", ` ${r.requests} req · ${costText(r)}`));
  }
  return box;
}

function basis(items) {
  const box = el("div", "u-basis");
  box.appendChild(el("h3", "", "Price basis (per million tokens; cached prompt tokens at the cache price)"));
  const list = box.appendChild(el("ul"));
  list.id = "usage-basis";
  for (const b of items) {
    let text;
    if (b.price === null) {
      text = `${b.model}: unpriced (no price in config or presets; not in cost)`;
    } else {
      const shown = Object.entries(b.price).map(([n, v]) => `${n} ${v}`).join(", ");
      const discount = b.cache_discount ? "cache discount applied" : "no cache discount";
      text = `${b.model}: ${b.source}: ${shown}; ${discount}`;
    }
    list.appendChild(el("li", b.price === null ? "unpriced" : "", text));
  }
  return box;
}

export function renderUsage(report, openable) {
  const body = $("usage-body");
  body.replaceChildren();
  if (!report.total.requests) {
    body.appendChild(el("p", "u-empty",
      "No usage recorded in this scope (older sessions predate usage records)."));
    return;
  }
  const scroll = el("div", "u-scroll"); // a wide table scrolls alone on a phone
  scroll.appendChild(table(report));
  body.append(totals(report.total, report.sessions), scroll, subagents(report.total));
  if (report.top_sessions.length) body.appendChild(topSessions(report.top_sessions, openable));
  body.appendChild(basis(report.price_basis));
}

function query() {
  const q = new URLSearchParams();
  q.set("by", $("usage-by").value);
  if ($("usage-since").value) q.set("since", $("usage-since").value);
  if ($("usage-until").value) q.set("until", $("usage-until").value);
  if ($("usage-all").checked) q.set("all_projects", "1");
  return q.toString();
}

export async function loadUsage() {
  $("usage-error").textContent = "";
  const all = $("usage-all").checked;
  const r = await api("GET", "/api/usage?" + query());
  if (!r.ok) {
    if (r.status === 401) return showLogin("Your login expired; log in again.");
    $("usage-error").textContent = r.data.error || "the report could not be built";
    $("usage-body").replaceChildren(); // no figures of an earlier query under the error
    return;
  }
  renderUsage(r.data, !all);
}

export function showUsage() {
  closeSidebar();
  if (!view.open) view.title = $("title").textContent;
  view.open = true;
  $("transcript").hidden = true;
  document.querySelector(".dock").hidden = true;
  $("usage").hidden = false;
  $("title").textContent = "Usage";
  return loadUsage();
}

export function hideUsage() {
  if (!view.open) return;
  view.open = false;
  $("usage").hidden = true;
  $("transcript").hidden = false;
  document.querySelector(".dock").hidden = false;
  if ($("title").textContent === "Usage") $("title").textContent = view.title;
}

export function wireUsage() {
  $("show-usage").addEventListener("click", showUsage);
  $("usage-button").addEventListener("click", showUsage);
  $("usage-close").addEventListener("click", hideUsage);
  $("usage-form").addEventListener("submit", (e) => { e.preventDefault(); loadUsage(); });
  // Opening a session or starting one from the list leaves the Usage view.
  $("new-session").addEventListener("click", hideUsage);
  $("sessions").addEventListener("click", hideUsage);
}
