"""Built-in presets and prices (PROV-5): DeepSeek first, data only, prices per model."""

from __future__ import annotations

from pathlib import Path

from reasonix.config import load
from reasonix.config.presets import Price, preset, preset_names, presets, price_for, price_of
from reasonix.config.schema import PROVIDER_KINDS


def test_order_and_shape() -> None:
    names = preset_names()
    assert names[0] == "deepseek"
    assert {
        "deepseek-anthropic", "openai", "anthropic", "openrouter", "ollama", "llama.cpp-server",
    } <= set(names)  # fmt: skip
    for p in presets():
        assert p.kind in PROVIDER_KINDS
        assert p.base_url.startswith(("https://", "http://127.0.0.1"))
        assert p.context_window > 0
        assert p.source == "built-in"
    deepseek = preset("deepseek")
    assert deepseek is not None
    assert (deepseek.kind, deepseek.base_url) == ("openai", "https://api.deepseek.com")
    assert deepseek.models == ["deepseek-chat", "deepseek-reasoner"]
    assert deepseek.api_key_env == "DEEPSEEK_API_KEY"
    ds_anthropic = preset("deepseek-anthropic")
    assert ds_anthropic is not None
    assert ds_anthropic.kind == "anthropic"
    assert ds_anthropic.base_url == "https://api.deepseek.com/anthropic"
    for local in ("ollama", "llama.cpp-server"):
        found = preset(local)
        assert found is not None
        assert found.api_key_env == ""
    assert preset("nope") is None


def test_copies_are_independent() -> None:
    a = preset("openai")
    assert a is not None
    a.models.append("mutated")
    b = preset("openai")
    assert b is not None
    assert "mutated" not in b.models
    assert b.context_window_for("gpt-4.1") == 1047576
    assert b.context_window_for("gpt-5") == 400000


def test_prices() -> None:
    price = price_for("deepseek", "deepseek-chat")
    assert isinstance(price, Price)
    assert price.output > price.input > price.cache_read > 0
    assert price.currency in ("USD", "CNY")
    assert price_for("deepseek", "unknown-model") is None
    assert price_for("openrouter", "openai/gpt-5") is None
    assert price_for("nobody", "x") is None


def test_user_prices_override(tmp_path: Path) -> None:
    (tmp_path / "reasonix.toml").write_text(
        '[[providers]]\nname = "deepseek"\n'
        "[providers.prices.deepseek-chat]\ninput = 2\noutput = 3\ncache_read = 0.5\n"
        'currency = "CNY"\n',
        encoding="utf-8",
    )
    cfg = load(tmp_path)
    deepseek = cfg.provider("deepseek")
    assert deepseek is not None
    assert price_of(deepseek, "deepseek-chat") == Price(2.0, 3.0, 0.5, "CNY")
    reasoner = price_of(deepseek, "deepseek-reasoner")
    assert reasoner == price_for("deepseek", "deepseek-reasoner")  # untouched model keeps preset
