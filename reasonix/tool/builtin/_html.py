"""HTML to readable text for web_fetch, on the stdlib ``html.parser``.

Lossy on purpose: the model wants the words, headings, lists, links and code
blocks, not markup. Scripts, styles and other non-content elements are dropped.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

__all__ = ["html_to_text", "looks_like_html"]

_SKIP = {"script", "style", "noscript", "template", "svg", "canvas", "iframe", "head"}
_BLOCK = {
    "address", "article", "aside", "blockquote", "dd", "details", "dialog", "div", "dl",
    "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "hr", "main",
    "nav", "ol", "p", "section", "summary", "table", "tbody", "thead", "tfoot", "tr", "ul",
}  # fmt: skip
_VOID_BREAK = {"br", "hr"}


class _TextWriter(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.out: list[str] = []
        self.skip = 0
        self.pre = 0
        self.in_title = False
        self.title = ""
        self.links: list[str] = []
        self.lists: list[list[int]] = []  # one [counter] per open list; -1 = bulleted

    # -- output helpers -------------------------------------------------
    def _tail(self) -> str:
        return "".join(self.out[-3:])

    def newline(self) -> None:
        if self.out and not self._tail().endswith("\n"):
            self.out.append("\n")

    def blank_line(self) -> None:
        if self.out and not self._tail().endswith("\n\n"):
            self.newline()
            self.out.append("\n")

    def write(self, text: str) -> None:
        self.out.append(text)

    # -- parser callbacks -------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and not self.title:
            self.in_title = True
            return
        if tag in _SKIP:
            self.skip += 1
            return
        if self.skip:
            return
        attr = dict(attrs)
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.blank_line()
            self.write("#" * int(tag[1]) + " ")
        elif tag in ("ul", "ol"):
            self.newline()
            self.lists.append([0 if tag == "ol" else -1])
        elif tag == "li":
            self.newline()
            depth = max(0, len(self.lists) - 1)
            counter = self.lists[-1] if self.lists else [-1]
            if counter[0] >= 0:
                counter[0] += 1
                self.write("  " * depth + f"{counter[0]}. ")
            else:
                self.write("  " * depth + "- ")
        elif tag == "pre":
            self.blank_line()
            self.write("```\n")
            self.pre += 1
        elif tag == "a":
            self.links.append(self._href(attr.get("href")))
        elif tag == "img" and attr.get("alt"):
            self.write(f"[image: {attr['alt']}]")
        elif tag in ("td", "th"):
            if not self._tail().endswith(("\n", "| ")):
                self.write(" | ")
        elif tag == "blockquote":
            self.blank_line()
            self.write("> ")
        elif tag in _BLOCK or tag in _VOID_BREAK:
            self.newline()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID_BREAK and not self.skip:
            self.newline()
        elif tag == "img" and not self.skip:
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.in_title:
            self.in_title = False
            return
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
            return
        if self.skip:
            return
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6", "blockquote"):
            self.blank_line()
        elif tag in ("ul", "ol"):
            if self.lists:
                self.lists.pop()
            self.newline()
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            self.newline()
            self.write("```")
            self.blank_line()
        elif tag == "a" and self.links:
            href = self.links.pop()
            if href:
                self.write(f" ({href})")
        elif tag == "p":
            self.blank_line()
        elif tag in _BLOCK or tag == "li":
            self.newline()

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
            return
        if self.skip:
            return
        if self.pre:
            self.write(data)
            return
        text = re.sub(r"\s+", " ", data.replace("\xa0", " "))
        if not text.strip():
            if self.out and not self._tail().endswith((" ", "\n")):
                self.write(" ")
            return
        if self._tail().endswith("\n"):
            text = text.lstrip()
        self.write(text)

    def _href(self, href: str | None) -> str:
        if not href or href.startswith(("#", "javascript:", "mailto:", "data:")):
            return ""
        return urljoin(self.base_url, href.strip())


def html_to_text(html: str, base_url: str = "") -> str:
    """Readable text of an HTML document: headings, lists, links, code blocks kept."""
    parser = _TextWriter(base_url)
    parser.feed(html)
    parser.close()
    body = "".join(parser.out)
    body = re.sub(r"[ \t]+\n", "\n", body)
    body = re.sub(r"\n{3,}", "\n\n", body).strip()
    title = re.sub(r"\s+", " ", parser.title).strip()
    return f"# {title}\n\n{body}" if title else body


def looks_like_html(text: str) -> bool:
    """True for documents that are HTML whatever their Content-Type says."""
    head = text[:1024].lower()
    return "<!doctype html" in head or "<html" in head
