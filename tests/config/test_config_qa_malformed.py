"""QA regressions: malformed config inputs give located errors, never internal errors.

Deeply nested TOML/JSON, nan/inf numbers, BOMs, non-UTF-8 .env files, quoted
.env values followed by comments, a ``{}`` .mcp.json, ``bash_timeout_seconds = 0``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from unprivileged import run_python

from reasonix.cli.main import main
from reasonix.config import load, paths
from reasonix.config.dotenv import parse_dotenv, read_dotenv, update_dotenv
from reasonix.config.legacy import save_setting
from reasonix.errors import ConfigError


def _load_error(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load(tmp_path)
    message = str(info.value)
    assert str(path) in message
    return message


def test_deeply_nested_toml_is_a_config_error(tmp_path: Path) -> None:
    message = _load_error(tmp_path, "reasonix.toml", "a = " + "[" * 5000 + "]" * 5000 + "\n")
    assert "nested too deeply" in message


def test_deeply_nested_mcp_json_is_a_config_error(tmp_path: Path) -> None:
    message = _load_error(tmp_path, ".mcp.json", "[" * 100000 + "]" * 100000)
    assert "nested too deeply" in message


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[agent]\ntemperature = nan\n", "agent.temperature"),
        ("[agent]\ncompact_ratio = nan\n", "agent.compact_ratio"),
        ("[tools]\nbash_timeout_seconds = inf\n", "tools.bash_timeout_seconds"),
        ("[tools]\nmcp_call_timeout_seconds = nan\n", "tools.mcp_call_timeout_seconds"),
        ("[agent]\ntemperature = 1" + "0" * 400 + "\n", "agent.temperature"),
    ],
)
def test_non_finite_numbers_are_refused(tmp_path: Path, text: str, key: str) -> None:
    message = _load_error(tmp_path, "reasonix.toml", text)
    assert key in message
    assert "expected a number" in message


def test_bash_timeout_zero_means_no_cap(tmp_path: Path) -> None:
    (tmp_path / "reasonix.toml").write_text("[tools]\nbash_timeout_seconds = 0\n", "utf-8")
    assert load(tmp_path).tools.bash_timeout_seconds == 0
    message = _load_error(tmp_path, "reasonix.toml", "[tools]\nbash_timeout_seconds = -1\n")
    assert "tools.bash_timeout_seconds" in message


@pytest.mark.parametrize("value", ["-1", "0", "nan"])
def test_mcp_startup_timeout_must_be_positive(tmp_path: Path, value: str) -> None:
    toml = f'[[mcp.servers]]\nname = "s"\ncommand = "x"\nstartup_timeout_seconds = {value}\n'
    message = _load_error(tmp_path, "reasonix.toml", toml)
    assert "startup_timeout_seconds" in message
    (tmp_path / "reasonix.toml").unlink()
    json_value = "NaN" if value == "nan" else value
    doc = '{"mcpServers": {"s": {"command": "x", "startup_timeout_seconds": ' + json_value + "}}}"
    (tmp_path / ".mcp.json").write_text(doc, encoding="utf-8")
    cfg = load(tmp_path)  # one bad .mcp.json entry is skipped with a warning (issue 35)
    assert cfg.mcp_servers == []
    assert any("mcpServers.s.startup_timeout_seconds" in w for w in cfg.warnings)


def test_mcp_json_without_servers_declares_none(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text("{}", encoding="utf-8")
    cfg = load(tmp_path)
    assert cfg.mcp_servers == []
    assert cfg.warnings == []
    (tmp_path / ".mcp.json").write_text('{"servers": {"a": {}}}', encoding="utf-8")
    cfg = load(tmp_path)
    assert cfg.mcp_servers == []
    assert any("mcpServers" in w for w in cfg.warnings)


def test_mcp_json_entry_errors_name_the_server_and_file(tmp_path: Path) -> None:
    # one bad entry is skipped with a warning naming it and the file; the others load
    path = tmp_path / ".mcp.json"
    path.write_text('{"mcpServers": {"a": "x", "": {"command": "x"}, "ok": {"command": "y"}}}')
    cfg = load(tmp_path)
    assert [s.name for s in cfg.mcp_servers] == ["ok"]
    assert any(str(path) in w and "'a' skipped" in w and "object" in w for w in cfg.warnings)
    assert any(str(path) in w and "must not be empty" in w for w in cfg.warnings)


def test_bom_is_ignored_in_toml_and_mcp_json(tmp_path: Path) -> None:
    (tmp_path / "reasonix.toml").write_bytes(b"\xef\xbb\xbf[agent]\ncompact_ratio = 0.7\n")
    (tmp_path / ".mcp.json").write_bytes(b'\xef\xbb\xbf{"mcpServers": {"a": {"command": "x"}}}')
    cfg = load(tmp_path)
    assert cfg.agent.compact_ratio == 0.7
    assert [s.name for s in cfg.mcp_servers] == ["a"]
    save_setting(tmp_path / "reasonix.toml", "agent", "compact_ratio", 0.85)
    assert load(tmp_path).agent.compact_ratio == 0.85
    assert (tmp_path / "reasonix.toml").read_text("utf-8").count("[agent]") == 1


def test_dotenv_bom_keeps_the_first_key(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_bytes(b"\xef\xbb\xbfDEEPSEEK_API_KEY=sk-1\r\nOTHER=2\r\n")
    assert read_dotenv(path).values == {"DEEPSEEK_API_KEY": "sk-1", "OTHER": "2"}


def test_dotenv_quoted_value_with_trailing_comment() -> None:
    env = parse_dotenv(
        'A="x y" # note\nB=\'q # r\'  # c\nC="a\\"b" #c\nD="a # b"\nE=plain # c\nF=\'a\'b\'\n'
    )
    assert env.values == {
        "A": "x y",
        "B": "q # r",
        "C": 'a"b',
        "D": "a # b",
        "E": "plain",
        "F": "a'b",
    }


def test_non_utf8_dotenv_is_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_bytes(b"A=caf\xe9\n")
    with pytest.raises(ConfigError) as info:
        load(tmp_path)
    assert str(tmp_path / ".env") in str(info.value)
    (tmp_path / ".env").unlink()
    home_env = paths.env_path()
    home_env.parent.mkdir(parents=True, exist_ok=True)
    home_env.write_bytes(b"DEEPSEEK_API_KEY=caf\xe9\n")
    monkeypatch.chdir(tmp_path)
    assert main(["config", "compact-ratio"]) == 2
    err = capsys.readouterr().err
    assert str(home_env) in err
    assert "internal error" not in err


def test_compact_ratio_write_failure_is_a_message_not_an_internal_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "home-is-a-file"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("REASONIX_HOME", str(blocker))
    monkeypatch.chdir(tmp_path)
    assert main(["config", "compact-ratio", "0.7"]) == 2
    err = capsys.readouterr().err
    assert str(blocker / "config.toml") in err
    assert "internal error" not in err
    (tmp_path / "reasonix.toml").mkdir()
    monkeypatch.setenv("REASONIX_HOME", str(tmp_path / "home"))
    assert main(["config", "compact-ratio", "--local", "0.7"]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "reasonix.toml") in err
    assert "internal error" not in err


def test_dotenv_update_into_a_blocked_directory_is_a_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        update_dotenv(blocker / ".env", {"A": "1"})
    assert str(blocker / ".env") in str(info.value)
    bom = tmp_path / ".env"
    bom.write_bytes(b"\xef\xbb\xbfA=1\n")
    update_dotenv(bom, {"B": "2"})
    assert read_dotenv(bom).values == {"A": "1", "B": "2"}
    assert bom.read_bytes().startswith(b"A=1\n")


@pytest.mark.parametrize(
    ("field", "url"),
    [
        ("base_url", "localhost:1234"),
        ("base_url", "ftp://example.com/v1"),
        ("base_url", "http://[::1"),
        ("request_url", "https://"),
        ("chat_url", "http://127.0.0.1:99999/v1"),
    ],
)
def test_provider_urls_must_be_http_with_a_host(tmp_path: Path, field: str, url: str) -> None:
    toml = f'[[providers]]\nname = "x"\nkind = "openai"\nmodels = ["m"]\n{field} = "{url}"\n'
    message = _load_error(tmp_path, "reasonix.toml", toml)
    assert f"providers.{field}" in message
    assert ":5" in message  # the line of the bad URL


def test_provider_token_counts_must_not_be_negative(tmp_path: Path) -> None:
    base = '[[providers]]\nname = "x"\nbase_url = "http://h/v1"\nmodels = ["m"]\n'
    message = _load_error(tmp_path, "reasonix.toml", base + "max_output_tokens = -1\n")
    assert "providers.max_output_tokens" in message
    message = _load_error(
        tmp_path, "reasonix.toml", base + "[providers.model_overrides.m]\ncontext_window = -2\n"
    )
    assert "model_overrides.m.context_window" in message
    (tmp_path / "reasonix.toml").write_text(base + "max_output_tokens = 0\n", "utf-8")
    assert load(tmp_path).provider("x") is not None


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
def test_read_only_config_with_retired_keys_still_loads(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "reasonix.toml").write_text("[agent]\nsoft_compact_ratio = 0.5\n", "utf-8")
    project.chmod(0o555)  # no temp file can be created next to the config
    code = (
        "import json, sys; from pathlib import Path; from reasonix.config import load; "
        "print(json.dumps(load(Path(sys.argv[1])).warnings))"
    )
    try:  # in a child with permission bits enforced: CI runs as root
        out = run_python(code, str(project))
    finally:
        project.chmod(0o755)
    assert out.returncode == 0, out.stderr
    assert any("could not remove retired keys" in w for w in json.loads(out.stdout))


def test_retire_failure_from_the_editor_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "reasonix.toml").write_text(
        "agent = { soft_compact_ratio = 0.5, compact_ratio = 0.7 }\n", "utf-8"
    )
    cfg = load(tmp_path)
    assert cfg.agent.compact_ratio == 0.7
    assert any("retired keys ignored: agent.soft_compact_ratio" in w for w in cfg.warnings)
    assert not any(w.endswith("removed retired keys ") for w in cfg.warnings)
