"""``[[providers]]`` entries: validation and merging onto the presets (PROV-5/6/10).

A user entry whose name matches a preset overrides that preset field by
field; any other name adds a provider. Configured providers are ordered
before untouched presets so a bare model name prefers the user's endpoint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from reasonix.config.layers import Layer, check_fields, check_type, header_problem
from reasonix.config.model import ModelOverride, ProviderConfig
from reasonix.config.presets import presets
from reasonix.config.schema import PROVIDER_KINDS

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Admit = Callable[[Layer, str, ProviderConfig | None, dict[str, Any]], bool]

__all__ = ["ProviderSet"]

_FIELDS = {
    "name": "str",
    "kind": "str",
    "base_url": "str",
    "request_url": "str",
    "chat_url": "str",
    "model": "str",
    "models": "list[str]",
    "default": "str",
    "api_key_env": "str",
    "context_window": "int",
    "max_output_tokens": "int",
    "model_overrides": "dict",
    "extra_body": "dict",
    "web_search": "bool",
    "reasoning_content_on_tool_calls": "bool",
    "probe_window": "bool",
    "headers": "dict[str]",
    "prices": "dict",
}
_OVERRIDE_FIELDS = {"context_window": "int", "max_output_tokens": "int"}
# per-model sampling (issue 33): the range each accepts; unset ones are never sent
_SAMPLING_RANGES = {"temperature": (0.0, 2.0), "top_p": (0.0, 1.0)}
_URL_FIELDS = ("base_url", "request_url", "chat_url")


def _url_problem(url: str) -> str | None:
    """Why ``url`` cannot be an endpoint, or None ("" means unset and is fine)."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as exc:
        return f"is not a valid URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "is not an http:// or https:// URL with a host (e.g. https://api.example.com/v1)"
    return None


_PRICE_FIELDS = ("input", "output", "cache_read")


class ProviderSet:
    """The providers being assembled while layers are applied in order."""

    def __init__(self) -> None:
        self._presets = presets()
        self._configured: list[ProviderConfig] = []

    def result(self) -> list[ProviderConfig]:
        """Configured providers first, then the presets nobody touched."""
        return self._configured + self._presets

    def configured(self) -> list[ProviderConfig]:
        """Providers some config file declared or changed, in declaration order."""
        return list(self._configured)

    def _take(self, name: str) -> ProviderConfig | None:
        for p in self._configured:
            if p.name == name:
                return p
        for i, p in enumerate(self._presets):
            if p.name == name:
                self._configured.append(self._presets.pop(i))
                return p
        return None

    def apply(
        self, layer: Layer, entries: Any, warnings: list[str], admit: Admit | None = None
    ) -> None:
        """Merge the ``providers`` array of ``layer``.

        ``admit(layer, name, current, values)`` may refuse an entry (an untrusted
        workspace's provider at a new host): it is then left out whole.
        """
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise layer.error("expected an array of tables ([[providers]])", "", "providers")
        for index, entry in enumerate(entries):
            self._apply_one(layer, index, entry, warnings, admit)

    def _peek(self, name: str) -> ProviderConfig | None:
        for p in self._configured + self._presets:
            if p.name == name:
                return p
        return None

    def _apply_one(
        self,
        layer: Layer,
        index: int,
        entry: dict[str, Any],
        warnings: list[str],
        admit: Admit | None,
    ) -> None:
        def err(message: str, key: str) -> Exception:
            return layer.error(message, "providers", key, index)

        values = check_fields(layer, "providers", index, entry, _FIELDS, warnings)
        name = values.get("name", "")
        if not name:
            raise err("every [[providers]] entry needs a name", "name")
        if "kind" in values and values["kind"] not in PROVIDER_KINDS:
            raise err(
                f"unknown provider kind {values['kind']!r}: expected one of "
                f"{', '.join(PROVIDER_KINDS)}",
                "kind",
            )
        if "model" in values:
            if "models" in values:
                raise err("set either model or models, not both", "model")
            values["models"] = [values.pop("model")]
        for key in ("context_window", "max_output_tokens"):
            if key == "context_window" and values.get(key, 0) < 0:
                raise err("expected a token count >= 0 (0 disables compaction)", key)
            if key == "max_output_tokens" and values.get(key, 0) < 0:
                raise err("expected a token count >= 0 (0 = automatic)", key)
        for key, value in (values.get("headers") or {}).items():
            if header_problem(key, value):
                raise err(str(header_problem(key, value)), f"headers.{key}")
        for key in _URL_FIELDS:
            problem = _url_problem(values.get(key, ""))
            if problem:
                raise err(f"{key} {values[key]!r} {problem}", key)
        overrides = self._overrides(layer, index, values.pop("model_overrides", None))
        prices = self._prices(layer, index, values.pop("prices", None))
        if admit is not None and not admit(layer, name, self._peek(name), values):
            return

        target = self._take(name)
        if target is None:
            target = ProviderConfig(name=name)
            self._configured.append(target)
        for key, value in values.items():
            setattr(target, key, value)
        target.model_overrides.update(overrides)
        target.prices.update(prices)
        target.source = layer.name
        if target.default and target.models and target.default not in target.models:
            warnings.append(
                f"{layer.name}: provider {name!r} default {target.default!r} is not in its "
                "models list"
            )

    @staticmethod
    def _overrides(layer: Layer, index: int, raw: Any) -> dict[str, ModelOverride]:
        out: dict[str, ModelOverride] = {}
        for model, table in (raw or {}).items():
            if not isinstance(table, dict):
                raise layer.error(
                    f"expected a table for model_overrides.{model}",
                    "providers",
                    "model_overrides",
                    index,
                )
            ov = ModelOverride()
            for key, value in table.items():
                if key in _OVERRIDE_FIELDS:
                    number = check_type(layer, "providers", key, value, "int", index)
                    if number < 0:
                        raise layer.error(
                            f"model_overrides.{model}.{key} must be >= 0, got {number}",
                            "providers",
                            "model_overrides",
                            index,
                        )
                    setattr(ov, key, number)
                elif key in _SAMPLING_RANGES:
                    value = check_type(layer, "providers", key, value, "float", index)
                    low, high = _SAMPLING_RANGES[key]
                    if not low <= value <= high:
                        raise layer.error(
                            f"model_overrides.{model}.{key} must be from {low:g} to {high:g}, "
                            f"got {value}",
                            "providers",
                            "model_overrides",
                            index,
                        )
                    setattr(ov, key, value)
                else:
                    ov.extra[key] = value
            out[model] = ov
        return out

    @staticmethod
    def _prices(layer: Layer, index: int, raw: Any) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for model, table in (raw or {}).items():
            ok = isinstance(table, dict) and all(
                isinstance(table.get(k), (int, float)) and not isinstance(table.get(k), bool)
                for k in _PRICE_FIELDS
            )
            if not ok:
                raise layer.error(
                    f"prices.{model} must be a table with numeric input, output and cache_read "
                    "(per million tokens) and an optional currency",
                    "providers",
                    "prices",
                    index,
                )
            out[model] = {
                **{k: float(table[k]) for k in _PRICE_FIELDS},
                "currency": str(table.get("currency", "USD")),
            }
        return out
