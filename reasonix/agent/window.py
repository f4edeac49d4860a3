"""The session's context window: what is configured, what the server serves, and the smaller.

One :class:`ContextWindow` per session is shared by the context manager
(compaction trigger, hard limit, summary budget) and the output budget
(shared-window clipping), so whatever is learned applies everywhere at once:

- at start-up from the server itself (:mod:`reasonix.provider.probe`, run
  on a background thread by :meth:`ContextWindow.start_probe`; the first
  request waits for it at most :data:`SETTLE_WAIT` seconds);
- from a context-overflow error that names the window
  (:meth:`ContextWindow.learn_from_error`), or, when it names none, from the
  size of the refused request (:meth:`ContextWindow.bound_from_refusal`).

The effective window (:attr:`ContextWindow.limit`) is the smallest known of
the configured and the served windows. A configured ``context_window = 0``
still disables automatic compaction (:attr:`ContextWindow.tokens` stays 0)
while a served window keeps bounding what may be sent. Each change queues
one notice ("the server's window is 8192 tokens, not the configured 32768")
that the agent shows before its next request (:meth:`take_notices`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from reasonix.errors import ProviderAPIError
from reasonix.slices import short_slices

if TYPE_CHECKING:  # an overflow is read, and a served window learned, once one comes
    from typing import Any

    from reasonix.provider.overflow import OverflowFacts
    from reasonix.provider.probe import ServedWindow

__all__ = ["SETTLE_WAIT", "ContextWindow"]

SETTLE_WAIT = 1.0  # seconds the first request may wait for a probe still running
PROBE_TIMEOUT = 1.5  # provider.probe.PROBE_TIMEOUT (not imported: only local servers need it)

Probe = Callable[[], "ServedWindow | None"]


class ContextWindow:
    """Configured and served context window of one session (see module docstring)."""

    def __init__(self, configured: int) -> None:
        self.configured = max(0, int(configured))
        self.served: int | None = None  # tokens, once a server or an error said so
        self.trained: int | None = None  # the model's own maximum, where a server named it
        self.source = ""  # where ``served`` comes from
        self.server = ""  # "llama.cpp" | "ollama" | "lmstudio" | "openai-compatible" | ""
        self.hint = ""  # what to change on the server
        self.largest_accepted = 0  # biggest prompt the server has answered (its report)
        self._lock = threading.Lock()
        self._notices: list[str] = []
        self._thread: threading.Thread | None = None
        self._deadline = 0.0
        self._reprobe: Probe | None = None
        self._pending_reprobe: Probe | None = None
        # called with the new limit when the effective window shrinks (boot switches a
        # session to the small prompt, issue 37); on the thread that learned it
        self.on_shrink: list[Callable[[int], None]] = []

    # -- what the rest of the session reads ------------------------------------
    @property
    def limit(self) -> int:
        """The hard limit: the smaller known of configured and served (0 = unknown)."""
        known = [n for n in (self.configured, self.served or 0) if n > 0]
        return min(known) if known else 0

    @property
    def tokens(self) -> int:
        """The window compaction works with; 0 when ``context_window = 0`` turned it off."""
        return self.limit if self.configured > 0 else 0

    def take_notices(self) -> list[str]:
        """Notices queued since the last call (each change is told once)."""
        with self._lock:
            out, self._notices = self._notices, []
        return out

    def report(self) -> dict[str, Any]:
        """The JSON form for ``run --json``, ``/status`` and ``doctor``."""
        return {
            "configured": self.configured,
            "served": self.served,
            "effective": self.limit,
            "source": self.source or None,
        }

    # -- learning ---------------------------------------------------------------
    def learn_served(
        self, tokens: int, source: str, *, server: str = "", trained: int = 0, hint: str = ""
    ) -> bool:
        """Take a window the server named; True when the effective window shrank."""
        from reasonix.provider.overflow import MIN_WINDOW

        with self._lock:
            if trained > 0:
                self.trained = trained
            self.server = server or self.server
            self.hint = hint or self.hint
            if tokens < MIN_WINDOW or (self.served is not None and tokens >= self.served):
                return False
            before = self.limit
            self.served, self.source = tokens, source
            if self.limit >= before > 0:
                return False  # the configured window is the smaller one anyway
            self._notices.append(self._text(tokens))
            limit = self.limit
        for listener in list(self.on_shrink):  # outside the lock: a listener may tell()
            listener(limit)
        return True

    def tell(self, text: str) -> None:
        """Queue a notice shown before the next request (as a learned window's is)."""
        with self._lock:
            self._notices.append(text)

    def _text(self, tokens: int) -> str:
        what = f"{tokens} tokens"
        if self.configured:
            what += f", not the configured {self.configured}"
        text = f"the server's window is {what} ({self.source})"
        return f"{text}; {self.hint}" if self.hint else text

    def learn_from_error(self, err: ProviderAPIError) -> OverflowFacts:
        """Read an overflow error; learn the window it names. Returns what it named."""
        from reasonix.provider.overflow import overflow_facts

        facts = overflow_facts(f"{err.vendor_message} {err.body}")
        if facts.window:
            self.learn_served(facts.window, "its context-overflow error")
        return facts

    def bound_from_refusal(self, refused_tokens: int) -> bool:
        """An overflow that names no window: the window is below the refused size.

        Learned only when that says more than the configured window and the
        prompts the server has already answered; True when it did.
        """
        from reasonix.provider.overflow import MIN_WINDOW

        bound = int(refused_tokens)
        if bound <= max(self.largest_accepted, MIN_WINDOW):
            return False
        return self.learn_served(bound, "at most: it refused a request of about that size")

    def observed(self, prompt_tokens: int) -> None:
        """The server answered a prompt of this size; an Ollama model is loaded now."""
        self.largest_accepted = max(self.largest_accepted, int(prompt_tokens))
        reprobe, self._reprobe = self._reprobe, None
        if reprobe is not None:
            self._run_in_background(reprobe, PROBE_TIMEOUT)

    # -- the start-up probe -------------------------------------------------------
    def start_probe(
        self, probe: Probe, *, reprobe: Probe | None = None, timeout: float = PROBE_TIMEOUT
    ) -> None:
        """Run ``probe`` on a background thread (it must not raise and must end in ``timeout``).

        ``reprobe`` asks again once after the first answer, for a server that
        knows its window only with the model loaded (Ollama).
        """
        self._pending_reprobe = reprobe
        self._run_in_background(probe, timeout, first=True)

    def _run_in_background(self, probe: Probe, timeout: float, *, first: bool = False) -> None:
        def work() -> None:
            with short_slices():  # answers arrive while the main thread builds the run
                found = probe()
            if found is None:
                return
            if found.tokens:
                self.learn_served(
                    found.tokens,
                    found.source,
                    server=found.server,
                    trained=found.trained,
                    hint=found.hint,
                )
            elif found.trained:  # the model cannot hold more than it was trained for
                self.learn_served(
                    found.trained,
                    f"{found.source}: the model's trained maximum",
                    server=found.server,
                    trained=found.trained,
                    hint=found.hint,
                )
            if first and not found.tokens and self._pending_reprobe is not None:
                self._reprobe = self._pending_reprobe  # the running window is known later

        thread = threading.Thread(target=work, name="reasonix-window-probe", daemon=True)
        if first:
            self._thread, self._deadline = thread, time.monotonic() + timeout
        thread.start()

    def settle(self, max_wait: float = SETTLE_WAIT) -> None:
        """Wait for the start-up probe, at most ``max_wait`` seconds (and never past its end)."""
        thread = self._thread
        if thread is None or not thread.is_alive():
            return
        thread.join(max(0.0, min(max_wait, self._deadline - time.monotonic())))
