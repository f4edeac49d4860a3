"""The per-session output budget: ``Request.max_tokens`` and what 400s teach (D10).

Wraps the pure rules of :mod:`reasonix.provider.budget` with the two facts a
session learns from the server: an output limit named by an HTTP 400 body
(remembered per model for the session, then used for every request) and
that the window is shared between prompt and output (an overflow message
that counts the completion). The window itself may be a shared
:class:`~reasonix.agent.window.ContextWindow`, so a window learned from the
server also bounds the output.
"""

from __future__ import annotations

from collections.abc import Callable

from reasonix.agent.window import ContextWindow
from reasonix.errors import ProviderAPIError
from reasonix.provider.budget import (
    DEEPSEEK_HOST,
    learned_output_limit,
    overflow_counts_output,
    resolve_max_tokens,
)

__all__ = ["OutputBudget"]


class OutputBudget:
    """``max_output_tokens`` setting + provider facts -> the wire value of each request."""

    def __init__(
        self, setting: int, *, kind: str, host: str, context_window: int | ContextWindow
    ) -> None:
        self.setting, self.kind, self.host = setting, kind, host
        if not isinstance(context_window, ContextWindow):
            context_window = ContextWindow(context_window)
        self.window = context_window
        self.learned: int | None = None
        self.shared_window = False

    @property
    def context_window(self) -> int:
        """The effective window (configured, or smaller when the server serves less)."""
        return self.window.limit

    def max_tokens(self, prompt_tokens: Callable[[], int]) -> int | None:
        """The value to send (None = omit the field); the prompt is estimated only if needed."""
        # Only a shared window needs the prompt size, and estimating it costs a pass
        # over the whole request, so it is skipped everywhere else.
        shared = self.host == DEEPSEEK_HOST or self.shared_window
        return resolve_max_tokens(
            self.setting,
            kind=self.kind,
            host=self.host,
            context_window=self.context_window,
            prompt_tokens=prompt_tokens() if shared else 0,
            learned_limit=self.learned,
            shared_window_trusted=self.shared_window,
        )

    def learn(self, err: ProviderAPIError) -> bool:
        """Take what a 400 says; True when the request should be retried with a new value."""
        if err.status != 400:
            return False
        body = f"{err.vendor_message} {err.body}"
        if overflow_counts_output(body):
            self.shared_window = True
        limit = learned_output_limit(body)
        if limit is None or limit == self.learned:
            return False  # nothing new: retrying would fail the same way
        self.learned = limit
        return True
