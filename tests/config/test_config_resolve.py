"""Config.resolve_model and default_resolved (PROV-6, PROV-9)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonix.config import load, paths
from reasonix.config.model import Config
from reasonix.errors import ConfigError


@pytest.fixture
def cfg(tmp_path: Path) -> Config:
    (tmp_path / "reasonix.toml").write_text(
        '[[providers]]\nname = "gw"\nkind = "openai"\nbase_url = "http://gw"\n'
        'models = ["fast", "deepseek-chat", "anthropic/claude-sonnet-4.5"]\n'
        'default = "deepseek-chat"\n'
        '[[providers]]\nname = "solo"\nmodels = ["first", "second"]\n',
        encoding="utf-8",
    )
    return load(tmp_path)


@pytest.mark.parametrize(
    ("ref", "want"),
    [
        ("gw", "gw/deepseek-chat"),  # provider name -> explicit default
        ("solo", "solo/first"),  # provider name -> first listed
        ("deepseek", "deepseek/deepseek-chat"),  # preset, first listed
        ("fast", "gw/fast"),  # bare model
        ("deepseek-chat", "gw/deepseek-chat"),  # configured providers before presets
        ("deepseek-reasoner", "deepseek/deepseek-reasoner"),  # only a preset lists it
        ("deepseek/deepseek-chat", "deepseek/deepseek-chat"),  # explicit provider/model
        ("solo/unlisted", "solo/unlisted"),  # explicit provider, model not listed
        ("anthropic/claude-sonnet-4.5", "gw/anthropic/claude-sonnet-4.5"),  # OpenRouter-style id
        ("anthropic/claude-haiku-4-5", "anthropic/claude-haiku-4-5"),
        ("openrouter/openai/gpt-5", "openrouter/openai/gpt-5"),
    ],
)
def test_resolve_table(cfg: Config, ref: str, want: str) -> None:
    assert cfg.resolve_model(ref).ref == want


def test_unknown_lists_choices(cfg: Config) -> None:
    with pytest.raises(ConfigError) as info:
        cfg.resolve_model("nonexistent-model")
    text = str(info.value)
    assert "nonexistent-model" in text
    assert "gw/fast" in text
    assert "deepseek" in text


def test_provider_without_models(cfg: Config) -> None:
    with pytest.raises(ConfigError, match="ollama/<model>"):
        cfg.resolve_model("ollama")
    assert cfg.resolve_model("ollama/qwen2.5-coder:7b").model == "qwen2.5-coder:7b"


def test_default_resolved_builtin(tmp_path: Path) -> None:
    resolved = load(tmp_path).default_resolved()
    assert resolved.provider.name == "deepseek"
    assert resolved.model == "deepseek-chat"
    assert resolved.provider.api_key_env == "DEEPSEEK_API_KEY"


def test_default_resolved_error_names_the_file(tmp_path: Path) -> None:
    path = paths.user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('default_model = "nope"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load(tmp_path).default_resolved()
    assert str(path) in str(info.value)
    assert "default_model" in str(info.value)


def test_a_declared_provider_is_the_default_when_no_model_is_chosen(tmp_path: Path) -> None:
    (tmp_path / "reasonix.toml").write_text(
        '[[providers]]\nname = "mine"\nkind = "openai"\nbase_url = "http://127.0.0.1:1/v1"\n'
        'models = ["m1", "m2"]\n'
    )
    cfg = load(tmp_path)
    assert cfg.default_resolved().ref == "mine/m1"
    assert cfg.sources["default_model"].endswith("reasonix.toml")
    (tmp_path / "reasonix.toml").write_text(
        'default_model = "deepseek"\n' + (tmp_path / "reasonix.toml").read_text()
    )
    assert load(tmp_path).default_resolved().provider.name == "deepseek"


def test_overriding_a_preset_keeps_the_embedded_default(tmp_path: Path) -> None:
    (tmp_path / "reasonix.toml").write_text(
        '[[providers]]\nname = "openai"\ncontext_window = 9000\n'
    )
    assert load(tmp_path).default_resolved().provider.name == "deepseek"
