"""``permissions`` from Claude Code's settings files (issue 35, item 4).

Every fixture is written here in the shape Claude Code documents for
``settings.json`` (code.claude.com/docs/en/settings, "permissions": allow / ask /
deny / additionalDirectories / defaultMode) and for its rule syntax
(code.claude.com/docs/en/iam: ``Bash(cmd:*)``, ``Read(./.env)``, ``//abs``,
``~/p``, ``/p`` relative to the project, ``WebFetch(domain:…)``, ``mcp__server__tool``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix.boot.permissions import usable_rules
from reasonix.config import load, paths
from reasonix.config.claude_settings import translate_rule
from reasonix.errors import ConfigError
from reasonix.permission import Decision, Policy


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user home of the test's own (``~/.claude/settings.json`` lives there)."""
    user = tmp_path / "user"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    return user


def settings(where: Path, permissions: dict[str, object], name: str = "settings.json") -> Path:
    """Write ``<where>/.claude/<name>`` as Claude Code writes it (indented JSON)."""
    path = where / ".claude" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": permissions}, indent=2) + "\n")
    return path


def policy(cfg: object, ws: Path) -> Policy:
    rules, refused = usable_rules(cfg)  # type: ignore[arg-type]
    assert not refused
    return Policy(cfg.permissions.mode, rules["allow"], rules["ask"], rules["deny"],  # type: ignore[attr-defined]
                  workspace=ws, home=str(Path.home()))  # fmt: skip


def test_rules_of_all_three_files_merge_with_ours_and_say_where(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    user = settings(home, {"allow": ["Bash(ls:*)"], "deny": ["WebFetch"]})
    shared = settings(ws, {"allow": ["Bash(uv run pytest:*)"], "ask": ["Bash(git push:*)"]})
    local = settings(ws, {"deny": ["Read(./.env)"]}, "settings.local.json")
    (ws / "reasonix.toml").write_text('[permissions]\nallow = [\n  "Bash(make:*)",\n]\n')
    cfg = load(ws)
    assert cfg.permissions.allow == ["Bash(ls:*)", "Bash(uv run pytest:*)", "Bash(make:*)"]
    assert cfg.permissions.ask == ["Bash(git push:*)"]
    assert cfg.permissions.deny == ["WebFetch", "Read(./.env)"]
    where = {o.rule: o.where() for o in cfg.permission_rules}
    assert where == {
        "Bash(ls:*)": f"{user}:4",
        "WebFetch": f"{user}:7",
        "Bash(uv run pytest:*)": f"{shared}:4",
        "Bash(git push:*)": f"{shared}:7",
        "Read(./.env)": f"{local}:4",
        "Bash(make:*)": f"{ws / 'reasonix.toml'}:3",
    }
    p = policy(cfg, ws)
    assert p.decide("bash", False, {"command": "uv run pytest -q"}) is Decision.ALLOW
    assert p.decide("bash", False, {"command": "git push origin"}) is Decision.ASK
    assert p.decide("web_fetch", True, {"url": "https://example.com"}) is Decision.DENY
    assert p.decide("read_file", True, {"path": ".env"}) is Decision.DENY


def test_deny_beats_ask_beats_allow_whatever_file_holds_them(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    settings(home, {"deny": ["Bash(rm:*)"]})  # the user's deny ...
    settings(ws, {"allow": ["Bash(rm:*)", "Bash(git:*)"]}, "settings.local.json")  # ... local allow
    settings(ws, {"ask": ["Bash(git commit:*)"]})
    p = policy(load(ws), ws)
    assert p.decide("bash", False, {"command": "rm -rf build"}) is Decision.DENY
    assert p.decide("bash", False, {"command": "git commit -m x"}) is Decision.ASK
    assert p.decide("bash", False, {"command": "git status"}) is Decision.ALLOW


def test_default_mode_local_over_project_over_user_and_ours_over_all(
    tmp_path: Path, home: Path
) -> None:
    ws = tmp_path / "ws"
    settings(home, {"defaultMode": "plan"})
    assert load(ws).permissions.mode == "plan"
    shared = settings(ws, {"defaultMode": "acceptEdits"})
    cfg = load(ws)
    assert (cfg.permissions.mode, cfg.sources["permissions.mode"]) == ("acceptEdits", str(shared))
    local = settings(ws, {"defaultMode": "default"}, "settings.local.json")
    cfg = load(ws)
    assert (cfg.permissions.mode, cfg.sources["permissions.mode"]) == ("ask", str(local))
    (ws / "reasonix.toml").write_text('[permissions]\nmode = "dontAsk"\n')
    assert load(ws).permissions.mode == "dontAsk"
    # <home>/config.toml is above ~/.claude/settings.json, below the workspace's files
    (ws / "reasonix.toml").unlink()
    (ws / ".claude" / "settings.json").unlink()
    (ws / ".claude" / "settings.local.json").unlink()
    paths.user_config_path().write_text('[permissions]\nmode = "auto"\n')
    assert load(ws).permissions.mode == "auto"


def test_claude_path_forms_mean_what_they_mean_in_claude(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    assert translate_rule("Read(//etc/shadow)", ws) == "Read(/etc/shadow)"
    assert translate_rule("Edit(/src/**)", ws) == f"Edit({ws.as_posix()}/src/**)"
    assert translate_rule("Read(~/.ssh/**)", ws) == "Read(~/.ssh/**)"
    assert translate_rule("Read(./.env)", ws) == "Read(./.env)"
    assert translate_rule("Bash(cat /etc/x)", ws) == "Bash(cat /etc/x)"  # not a path rule
    settings(
        ws,
        {
            "allow": ["Edit(/src/**)", "MultiEdit(/docs/**)"],
            "deny": ["Read(//etc/shadow)", "Read(~/.ssh/**)", "Edit(./secrets/**)"],
        },
    )
    cfg = load(ws)
    p = Policy("ask", cfg.permissions.allow, cfg.permissions.ask, cfg.permissions.deny,
               workspace=ws, home=str(home))  # fmt: skip
    # `/src/**` is the project's src, not /src on the disk
    assert p.decide("edit_file", False, {"path": "src/app.py"}) is Decision.ALLOW
    assert p.decide("edit_file", False, {"path": "/src/app.py"}) is Decision.ASK
    assert p.decide("multi_edit", False, {"path": "docs/a.md"}) is Decision.ALLOW
    assert p.decide("edit_file", False, {"path": "docs/a.md"}) is Decision.ASK  # MultiEdit only
    # `//etc/shadow` is the absolute path; `~/` the home; `./` the workspace
    assert p.decide("read_file", True, {"path": "/etc/shadow"}) is Decision.DENY
    assert p.decide("read_file", True, {"path": f"{home}/.ssh/id_ed25519"}) is Decision.DENY
    assert p.decide("edit_file", False, {"path": "secrets/k"}) is Decision.DENY
    written = {o.rule: o.written for o in cfg.permission_rules}
    assert written["Read(/etc/shadow)"] == "Read(//etc/shadow)"
    assert written["Read(~/.ssh/**)"] == ""  # unchanged: no second spelling to show


def test_untrusted_workspace_keeps_deny_and_ask_and_names_what_it_left_out(
    tmp_path: Path, home: Path, untrusted: None
) -> None:
    ws, extra = tmp_path / "ws", tmp_path / "shared-lib"
    extra.mkdir()
    settings(home, {"allow": ["Bash(ls:*)"]})  # the user's own file: always in force
    shared = settings(
        ws,
        {
            "allow": ["Bash(uv run pytest:*)"],
            "deny": ["WebFetch"],
            "ask": ["Bash(git push:*)"],
            "defaultMode": "bypassPermissions",
            "additionalDirectories": ["../shared-lib"],
        },
    )
    cfg = load(ws)
    assert cfg.permissions.allow == ["Bash(ls:*)"]
    assert (cfg.permissions.deny, cfg.permissions.ask) == (["WebFetch"], ["Bash(git push:*)"])
    assert cfg.permissions.mode == "ask"
    assert str(extra) not in cfg.sandbox.allow_write
    items = [(i.kind, i.text, i.file) for i in cfg.trust.skipped]
    assert ("permissions", "permissions.defaultMode = 'bypassPermissions'", str(shared)) in items
    assert any(t.startswith("permissions.allow = ['Bash(uv run pytest:*)']") for _, t, _ in items)
    assert any("permissions.additionalDirectories" in t and str(extra) in t for _, t, _ in items)
    assert any("untrusted workspace: skipped permissions.allow" in w for w in cfg.warnings)
    left = {o.rule: o.skipped for o in cfg.permission_rules}
    assert left == {
        "Bash(ls:*)": "",
        "Bash(uv run pytest:*)": "untrusted workspace",
        "WebFetch": "",
        "Bash(git push:*)": "",
    }


def test_trusted_workspace_gets_its_directories_and_mode(tmp_path: Path, home: Path) -> None:
    ws, extra = tmp_path / "ws", tmp_path / "shared-lib"
    extra.mkdir()
    settings(ws, {"additionalDirectories": ["../shared-lib", "~/nowhere"],
                  "defaultMode": "acceptEdits"})  # fmt: skip
    cfg = load(ws)
    assert str(extra) in cfg.sandbox.allow_write
    assert cfg.permissions.mode == "acceptEdits"
    assert any("'~/nowhere' is not a directory" in w for w in cfg.warnings)
    assert cfg.trust.skipped == []


def test_a_bad_value_is_a_warning_and_the_rest_applies(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    path = settings(ws, {"allow": "Bash", "deny": ["WebFetch", 3], "defaultMode": "turbo"})
    cfg = load(ws)
    assert cfg.permissions.deny == ["WebFetch"] and cfg.permissions.allow == []
    assert cfg.permissions.mode == "ask"
    text = "\n".join(cfg.warnings)
    assert f"{path}: permissions.allow is not a list" in text
    assert f"{path}: permissions.deny: 3 is not" in text
    assert f"{path}: permissions.defaultMode 'turbo' is not one of" in text
    path.write_text("{ not json")
    with pytest.raises(ConfigError) as info:
        load(ws)
    assert str(path) in str(info.value)


def test_a_rule_our_grammar_refuses_is_left_out_with_a_notice(tmp_path: Path, home: Path) -> None:
    from reasonix.boot.permissions import build_gate

    ws = tmp_path / "ws"
    path = settings(ws, {"allow": ["mcp__github__get_*", "Bash(npm test:*)"]})
    cfg = load(ws)
    notices: list[str] = []
    gate = build_gate(cfg, [], None, ws, notices)
    assert [r.text for r in gate.policy.allow] == ["Bash(npm test:*)"]
    assert len(notices) == 1 and notices[0].startswith(f"{path}:4: permissions.allow rule")
    assert "'mcp__github__get_*' skipped" in notices[0]
    # the same rule in our own file stays an error that names the file
    (ws / "reasonix.toml").write_text('[permissions]\nallow = ["mcp__github__get_*"]\n')
    with pytest.raises(ConfigError) as info:
        build_gate(load(ws), [], None, ws, [])
    assert "reasonix.toml" in str(info.value)


def test_the_agent_cannot_edit_the_settings_files_unasked(tmp_path: Path) -> None:
    p = Policy("bypassPermissions", workspace=tmp_path)
    for name in ("settings.json", "settings.local.json"):
        path = {"path": f".claude/{name}"}
        assert Policy("auto", ["Edit"], workspace=tmp_path).decide("edit_file", False, path) is (
            Decision.ASK
        )
    assert p.decide("read_file", True, {"path": ".claude/settings.json"}) is Decision.ALLOW
