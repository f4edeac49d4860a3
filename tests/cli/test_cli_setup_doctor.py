"""``reasonix setup --preset …`` and ``reasonix doctor`` against loopback servers.

Real parts: the fake OpenAI-compatible server (GET /models is answered from
its ``meta`` routes), real files under the per-test home, the real CLI in a
subprocess so exit codes and stdout are what a script sees.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from fakes import FakeServer

from reasonix.config.setup_plan import apply_setup, plan_setup
from reasonix.config.tomledit import upsert_array_entry
from reasonix.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
MODELS = {"object": "list", "data": [{"id": "m-small"}, {"id": "m-large"}]}


def _cli(args: list[str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "reasonix", *args], cwd=cwd, input=stdin, env=env,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def _home() -> Path:
    return Path(os.environ["REASONIX_HOME"])


def test_scripted_setup_stores_the_key_only_in_the_env_file(tmp_path: Path) -> None:
    with FakeServer("openai", meta={"GET /v1/models": MODELS}) as srv:
        out = _cli(["setup", "--preset", "openai-compatible", "--base-url", f"{srv.url}/v1",
                    "--key-stdin"], tmp_path, "sk-secret-123\n")  # fmt: skip
        assert out.returncode == 0, out.stderr
        got = srv.meta_requests[0]
        assert got.method == "GET" and got.path == "/v1/models"
        assert got.header("authorization") == "Bearer sk-secret-123"
    env_file = _home() / ".env"
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert "CUSTOM_API_KEY=sk-secret-123" in env_file.read_text()
    config = (_home() / "config.toml").read_text()
    assert "sk-secret" not in config and "sk-secret" not in out.stdout + out.stderr
    data = tomllib.loads(config)
    assert data["default_model"] == "custom/m-small"  # the first listed model
    assert data["providers"][0]["api_key_env"] == "CUSTOM_API_KEY"


def test_a_rejected_key_is_said_plainly_and_nothing_is_written(tmp_path: Path) -> None:
    refusal = (401, {"error": {"message": "bad key", "type": "invalid_request_error"}})
    with FakeServer("openai", meta={"GET /models": refusal}) as srv:
        out = _cli(["setup", "--preset", "openai-compatible", "--base-url", srv.url,
                    "--key-stdin", "--model", "x"], tmp_path, "sk-wrong\n")  # fmt: skip
    assert out.returncode == 1
    assert "the key was rejected (HTTP 401)" in out.stderr and "nothing was written" in out.stderr
    assert not (_home() / "config.toml").exists() and not (_home() / ".env").exists()


def test_nothing_listening_is_said_plainly(tmp_path: Path) -> None:
    out = _cli(["setup", "--preset", "llama.cpp", "--base-url", "http://127.0.0.1:9/v1"], tmp_path)
    assert out.returncode == 1 and "nothing is listening" in out.stderr


def test_local_setup_keeps_existing_keys_and_comments(tmp_path: Path) -> None:
    project = tmp_path / "reasonix.toml"
    project.write_text('# my notes\ndefault_model = "old/one"\n\n[agent]\nmax_steps = 7  # keep\n')
    out = _cli(["setup", "--local", "--preset", "deepseek", "--model", "deepseek-reasoner",
                "--no-test"], tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    text = project.read_text()
    assert "# my notes" in text and "max_steps = 7  # keep" in text
    assert tomllib.loads(text)["default_model"] == "deepseek/deepseek-reasoner"
    assert "[[providers]]" not in text  # nothing differs from the preset
    assert not (_home() / "config.toml").exists()


def test_plan_rules() -> None:
    with pytest.raises(UsageError, match="needs --base-url"):
        plan_setup("openai-compatible")
    with pytest.raises(UsageError, match="unknown preset"):
        plan_setup("nosuch")
    with pytest.raises(UsageError, match="--kind goes with"):
        plan_setup("openai", kind="anthropic")
    with pytest.raises(UsageError, match="not a valid environment variable"):
        plan_setup("openai", key_env="1BAD")
    with pytest.raises(UsageError, match="http"):
        plan_setup("ollama", base_url="ftp://x")
    plan = plan_setup("ollama", base_url="http://127.0.0.1:11500/v1")
    assert plan.key_env == "" and plan.provider == "ollama"


def test_setup_twice_replaces_the_provider_entry(tmp_path: Path) -> None:
    for url in ("http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1"):
        plan = plan_setup("openai-compatible", base_url=url, model="m").with_model("m")
        apply_setup(plan, key=None, local=True, workspace=tmp_path)
    data = tomllib.loads((tmp_path / "reasonix.toml").read_text())
    assert [p["base_url"] for p in data["providers"]] == ["http://127.0.0.1:8002/v1"]
    assert "api_key_env" not in data["providers"][0]  # no key: none is required


def test_upsert_array_entry_touches_only_its_element(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        '[[providers]]\nname = "a"\nbase_url = "http://a"\n\n'
        '[[providers]]\nname = "b"  # b\nbase_url = "http://b"\n\n[agent]\nmax_steps = 3\n'
    )
    assert upsert_array_entry(path, "providers", "b", {"name": "b", "base_url": "http://B"})
    data = tomllib.loads(path.read_text())
    assert [p["base_url"] for p in data["providers"]] == ["http://a", "http://B"]
    assert data["agent"]["max_steps"] == 3
    assert not upsert_array_entry(path, "providers", "c", {"name": "c"})
    assert [p["name"] for p in tomllib.loads(path.read_text())["providers"]] == ["a", "b", "c"]


def test_setup_without_a_terminal_needs_a_preset(tmp_path: Path) -> None:
    out = _cli(["setup"], tmp_path)
    assert out.returncode == 2 and "give --preset" in out.stderr


# -- doctor ---------------------------------------------------------------------------------


def test_doctor_names_each_problem_and_its_fix(tmp_path: Path) -> None:
    (tmp_path / "reasonix.toml").write_text(
        '[[mcp.servers]]\nname = "ghost"\ncommand = "no-such-program-xyz"\n'
    )
    out = _cli(["doctor", "--json"], tmp_path)
    assert out.returncode == 1
    report = json.loads(out.stdout)
    by = {(c["name"], c["status"]): c for c in report["checks"]}
    key = by[("provider key", "fail")]
    assert "DEEPSEEK_API_KEY" in key["detail"] and "reasonix setup" in key["fix"]
    ghost = by[("mcp", "fail")]
    assert "ghost" in ghost["detail"] and "ghost" in ghost["fix"]
    assert report["ok"] is False


def test_doctor_passes_on_a_good_setup(tmp_path: Path) -> None:
    with FakeServer("openai", meta={"GET /models": MODELS}) as srv:
        (tmp_path / "reasonix.toml").write_text(
            'default_model = "fake/m-small"\n[sandbox]\nbash = "off"\n'
            f'[[providers]]\nname = "fake"\nkind = "openai"\nbase_url = "{srv.url}"\n'
            'models = ["m-small"]\napi_key_env = "FAKE_KEY"\n'
        )
        (_home() / ".env").write_text("FAKE_KEY=sk-doctor-secret\n")
        out = _cli(["doctor"], tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "sk-doctor-secret" not in out.stdout + out.stderr
    assert "key present in FAKE_KEY" in out.stdout and "(2 models)" in out.stdout
    assert "window" in out.stdout and "0 failed" in out.stdout


def test_doctor_reports_a_broken_config_file(tmp_path: Path) -> None:
    (tmp_path / "reasonix.toml").write_text("[agent\nmax_steps = 1\n")
    out = _cli(["doctor"], tmp_path)
    assert out.returncode == 1
    assert "FAIL" in out.stdout and "reasonix.toml" in out.stdout


def test_doctor_names_a_missing_bubblewrap_with_its_fix(tmp_path: Path) -> None:
    (tmp_path / "reasonix.toml").write_text('[sandbox]\nbash = "enforce"\n')
    bare = tmp_path / "bin"
    bare.mkdir()  # a PATH without bwrap, rg or anything else
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(PYTHONPATH=str(ROOT), PATH=str(bare))
    out = subprocess.run([sys.executable, "-m", "reasonix", "doctor", "--json"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert out.returncode == 1
    checks = {c["name"]: c for c in json.loads(out.stdout)["checks"]}
    assert checks["sandbox"]["status"] == "fail" and "bwrap" in checks["sandbox"]["detail"]
    assert "install bubblewrap" in checks["sandbox"]["fix"]
    assert checks["ripgrep"]["status"] == "warn" and "ripgrep" in checks["ripgrep"]["fix"]
