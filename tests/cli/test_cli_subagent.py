"""``reasonix subagent list | show | try | run | edit`` (SUB-2, SUB-3), in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FakeServer, ToolSpec, Turn

from reasonix.cli.main import main
from reasonix.config.paths import sessions_dir, user_config_path

SIMPLE = "---\nname: helper\ndescription: helps\ninvocation: manual\nrunAs: subagent\n---\nHelp.\n"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    d = tmp_path / "ws"
    d.mkdir()
    return d


def _skill(root: Path, name: str, text: str) -> Path:
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(text)
    return d / "SKILL.md"


def _project(ws: Path, url: str, extra: str = "") -> None:
    (ws / "reasonix.toml").write_text(
        f'default_model = "p"\n{extra}[[providers]]\nname = "p"\nkind = "openai"\n'
        f'base_url = "{url}"\nmodels = ["m"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
    )


def test_list_and_show(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _skill(ws / ".reasonix" / "skills", "helper", SIMPLE)
    _skill(ws / ".reasonix" / "skills", "inline", "---\ndescription: not a profile\n---\nx\n")
    assert main(["subagent", "list", "--dir", str(ws), "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["profiles"]}
    assert set(rows) == {"helper", "explore", "review"}  # inline skills are not profiles
    assert rows["helper"]["scope"] == "project" and rows["helper"]["invocation"] == "manual"
    assert main(["subagent", "list", "--dir", str(ws)]) == 0
    assert "helper" in capsys.readouterr().out
    assert main(["subagent", "show", "explore", "--dir", str(ws)]) == 0
    shown = capsys.readouterr().out
    assert "read_only: True" in shown and "read-only exploration sub-agent" in shown
    assert main(["subagent", "show", "nope", "--dir", str(ws)]) == 2
    assert "no sub-agent profile named 'nope'" in capsys.readouterr().err


def _refused(ws: Path, path: Path, capsys: pytest.CaptureFixture[str], needle: str) -> None:
    before = path.read_bytes()
    assert main(["subagent", "edit", "helper", "--description", "new", "--dir", str(ws)]) == 2
    assert needle in capsys.readouterr().err
    assert path.read_bytes() == before  # untouched


def test_edit_refuses_every_rich_shape(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = ws / ".reasonix" / "skills"
    path = _skill(root, "helper", SIMPLE)
    (path.parent / "references").mkdir()
    _refused(ws, path, capsys, "rich skill")
    (path.parent / "references").rmdir()
    (path.parent / "scripts").mkdir()
    _refused(ws, path, capsys, "rich skill")
    (path.parent / "scripts").rmdir()
    path.write_text(SIMPLE.replace("invocation: manual\n", ""))
    _refused(ws, path, capsys, "not `invocation: manual`")
    path.write_text(SIMPLE.replace("runAs", "triggers: review\nrunAs"))
    _refused(ws, path, capsys, "does not manage (triggers)")
    path.unlink()
    path.parent.rmdir()
    custom = _skill(ws / ".claude" / "skills", "helper", SIMPLE)
    _refused(ws, custom, capsys, "custom scope")


def test_edit_a_simple_profile_and_a_builtin(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _skill(ws / ".reasonix" / "skills", "helper", SIMPLE)
    argv = ["subagent", "edit", "helper", "--dir", str(ws), "--model", "p/m", "--tools",
            "read_file,grep", "--prompt", "Help more."]  # fmt: skip
    assert main(argv) == 0
    text = path.read_text()
    assert "model: p/m" in text and "allowed-tools: [read_file, grep]" in text
    assert "runAs: subagent" in text and text.endswith("---\nHelp more.\n")
    assert main(["subagent", "edit", "explore", "--prompt", "x", "--dir", str(ws)]) == 2
    assert "only --model and --effort" in capsys.readouterr().err
    assert main(["subagent", "edit", "explore", "--model", "p/m", "--dir", str(ws)]) == 0
    assert 'explore = "p/m"' in user_config_path().read_text()
    assert main(["subagent", "edit", "explore", "--model", "", "--dir", str(ws)]) == 0
    assert "explore" not in user_config_path().read_text().split("]", 1)[-1]


def test_try_is_read_only_and_keeps_nothing(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _skill(ws / ".reasonix" / "skills", "helper", SIMPLE)  # a writer profile
    script = [
        Turn.tools([ToolSpec("read_file", '{"path": "a.txt"}')]),
        Turn.text_only("it says hi"),
    ]
    (ws / "a.txt").write_text("hi\n")
    with FakeServer("openai", script) as srv:
        _project(ws, srv.url)
        code = main(["subagent", "try", "helper", "what does a.txt say?", "--dir", str(ws),
                     "--json", "--max-steps", "5"])  # fmt: skip
        tools = {t["function"]["name"] for t in srv.requests[0].json["tools"]}
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["profile_status"] == "complete" and out["result"] == "it says hi"
    assert not tools & {"write_file", "edit_file", "bash", "task", "complete_subtask"}
    assert out["subagent_runs"] == 1 and out["transcript"] is None
    assert out["capsuleHash"].startswith("sha256:")
    assert not (sessions_dir(ws) / "subagents").exists() or not any(
        (sessions_dir(ws) / "subagents").iterdir()
    )


def test_run_uses_the_permission_rules(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _skill(ws / ".reasonix" / "skills", "helper", SIMPLE)
    writes = Turn.tools([
        ToolSpec("write_file", '{"path": "ok.txt", "content": "ok"}'),
        ToolSpec("write_file", '{"path": "secret.txt", "content": "no"}'),
    ])  # fmt: skip
    with FakeServer("openai", [writes, Turn.text_only("wrote")]) as srv:
        _project(ws, srv.url, '[permissions]\nmode = "auto"\ndeny = ["Edit(secret.txt)"]\n')
        code = main(["subagent", "run", "helper", "write two files", "--dir", str(ws)])
        denied = srv.requests[1].json["messages"][-1]["content"]
    out = capsys.readouterr().out
    assert (ws / "ok.txt").exists() and not (ws / "secret.txt").exists()
    assert "deny" in denied
    assert code == 0 and out.startswith("status: complete (prose only")
    assert "- wrote: ok.txt" in out and "transcript: " in out
    assert len(list((sessions_dir(ws) / "subagents").glob("*.jsonl"))) == 1
