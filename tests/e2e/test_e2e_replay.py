"""``reasonix replay`` on the built .pyz: a recorded read → edit → test task replays
cleanly, and a new deny rule shows up as a divergence at the test step."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from e2e_task_env import clean_env, write_project
from fakes import FakeServer, ToolSpec, Turn


def _rx(pyz: Path, ws: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(pyz), *args], cwd=ws, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


@pytest.mark.e2e
def test_replay_reports_no_divergence_then_the_new_deny_rule(pyz: Path, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    env = clean_env(tmp_path, source_tree=False)
    edit = json.dumps({"path": "calc.py", "old_string": "a - b", "new_string": "a + b"})
    test = json.dumps({"command": "python3 test_calc.py"})
    script = [
        Turn.tools([ToolSpec("read_file", '{"path": "calc.py"}')]),
        Turn.tools([ToolSpec("edit_file", edit)]),
        Turn.tools([ToolSpec("bash", test)]),
        Turn.text_only("Fixed add(); the test passes."),
    ]
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
        (ws / "test_calc.py").write_text(
            "from calc import add\nassert add(2, 3) == 5, add(2, 3)\nprint('ok in 0.01s')\n"
        )
        done = _rx(pyz, ws, env, "run", "--yolo", "--json", "fix add")
        assert done.returncode == 0, done.stderr
        session = json.loads(done.stdout)["session_id"]
        requests = len(srv.requests)
    assert (ws / "calc.py").read_text().endswith("a + b\n")

    clean = _rx(pyz, ws, env, "replay", session, "--json")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    report = json.loads(clean.stdout)
    assert report["divergences"] == [] and report["tool_calls"] == 3
    assert len(srv.requests) == requests  # no network: every reply came from the recording
    assert (ws / "calc.py").read_text().endswith("a + b\n")  # the real workspace is untouched

    toml = (ws / "reasonix.toml").read_text()
    (ws / "reasonix.toml").write_text(toml + '\n[permissions]\ndeny = ["Bash(python3:*)"]\n')
    changed = _rx(pyz, ws, env, "replay", session)
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "bash: denied" in changed.stdout and "python3" in changed.stdout
    assert "1 divergence(s)" in changed.stdout


def _tree(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every entry under ``root``: its mode and content (a link: its target)."""
    out: dict[str, tuple[int, bytes]] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        if path.is_symlink():
            data = str(path.readlink()).encode()
        elif path.is_file():
            data = path.read_bytes()
        else:
            data = b""
        out[str(path.relative_to(root))] = (st.st_mode, data)
    return out


@pytest.mark.e2e
def test_replay_moves_absolute_paths_to_its_copy_and_never_touches_the_workspace(
    pyz: Path, tmp_path: Path
) -> None:
    """What models send: absolute paths, and ``cd /the/workspace`` in bash. The replay runs
    them in its copy; the real workspace (writable to the run through ``allow_write``, so
    only the replay's own fence keeps it safe) stays byte-identical, even when its files
    are back at what the recorded edit expects."""
    ws = tmp_path / "repo"
    env = clean_env(tmp_path, source_tree=False)
    calc, test = ws / "calc.py", ws / "test_calc.py"
    edit = json.dumps({"path": str(calc), "old_string": "a - b", "new_string": "a + b"})
    script = [
        Turn.tools([ToolSpec("read_file", json.dumps({"path": str(calc)}))]),
        Turn.tools([ToolSpec("edit_file", edit)]),
        Turn.tools([ToolSpec("bash", json.dumps({"command": f"cd {ws} && python3 {test}"}))]),
        Turn.text_only("Fixed add(); the test passes."),
    ]
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        with (ws / "reasonix.toml").open("a") as fh:
            fh.write(f"\n[sandbox]\nallow_write = [{json.dumps(str(tmp_path))}]\n")
        calc.write_text("def add(a, b):\n    return a - b\n")
        test.write_text(
            "from calc import add\nassert add(2, 3) == 5, add(2, 3)\nprint('ok in 0.01s')\n"
        )
        done = _rx(pyz, ws, env, "run", "--yolo", "--json", "fix add")
        assert done.returncode == 0, done.stderr
        session = json.loads(done.stdout)["session_id"]
    assert calc.read_text().endswith("a + b\n")
    calc.write_text("def add(a, b):\n    return a - b\n")  # the user put the bug back by hand
    before = _tree(ws)

    clean = _rx(pyz, ws, env, "replay", session, "--json")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    report = json.loads(clean.stdout)
    assert report["divergences"] == [] and report["tool_calls"] == 3
    assert _tree(ws) == before  # not one byte of the real workspace changed

    # The test prints something else today: the divergence shows the two results' diff.
    test.write_text(test.read_text().replace("print('ok", "print('fine"))
    before = _tree(ws)
    changed = _rx(pyz, ws, env, "replay", session, "--json")
    assert changed.returncode == 1, changed.stdout + changed.stderr
    (d,) = json.loads(changed.stdout)["divergences"]
    assert (d["kind"], d["tool"]) == ("result", "bash")
    assert d["diff"] == ["-ok in 0s", "+fine in 0s"]
    text = _rx(pyz, ws, env, "replay", session)
    assert "turn 1 bash: result:" in text.stdout and "      +fine in 0s" in text.stdout
    assert _tree(ws) == before


@pytest.mark.e2e
def test_a_new_deny_rule_is_a_divergence_naming_the_tool_and_the_rule(
    pyz: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "repo"
    env = clean_env(tmp_path, source_tree=False)
    script = [
        Turn.tools([ToolSpec("bash", json.dumps({"command": f"cd {ws} && python3 hello.py"}))]),
        Turn.text_only("It says hello."),
    ]
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        (ws / "hello.py").write_text("print('hello')\n")
        done = _rx(pyz, ws, env, "run", "--yolo", "--json", "run hello")
        assert done.returncode == 0, done.stderr
        session = json.loads(done.stdout)["session_id"]
    assert _rx(pyz, ws, env, "replay", session).returncode == 0

    with (ws / "reasonix.toml").open("a") as fh:
        fh.write('\n[permissions]\ndeny = ["Bash(python3:*)"]\n')
    changed = _rx(pyz, ws, env, "replay", session, "--json")
    assert changed.returncode == 1, changed.stdout + changed.stderr
    (d,) = json.loads(changed.stdout)["divergences"]
    assert (d["kind"], d["tool"], d["rule"]) == ("denied", "bash", "Bash(python3:*)")
    assert "refused now" in d["detail"]


@pytest.mark.e2e
def test_a_path_the_rewrite_cannot_see_still_cannot_reach_the_workspace(
    pyz: Path, tmp_path: Path
) -> None:
    """A link to the workspace from outside it is not the workspace's spelling, so the call
    keeps it; the replay's fence (no writable root covers the workspace) refuses the write,
    which is a divergence, not a change to the user's files."""
    ws = tmp_path / "repo"
    link = tmp_path / "link"
    env = clean_env(tmp_path, source_tree=False)
    edit = json.dumps({"path": str(link / "notes.txt"), "old_string": "old", "new_string": "new"})
    script = [Turn.tools([ToolSpec("edit_file", edit)]), Turn.text_only("Done.")]
    with FakeServer("openai", script) as srv:
        write_project(ws, srv.url)
        with (ws / "reasonix.toml").open("a") as fh:
            fh.write(f"\n[sandbox]\nallow_write = [{json.dumps(str(tmp_path))}]\n")
        link.symlink_to(ws)
        (ws / "notes.txt").write_text("old\n")
        done = _rx(pyz, ws, env, "run", "--yolo", "--json", "update the notes")
        assert done.returncode == 0, done.stderr
        session = json.loads(done.stdout)["session_id"]
    assert (ws / "notes.txt").read_text() == "new\n"
    (ws / "notes.txt").write_text("old\n")
    before = _tree(ws)
    out = _rx(pyz, ws, env, "replay", session, "--json")
    assert out.returncode == 1, out.stdout + out.stderr
    (d,) = json.loads(out.stdout)["divergences"]
    assert d["tool"] == "edit_file" and "not allowed" in "\n".join(d["diff"])
    assert _tree(ws) == before
