"""Optional request parameters: sampling sent only when wanted, refusals remembered.

Two things every kind shares (issue 33):

- **What is sent.** ``temperature`` and ``top_p`` go into a body only when
  configured — ``[agent] temperature`` (``Request.temperature``) or the
  provider's ``model_overrides.<model>.temperature`` / ``top_p`` (which win) —
  and never beside a reasoning effort where the kind or model refuses them
  (:func:`allowed`, called once by each kind's ``encode_body``).
- **What the vendor refused.** A 400 that names a parameter as unsupported
  (:func:`unsupported_parameter`) is remembered per model for the life of the
  provider object — one session — by :class:`Refusals`, which takes the key out
  of (or renames it in) every later body for that model.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from reasonix.lazy import Pattern

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from reasonix.errors import ProviderAPIError
    from reasonix.provider.types import Request

__all__ = [
    "SAMPLING_KEYS",
    "Refusals",
    "allowed",
    "configured",
    "openai_reasoning_model",
    "unsupported_parameter",
]

SAMPLING_KEYS = ("temperature", "top_p")
# Body keys a vendor may refuse that the request can do without (or under another name).
# Everything else (model, messages, tools, stream …) is never touched.
OPTIONAL_KEYS = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "reasoning_effort",
        "reasoning",
        "max_tokens",
        "max_completion_tokens",
        "max_output_tokens",
    }
)
# Anthropic documents top_p between 0.95 and 1 as the only sampling change allowed
# while extended thinking is on (temperature and top_k are refused then).
_THINKING_TOP_P = (0.95, 1.0)


def configured(request: Request, cfg: Any) -> dict[str, float]:
    """The sampling values configured for ``request.model``: per-model overrides win."""
    out: dict[str, float] = {}
    if request.temperature is not None:
        out["temperature"] = float(request.temperature)
    overrides = getattr(cfg, "model_overrides", None) or {}
    ov = overrides.get(request.model) if isinstance(overrides, dict) else None
    for key in SAMPLING_KEYS:
        value = getattr(ov, key, None)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = float(value)
    return out


def openai_reasoning_model(model: str) -> bool:
    """OpenAI's reasoning models (o-series, gpt-5 but its chat variants), also behind a
    gateway prefix (``openai/gpt-5``): they refuse temperature/top_p beside an effort."""
    name = model.rsplit("/", 1)[-1].lower()
    if name[:2] in ("o1", "o3", "o4"):
        return True
    return name.startswith("gpt-5") and "chat" not in name


def allowed(
    kind: str, request: Request, wanted: Mapping[str, float] | None, *, thinking: bool = False
) -> dict[str, float]:
    """What of ``wanted`` (None: ``request.temperature`` alone) this body may carry.

    - ``responses`` with an effort: nothing (reasoning models refuse sampling there);
    - ``openai`` with an effort on an OpenAI reasoning model: nothing;
    - ``anthropic``: with thinking on, no temperature and top_p only from 0.95 to 1;
      never both temperature and top_p (recent Claude models refuse the pair:
      temperature is kept).
    """
    if wanted is None:
        wanted = {} if request.temperature is None else {"temperature": request.temperature}
    out = dict(wanted)
    if kind == "responses" and request.effort:
        return {}
    if kind == "openai" and request.effort and openai_reasoning_model(request.model):
        return {}
    if kind == "anthropic":
        if thinking:
            out.pop("temperature", None)
            low, high = _THINKING_TOP_P
            if not low <= out.get("top_p", 1.0) <= high:
                out.pop("top_p", None)
        if "temperature" in out:
            out.pop("top_p", None)
    return out


# "Unsupported parameter: 'temperature' is not supported with this model."
# "Unsupported value: 'temperature' does not support 0.2 with this model. …"
_NAMED = Pattern(r"[Uu]nsupported (?:parameter|value):? '([\w.]+)'")
# "… Use 'max_completion_tokens' instead."
_INSTEAD = Pattern(r"[Uu]se '([\w.]+)' instead")
# Anthropic: "`temperature` and `top_p` cannot both be specified for this model."
_BOTH = Pattern(r"`(\w+)` and `(\w+)` cannot both be specified")


def _error_object(body: str) -> dict[str, Any]:
    try:
        obj = json.loads(body)
    except ValueError:
        return {}
    if isinstance(obj, list) and obj:
        obj = obj[0]
    if not isinstance(obj, dict):
        return {}
    err = obj.get("error", obj)
    return err if isinstance(err, dict) else obj


def _extra_forbidden(err: dict[str, Any]) -> str:
    """vLLM / Mistral (pydantic): ``detail: [{"type": "extra_forbidden", "loc": ["body", k]}]``."""
    detail = err.get("detail")
    if isinstance(err.get("message"), dict):  # Mistral nests it under message
        detail = err["message"].get("detail")
    for item in detail if isinstance(detail, list) else ():
        loc = item.get("loc") if isinstance(item, dict) else None
        if item.get("type") == "extra_forbidden" and isinstance(loc, list) and loc:
            return str(loc[-1])
    return ""


def unsupported_parameter(err: ProviderAPIError) -> tuple[str, str]:
    """``(param, replacement)`` when a 400/422 says a request parameter is not supported
    (``replacement`` is the name the vendor asks for instead, or ""); ``("", "")`` otherwise.

    ``param`` is the vendor's own dotted name (``temperature``, ``reasoning.effort``).
    """
    if err.status not in (400, 422):
        return "", ""
    obj = _error_object(err.body)
    raw = obj.get("message")
    message = raw if isinstance(raw, str) else err.vendor_message
    param = ""
    code = str(obj.get("code") or "")
    if isinstance(obj.get("param"), str) and (
        code in ("unsupported_parameter", "unsupported_value") or _NAMED.search(message)
    ):
        param = obj["param"]
    if not param:
        named = _NAMED.search(message)
        both = _BOTH.search(message)
        if named:
            param = named.group(1)
        elif both:
            param = "top_p" if "top_p" in both.groups() else both.group(2)
        else:
            param = _extra_forbidden(obj)
    instead = _INSTEAD.search(message)
    return param, (instead.group(1) if instead and param else "")


class Refusals:
    """Parameters each model refused this session: dropped (or renamed) in later bodies."""

    def __init__(self) -> None:
        # model -> body key -> "" (leave it out) or the key to send its value under
        self._by_model: dict[str, dict[str, str]] = {}

    def apply(self, model: str, body: dict[str, Any]) -> None:
        """Take what ``model`` refused out of ``body`` (in place), renaming where asked."""
        for key, instead in self._by_model.get(model, {}).items():
            if key not in body:
                continue
            value = body.pop(key)
            if instead and instead not in body:
                body[instead] = value

    def learn(self, model: str, err: ProviderAPIError, body: Mapping[str, Any]) -> str:
        """Remember what ``err`` refused when ``body`` carried it; the notice to show, or ""
        (then nothing was learned and the error stands)."""
        param, instead = unsupported_parameter(err)
        key = param.split(".", 1)[0]  # reasoning.effort is the reasoning object
        if key not in OPTIONAL_KEYS or key not in body:
            return ""
        refused = self._by_model.setdefault(model, {})
        if key in refused:
            return ""  # refused again after being left out: not ours to fix
        if instead not in OPTIONAL_KEYS or instead == key or instead in refused:
            instead = ""  # only our own optional keys, and never back to a refused one
        refused[key] = instead
        what = f"sends {instead} instead of {key}" if instead else f"leaves out {key}"
        return (
            f"{model} does not support {param!r} (HTTP {err.status}): the request was sent "
            f"again and {what} for the rest of the session"
        )
