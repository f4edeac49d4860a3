// Markdown, kept simple: every piece of text becomes a text node, never HTML.
import { el } from "./dom.js";

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

export function markdown(target, text) {
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
