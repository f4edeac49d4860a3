"""Built-in provider presets and their price table, as data (PROV-5).

A vendor is configuration, not code: each preset is a plain dict shaped like
a ``[[providers]]`` table. DeepSeek comes first because it is the embedded
default — a fresh install works with nothing but ``DEEPSEEK_API_KEY``.
Prices are per million tokens and may go stale; a user ``prices`` table on the
provider overrides them, and unknown models simply have no price.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonix.config.model import ModelOverride, ProviderConfig
from reasonix.lazy import dataclass

if TYPE_CHECKING:
    from typing import Any

__all__ = ["PRESETS", "Price", "preset", "preset_names", "presets", "price_for", "price_of"]


@dataclass(frozen=True)
class Price:
    """Price per million tokens."""

    input: float
    output: float
    cache_read: float
    currency: str = "USD"


def _p(inp: float, out: float, cache: float, currency: str = "USD") -> dict[str, Any]:
    return {"input": inp, "output": out, "cache_read": cache, "currency": currency}


# DeepSeek V3.2 list price (both model names bill the same).
_DEEPSEEK_PRICES = {
    "deepseek-chat": _p(0.28, 0.42, 0.028),
    "deepseek-reasoner": _p(0.28, 0.42, 0.028),
}

PRESETS: tuple[dict[str, Any], ...] = (
    {
        "name": "deepseek",
        "kind": "openai",
        "base_url": "https://api.deepseek.com",
        "models": ["deepseek-chat", "deepseek-reasoner"],
        "api_key_env": "DEEPSEEK_API_KEY",
        "context_window": 131072,
        "prices": _DEEPSEEK_PRICES,
    },
    {
        "name": "deepseek-anthropic",
        "kind": "anthropic",
        "base_url": "https://api.deepseek.com/anthropic",
        "models": ["deepseek-chat", "deepseek-reasoner"],
        "api_key_env": "DEEPSEEK_API_KEY",
        "context_window": 131072,
        "prices": _DEEPSEEK_PRICES,
    },
    {
        "name": "openai",
        "kind": "openai",
        "base_url": "https://api.openai.com/v1",
        "models": ["gpt-5", "gpt-5-mini", "gpt-4.1", "gpt-4.1-mini"],
        "api_key_env": "OPENAI_API_KEY",
        "context_window": 400000,
        "model_overrides": {
            "gpt-4.1": {"context_window": 1047576},
            "gpt-4.1-mini": {"context_window": 1047576},
        },
        "prices": {
            "gpt-5": _p(1.25, 10.0, 0.125),
            "gpt-5-mini": _p(0.25, 2.0, 0.025),
            "gpt-4.1": _p(2.0, 8.0, 0.5),
            "gpt-4.1-mini": _p(0.4, 1.6, 0.1),
        },
    },
    {
        "name": "anthropic",
        "kind": "anthropic",
        "base_url": "https://api.anthropic.com",
        "models": ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"],
        "api_key_env": "ANTHROPIC_API_KEY",
        "context_window": 200000,
        "prices": {
            "claude-sonnet-4-5": _p(3.0, 15.0, 0.3),
            "claude-haiku-4-5": _p(1.0, 5.0, 0.1),
            "claude-opus-4-1": _p(15.0, 75.0, 1.5),
        },
    },
    {
        "name": "openrouter",
        "kind": "openai",
        "base_url": "https://openrouter.ai/api/v1",
        "models": ["deepseek/deepseek-chat", "anthropic/claude-sonnet-4.5", "openai/gpt-5"],
        "api_key_env": "OPENROUTER_API_KEY",
        "context_window": 128000,
    },
    {
        # Kimi thinking models answer 400 unless every assistant message with tool
        # calls carries reasoning_content (issue 33); api.moonshot.cn serves China.
        "name": "moonshot",
        "kind": "openai",
        "base_url": "https://api.moonshot.ai/v1",
        "models": ["kimi-k2.5", "kimi-k2-thinking", "kimi-k2-0905-preview"],
        "api_key_env": "MOONSHOT_API_KEY",
        "context_window": 262144,
        "reasoning_content_on_tool_calls": True,
    },
    {
        # Local servers: no key. Ollama lists nothing by default; name a model
        # in config (models = ["qwen2.5-coder:7b"]) or use "ollama/<model>".
        "name": "ollama",
        "kind": "openai",
        "base_url": "http://127.0.0.1:11434/v1",
        "models": [],
        "context_window": 32768,
    },
    {
        # llama.cpp's server serves the one model it was started with and
        # ignores the requested name, so any placeholder works.
        "name": "llama.cpp-server",
        "kind": "openai",
        "base_url": "http://127.0.0.1:8080/v1",
        "models": ["local"],
        "context_window": 32768,
    },
)


def preset_names() -> list[str]:
    """Names of the built-in presets, DeepSeek first."""
    return [p["name"] for p in PRESETS]


def _copy(value: Any) -> Any:
    """A copy of preset data (dicts, lists and scalars): callers may mutate what they get."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _build(data: dict[str, Any]) -> ProviderConfig:
    data = _copy(data)
    overrides = {
        model: ModelOverride(
            context_window=ov.get("context_window"), max_output_tokens=ov.get("max_output_tokens")
        )
        for model, ov in data.pop("model_overrides", {}).items()
    }
    return ProviderConfig(**data, model_overrides=overrides, source="built-in")


def preset(name: str) -> ProviderConfig | None:
    """A fresh copy of the preset called ``name``, or None."""
    for data in PRESETS:
        if data["name"] == name:
            return _build(data)
    return None


def presets() -> list[ProviderConfig]:
    """Fresh copies of all presets, in order (callers may mutate them)."""
    return [_build(d) for d in PRESETS]


def _price(entry: dict[str, Any] | None) -> Price | None:
    if entry is None:
        return None
    return Price(
        float(entry["input"]),
        float(entry["output"]),
        float(entry["cache_read"]),
        str(entry.get("currency", "USD")),
    )


def price_for(provider_name: str, model: str) -> Price | None:
    """The built-in price of ``model`` on preset ``provider_name``, or None when unknown."""
    for data in PRESETS:
        if data["name"] == provider_name:
            return _price(data.get("prices", {}).get(model))
    return None


def price_of(provider: ProviderConfig, model: str) -> Price | None:
    """The effective price of ``model`` on a loaded provider (user ``prices`` over presets)."""
    return _price(provider.prices.get(model))
