"""Typed errors: the only exception types that cross layer boundaries.

ReasonixError
├── ConfigError            bad or missing configuration (file, line, key)
├── UsageError             bad command-line use (exit code 2)
├── Cancelled              the cancel token fired
├── ProviderError          a model endpoint failed
│   ├── ProviderAPIError   an HTTP status from the vendor (status, message, request id)
│   ├── ProviderConnectionError   could not connect / connection dropped
│   ├── ProviderTimeout    connect or idle-read timeout
│   ├── ProviderStreamError   malformed or cut stream after output began
│   └── MissingAPIKey      the key variable is set nowhere
├── ToolError              a tool failed (becomes a tool result, never crashes the loop)
│   └── PathDenied         a path outside the write roots or inside forbid_read
├── PermissionDenied       the permission gate said no
├── SandboxUnavailable     sandbox enforcement asked for but no backend
├── PluginError            an MCP server or plugin failed
├── SessionError           transcript store problem (lease held, not found, ambiguous)
├── CompactionRequired     the context is over the hard limit even after pruning
├── HookBlocked            a user hook stopped the action (exit 2 or a "block" decision)
├── InputTooLarge          one message (or the fixed prompt) can never fit the window
└── PlannerError           the dedicated planner gave no plan (plan-only / approval fail closed)
"""

from __future__ import annotations

__all__ = [
    "Cancelled",
    "CompactionRequired",
    "ConfigError",
    "HookBlocked",
    "InputTooLarge",
    "MissingAPIKey",
    "PathDenied",
    "PermissionDenied",
    "PlannerError",
    "PluginError",
    "ProviderAPIError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderStreamError",
    "ProviderTimeout",
    "ReasonixError",
    "SandboxUnavailable",
    "SessionError",
    "ToolError",
    "UsageError",
    "classify",
]


class ReasonixError(Exception):
    """Base of every error Reasonix raises on purpose."""


class ConfigError(ReasonixError):
    """Invalid configuration. Carries where it was found so the CLI can say so."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        key: str | None = None,
    ) -> None:
        self.file = file
        self.line = line
        self.key = key
        self.detail = message
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.file:
            where.append(self.file if self.line is None else f"{self.file}:{self.line}")
        if self.key:
            where.append(f"key {self.key!r}")
        prefix = ", ".join(where)
        return f"{prefix}: {self.detail}" if prefix else self.detail


class UsageError(ReasonixError):
    """The command line was used wrongly (exit code 2)."""


class Cancelled(ReasonixError):
    """The operation was cancelled through its cancel token."""


class ProviderError(ReasonixError):
    """A model endpoint failed."""


class ProviderAPIError(ProviderError):
    """The vendor answered with an HTTP error status."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        request_id: str | None = None,
        retry_after: float | None = None,
        body: str = "",
    ) -> None:
        self.status = status
        self.vendor_message = message
        self.request_id = request_id
        self.retry_after = retry_after
        self.body = body
        text = f"HTTP {status}: {message}"
        if request_id:
            text += f" (request id {request_id})"
        hint = _WHAT_TO_DO.get(self.meaning, "")
        if hint:
            text += f" — {hint}"
        super().__init__(text)

    @property
    def meaning(self) -> str:
        """What the vendor says went wrong, read from its error body before its status.

        ``quota`` (out of credit, a spend or billing limit: a 429 ``insufficient_quota``
        too), ``auth`` (the key was refused), ``model`` (no such model for this key),
        ``policy`` (a content policy refused the request), ``context`` (the prompt is
        longer than the window) — all permanent — or ``rate_limit``, ``overloaded``, or
        "" when the body says nothing we know.
        """
        cached = self.__dict__.get("_meaning")
        if cached is None:
            cached = self.__dict__["_meaning"] = _meaning(self)
        return str(cached)

    @property
    def is_permanent(self) -> bool:
        """True when sending the same request again cannot succeed (see :attr:`meaning`)."""
        return self.meaning in _PERMANENT

    @property
    def is_context_overflow(self) -> bool:
        """True when the vendor says the prompt is longer than the context window.

        Recognises the vendors' own wording and that of the servers people run
        locally or behind gateways (llama.cpp, vLLM, SGLang, LM Studio, Ollama,
        LiteLLM, OpenRouter); rate limits that mention tokens are not overflows.
        """
        if self.status not in _OVERFLOW_STATUSES:
            return False
        low = (self.vendor_message + " " + self.body).lower()
        if any(m in low for m in _NOT_OVERFLOW):
            return False
        return any(m in low for m in _OVERFLOW_MARKERS)


# Statuses an overflow arrives with: 400 almost everywhere, 413/422 from some
# gateways, 404 from one local backend, 200 when a server answers a stream
# request with a JSON error body (or an error event) instead.
_OVERFLOW_STATUSES = frozenset({200, 400, 404, 413, 422})
_OVERFLOW_MARKERS = (
    "context length",  # OpenAI/vLLM/SGLang/LM Studio/Ollama ("... the context length ...")
    "context_length",  # the context_length_exceeded code
    "maximum context",
    "context window",
    "context_window_exceeded",
    "contextwindowexceeded",  # LiteLLM's ContextWindowExceededError passed through
    "context size",  # llama.cpp "exceeds the available context size", MLX "Context size has…"
    "exceed_context_size",  # llama.cpp's error type
    "context limit",  # Anthropic "exceed context limit", "Context limit is N tokens"
    "n_ctx",  # llama.cpp-based servers name their window so
    "n_keep",  # LM Studio / llama.cpp "n_keep (N) >= n_ctx (W)"
    "too many tokens",
    "prompt is too long",
    "input is too long",
    "exceeds the context",
    "maximum prompt length",
    "model token limit",
    "exceeds the maximum number of tokens",
    "reduce the length of the messages",
)
_NOT_OVERFLOW = ("per minute", "rate limit", "rate_limit")


_PERMANENT = frozenset({"quota", "auth", "model", "policy", "context"})
# One line each: what the user can do about a permanent refusal.
_WHAT_TO_DO = {
    "quota": "the account is out of credit or over a spend limit: add credit or raise the "
    "limit in the vendor's billing settings (not retried)",
    "auth": "the API key was refused: check the key in <home>/.env or the environment "
    "(not retried)",
    "model": "the model is unknown to this provider or not open to this key: check the "
    "model name (not retried)",
    "policy": "the provider's content policy refused the request: change the request (not retried)",
}
# The vendors' own codes (OpenAI error.type/code, Anthropic error.type and
# error.details.error_code, DeepSeek, OpenRouter), lower-cased.
_QUOTA_CODES = frozenset(
    {
        "insufficient_quota",
        "billing_hard_limit_reached",
        "billing_not_active",
        "credit_balance_exhausted",
        "organization_spend_limit_exceeded",
        "project_spend_limit_exceeded",
        "organization_usage_limit_exceeded",
        "enforced_spend_limit_reached",
        "billing_error",
        "insufficient_balance",
        "payment_required",
    }
)
_AUTH_CODES = frozenset(
    {"invalid_api_key", "authentication_error", "invalid_authentication", "permission_error"}
)
_POLICY_CODES = frozenset({"content_policy_violation", "content_filter", "moderation_blocked"})
_QUOTA_WORDS = ("credit balance is too low", "insufficient balance", "insufficient credits")
_MODEL_WORDS = ("does not exist", "not exist", "not found", "no such model", "unknown model")


def _vendor_codes(body: str) -> tuple[set[str], dict[str, object]]:
    """The lower-cased type/code strings of a vendor error body, and its error object."""
    import json  # only when an error body is read

    try:
        obj = json.loads(body) if body.lstrip()[:1] in ("{", "[") else None
    except ValueError:
        obj = None
    if isinstance(obj, list) and obj:
        obj = obj[0]
    if not isinstance(obj, dict):
        return set(), {}
    err = obj.get("error")
    err = err if isinstance(err, dict) else obj
    found = [err.get("type"), err.get("code"), obj.get("type")]
    details = err.get("details")
    if isinstance(details, dict):  # Anthropic: error.details.error_code
        found.append(details.get("error_code"))
    return {f.lower() for f in found if isinstance(f, str) and f}, err


def _meaning(err: ProviderAPIError) -> str:
    codes, obj = _vendor_codes(err.body)
    # the words of a message count only on a refusal (4xx), never on a server failure
    low = f"{err.vendor_message} {obj.get('message', '')}".lower() if err.status < 500 else ""
    meta = obj.get("metadata")
    if codes & _QUOTA_CODES or err.status == 402 or any(w in low for w in _QUOTA_WORDS):
        return "quota"
    if codes & _POLICY_CODES or (isinstance(meta, dict) and "flagged_input" in meta):
        return "policy"  # OpenRouter's moderation 403 carries metadata.flagged_input
    if codes & _AUTH_CODES or err.status == 401:
        return "auth"
    if err.is_context_overflow:
        return "context"
    # Anthropic's not_found_error is also a wrong URL: only one that names the model counts
    named = "model" in low and ("not_found_error" in codes or any(w in low for w in _MODEL_WORDS))
    if "model_not_found" in codes or named:
        return "model"
    if err.status == 529 or "overloaded_error" in codes:
        return "overloaded"
    if err.status == 429:
        return "rate_limit"
    return ""


class ProviderConnectionError(ProviderError):
    """The connection could not be made or was dropped before any output."""


class ProviderTimeout(ProviderError):
    """The connect or idle-read timeout expired."""


class ProviderStreamError(ProviderError):
    """The stream broke or carried garbage after output had begun."""


class MissingAPIKey(ProviderError):
    """The provider's key variable is set neither in <home>/.env nor in the environment."""


class ToolError(ReasonixError):
    """A tool could not do what was asked; the message goes back to the model."""


class PathDenied(ToolError):
    """A path lies outside the write roots or inside a forbid_read entry."""


class PermissionDenied(ReasonixError):
    """The permission gate refused a tool call."""


class SandboxUnavailable(ReasonixError):
    """Sandbox enforcement is configured but no backend exists on this machine."""


class PluginError(ReasonixError):
    """An MCP server or plugin failed to start or answer."""


class SessionError(ReasonixError):
    """The session store could not do what was asked."""


class CompactionRequired(ReasonixError):
    """The context exceeds the hard limit even after pruning; a summary is needed."""


class HookBlocked(ReasonixError):
    """A user hook (exit 2 or a "block" decision) stopped the action; the text says why."""


class PlannerError(ReasonixError):
    """The dedicated planner produced no plan; plan-only and plan-for-approval stop here."""


class InputTooLarge(ReasonixError):
    """One message (or the system prompt and tools alone) can never fit the window.

    No compaction can help: the message is not added to the conversation, so
    the user can send a shorter one. ``tokens`` is the estimated size,
    ``window`` the model's context window in tokens.
    """

    def __init__(self, message: str, *, tokens: int = 0, window: int = 0) -> None:
        self.tokens = tokens
        self.window = window
        super().__init__(message)


def classify(err: BaseException) -> str:
    """Map a typed error to a failure reason without reading its message (ERR-5)."""
    if isinstance(err, (CompactionRequired, InputTooLarge)):
        return "context.exhausted"
    if isinstance(err, Cancelled):
        return "cancelled"
    if isinstance(err, ProviderAPIError):
        if err.is_context_overflow:
            return "context.exhausted"
        if err.is_permanent:  # by what the body says: a 429 insufficient_quota is not transient
            return "provider.rejected"
        if err.status == 429 or err.status >= 500:
            return "provider.transient"
        return "provider.rejected"
    if isinstance(err, (ProviderConnectionError, ProviderTimeout, ProviderStreamError)):
        return "provider.transient"
    if isinstance(err, MissingAPIKey):
        return "provider.rejected"
    return "unclassified"
