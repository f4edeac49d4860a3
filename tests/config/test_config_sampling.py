"""Sampling settings: unset by default, typed per model, ranges checked (issue 33, Deliver 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonix.config import load
from reasonix.config.model import Config
from reasonix.errors import ConfigError

PROVIDER = '[[providers]]\nname = "vendor"\nkind = "openai"\nbase_url = "http://127.0.0.1:1/v1"\n'


def _load(tmp_path: Path, text: str) -> Config:
    (tmp_path / "reasonix.toml").write_text(text, encoding="utf-8")
    return load(tmp_path)


def test_temperature_is_unset_by_default(tmp_path: Path) -> None:
    cfg = load(tmp_path)
    assert cfg.agent.temperature is None
    assert cfg.sources["agent.temperature"] == "default"


def test_temperature_when_set(tmp_path: Path) -> None:
    assert _load(tmp_path, "[agent]\ntemperature = 1\n").agent.temperature == 1.0


@pytest.mark.parametrize("value", ["2.5", "-0.1"])
def test_temperature_out_of_range_is_refused(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, f"[agent]\ntemperature = {value}\n")
    assert "agent.temperature" in str(info.value) and "0 to 2" in str(info.value)


def test_model_override_sampling_is_typed(tmp_path: Path) -> None:
    cfg = _load(
        tmp_path,
        PROVIDER + "[providers.model_overrides.m1]\ntemperature = 1\ntop_p = 0.9\n",
    )
    vendor = cfg.provider("vendor")
    assert vendor is not None
    ov = vendor.model_overrides["m1"]
    assert ov.temperature == 1.0 and isinstance(ov.temperature, float)
    assert ov.top_p == 0.9
    assert ov.extra == {}  # typed fields, not loose extras


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("top_p = 1.5", "model_overrides.m1.top_p must be from 0 to 1"),
        ("temperature = 3", "model_overrides.m1.temperature must be from 0 to 2"),
        ('temperature = "hot"', "expected a number"),
    ],
)
def test_model_override_sampling_is_checked(tmp_path: Path, line: str, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, PROVIDER + f"[providers.model_overrides.m1]\n{line}\n")
    assert needle in str(info.value)
