"""The compact card a terminal frontend prints for a provider-side web search.

::

    ⌕ web search "python 3.13 release date" · 2 results
      1. Python 3.13 release notes — https://docs.python.org/3.13/whatsnew/3.13.html
      2. https://peps.python.org/pep-0719/

Query, titles and URLs are remote text: each goes through :func:`printable`.
With ``links`` an http(s) URL becomes an OSC 8 hyperlink (terminals without
support show the plain text); the URL inside the escape is the sanitised one.
"""

from __future__ import annotations

from reasonix.agent.events import WebSearch
from reasonix.cli.safe_text import printable

__all__ = ["MAX_RESULTS", "card_lines"]

MAX_RESULTS = 5  # a card, not a results page: the model's answer cites what matters


def _flat(text: str, width: int) -> str:
    flat = printable(" ".join(text.split()), keep_newlines=False)
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _link(url: str, links: bool) -> str:
    shown = _flat(url, 200)
    if not links or not url.startswith(("http://", "https://")) or shown != url:
        return shown  # anything unusual in a URL is shown, never put into an escape
    return f"\033]8;;{url}\033\\{shown}\033]8;;\033\\"


def card_lines(event: WebSearch, *, links: bool = False) -> list[str]:
    """The card as lines (no trailing newlines)."""
    query = f'"{_flat(event.query, 120)}"' if event.query else "(no query reported)"
    if event.error:
        return [f"⌕ web search {query} · failed ({_flat(event.error, 60)})"]
    count = len(event.results)
    out = [f"⌕ web search {query} · {count} result{'s' if count != 1 else ''}"]
    for n, hit in enumerate(event.results[:MAX_RESULTS], 1):
        title = _flat(hit.title, 80)
        url = _link(hit.url, links)
        out.append(f"  {n}. {title} — {url}" if title else f"  {n}. {url}")
    if count > MAX_RESULTS:
        out.append(f"  … {count - MAX_RESULTS} more")
    return out
