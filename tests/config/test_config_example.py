"""reasonix.example.toml loads clean into the documented defaults (CFG-8, DOC-5)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from reasonix.config import load
from reasonix.config.loader import SCALAR_KEYS

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLE = ROOT / "reasonix.example.toml"


def test_example_loads_to_defaults(tmp_path: Path) -> None:
    baseline = load(tmp_path)
    shutil.copy(EXAMPLE, tmp_path / "reasonix.toml")
    cfg = load(tmp_path)
    assert cfg.warnings == []
    assert cfg.agent == baseline.agent
    assert cfg.tools == baseline.tools
    assert cfg.permissions == baseline.permissions
    assert cfg.sandbox == baseline.sandbox
    assert cfg.serve == baseline.serve
    assert cfg.default_model == baseline.default_model == "deepseek"
    assert [p.name for p in cfg.providers] == [p.name for p in baseline.providers]
    assert cfg.mcp_servers == []
    # CFG-8 values spelled out
    assert cfg.agent.temperature is None  # unset: not sent (issue 33)
    assert cfg.agent.reasoning_language == "auto"
    assert cfg.agent.compact_ratio == 0.80
    assert cfg.tools.enabled == []
    assert cfg.tools.bash_timeout_seconds == 120
    assert cfg.tools.mcp_startup_timeout_seconds == 30
    assert cfg.tools.mcp_call_timeout_seconds == 300
    assert cfg.permissions.mode == "ask"
    assert cfg.permissions.allow_dynamic_bash is False
    assert cfg.serve.auth_mode == "none"


def test_example_mentions_every_key() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    for table, keys in SCALAR_KEYS.items():
        for key in keys:
            assert re.search(rf"^(# )?{key}\s*=", text, re.M), (table, key)
    for key in ("name", "kind", "base_url", "request_url", "models", "default", "api_key_env",
                "web_search", "context_window", "max_output_tokens", "model_overrides",
                "command", "args", "env", "url", "headers", "concurrency", "enabled"):  # fmt: skip
        assert key in text, key
