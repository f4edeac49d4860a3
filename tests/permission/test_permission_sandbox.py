"""The OS sandbox with real bubblewrap, plus Seatbelt profile text and env scrubbing."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reasonix.errors import ConfigError, SandboxUnavailable
from reasonix.permission.sandbox import (
    SandboxSettings,
    backend_status,
    is_credential_var,
    scrub_env,
    wrap_command,
)
from reasonix.permission.sandbox.bwrap import bwrap_argv
from reasonix.permission.sandbox.env import CREDENTIAL_NAMES
from reasonix.permission.sandbox.seatbelt import seatbelt_argv, seatbelt_profile

BWRAP = shutil.which("bwrap")
needs_bwrap = pytest.mark.skipif(
    not sys.platform.startswith("linux") or BWRAP is None,
    reason="MISSING bubblewrap (bwrap); CI installs it (apt-get install bubblewrap)",
)


def _run(
    script: str, settings: SandboxSettings, **extra_env: str
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **extra_env}
    argv, env = wrap_command(["bash", "-c", script], settings, env)
    return subprocess.run(
        argv, env=env, cwd=settings.workspace, capture_output=True, text=True, timeout=30
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "reasonix.toml").write_text("[permissions]\n")
    return ws


def _settings(ws: Path, **kw: object) -> SandboxSettings:
    return SandboxSettings(mode="enforce", workspace=ws, cache_roots=[], **kw)  # type: ignore[arg-type]


@needs_bwrap
def test_backend_is_detected(workspace: Path) -> None:
    assert backend_status(_settings(workspace), dict(os.environ)) == ("bwrap", "")


@needs_bwrap
def test_write_outside_roots_fails_inside_works(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"  # under /tmp: lands in the private tmpfs, not the host
    var_tmp = Path(f"/var/tmp/reasonix-sbx-{os.getpid()}")
    script = f"touch {var_tmp}; echo rc=$?; touch /etc/reasonix-x; echo rc=$?; "
    script += f"touch {outside}; touch in.txt"
    try:
        done = _run(script, _settings(workspace))
        assert done.stdout.splitlines() == ["rc=1", "rc=1"], done.stderr
    finally:
        var_tmp.unlink(missing_ok=True)
    assert done.returncode == 0
    assert (workspace / "in.txt").exists()
    assert not outside.exists()
    assert not Path("/etc/reasonix-x").exists()


@needs_bwrap
def test_write_roots_are_writable(workspace: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    done = _run(f"echo hi > {extra}/f", _settings(workspace, write_roots=[extra]))
    assert done.returncode == 0, done.stderr
    assert (extra / "f").read_text() == "hi\n"


@needs_bwrap
def test_forbid_read_hides_files_and_dirs(workspace: Path) -> None:
    secret = workspace / "secret.env"
    secret.write_text("TOKEN=abc\n")
    keys = workspace / "keys"
    keys.mkdir()
    (keys / "id").write_text("PRIVATE\n")
    done = _run(
        "cat secret.env; ls keys; cat keys/id", _settings(workspace, forbid_read=[secret, keys])
    )
    assert "abc" not in done.stdout and "PRIVATE" not in done.stdout
    assert done.returncode != 0


@needs_bwrap
def test_git_hooks_config_and_project_config_are_read_only(workspace: Path) -> None:
    script = (
        "touch .git/hooks/pre-commit; echo rc=$?; echo x >> .git/config; echo rc=$?; "
        "echo 'allow=[\"Bash\"]' >> reasonix.toml; echo rc=$?; touch .git/other && echo ok"
    )
    done = _run(script, _settings(workspace))
    assert done.stdout.splitlines() == ["rc=1", "rc=1", "rc=1", "ok"], done.stderr
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert (workspace / ".git" / "config").read_text() == "[core]\n"
    assert (workspace / "reasonix.toml").read_text() == "[permissions]\n"


@needs_bwrap
def test_private_tmpdir_and_credentials_stripped(workspace: Path) -> None:
    done = _run(
        'echo "$TMPDIR"; touch "$TMPDIR/x" && echo tmp-ok; '
        'echo "[$GITHUB_TOKEN$OPENAI_API_KEY]"; echo "$KEEP"',
        _settings(workspace),
        GITHUB_TOKEN="ghp_x",
        OPENAI_API_KEY="sk-x",
        KEEP="kept",
    )
    assert done.stdout.splitlines() == ["/tmp", "tmp-ok", "[]", "kept"], done.stderr


@needs_bwrap
def test_network_off_blocks_loopback(workspace: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        probe = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        on = _run(probe, _settings(workspace, network=True))
        assert "connected" in on.stdout, on.stderr
        off = _run(probe, _settings(workspace, network=False))
        assert "connected" not in off.stdout
        assert off.returncode != 0


def test_enforce_without_backend_raises(workspace: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = {"PATH": str(empty)}
    if sys.platform == "darwin":  # pragma: no cover - exercised on macOS only
        pytest.skip("sandbox-exec is at a fixed path on macOS")
    with pytest.raises(SandboxUnavailable, match="refuses to run unsandboxed"):
        wrap_command(["true"], _settings(workspace), env)
    argv, out_env = wrap_command(["true"], SandboxSettings(mode="auto", workspace=workspace), env)
    assert (argv, out_env) == (["true"], env)
    assert backend_status(_settings(workspace), env)[0] == ""


def test_off_is_unchanged_and_bad_mode_is_config_error(workspace: Path) -> None:
    env = {"PATH": "/usr/bin", "GITHUB_TOKEN": "x"}
    assert wrap_command(["ls"], SandboxSettings(mode="off"), env) == (["ls"], env)
    with pytest.raises(ConfigError, match="sandbox mode"):
        wrap_command(["ls"], SandboxSettings(mode="strict"), env)


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("AWS_SECRET_ACCESS_KEY", True),
        ("AWS_PROFILE", True),
        ("GITHUB_TOKEN", True),
        ("DEEPSEEK_API_KEY", True),
        ("npm_token", True),
        ("SSH_AUTH_SOCK", True),
        ("DB_PASSWORD", True),
        ("CLIENT_SECRET_X", True),
        ("PATH", False),
        ("HOME", False),
        ("TOKENIZERS_PARALLELISM", False),
        ("LANG", False),
        ("API_KEY", True),
        ("TOKEN", True),
        ("apikey", True),
        ("MYSQL_PWD", True),
        ("PWD", False),
        ("OLDPWD", False),
    ],
)
def test_credential_names(name: str, secret: bool) -> None:
    assert is_credential_var(name) is secret
    assert (name in scrub_env({name: "v"})) is not secret


# The rule as one regular expression (what is_credential_var replaced with string tests).
_CREDENTIAL_RE = re.compile(
    r"(AWS_|AZURE_|GCP_|GOOGLE_CLOUD_|ALIBABA_CLOUD_|OCI_|DIGITALOCEAN_|CLOUDFLARE_)"
    r".*"
    r"|.*(_TOKEN|_API_KEY|_APIKEY|_ACCESS_KEY|_ACCESS_KEY_ID|_PRIVATE_KEY|_CREDENTIALS"
    r"|_PASSWORD|_PASSWD|_PASS|_AUTH|_COOKIE|_SESSION_KEY|_CLIENT_SECRET)"
    r"|.*SECRET.*|.*PASSWORD.*"
)
_FRAGMENTS = ["AWS_", "aws_", "OCI_", "_TOKEN", "_PASS", "_PASSWD", "SECRET", "Password",
              "_AUTH", "AUTH", "_KEY", "X", "_", "1", "CLOUDFLARE", "_COOKIE", "GCP"]  # fmt: skip


@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=5).map("".join))
def test_credential_rule_is_the_regular_expression_it_replaced(name: str) -> None:
    by_pattern = name.upper() in CREDENTIAL_NAMES or bool(_CREDENTIAL_RE.fullmatch(name.upper()))
    assert is_credential_var(name) is by_pattern


def test_seatbelt_profile_text(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    secret = tmp_path / 'se"cret'
    profile = seatbelt_profile(
        workspace=ws,
        write_roots=[tmp_path / "extra"],
        forbid_read=[secret],
        network=False,
        tmp_dir=tmp_path / "t",
    )
    real_ws = os.path.realpath(ws)
    lines = profile.splitlines()
    assert lines[:2] == ["(version 1)", "(deny default)"]
    assert "(allow file-read*)" in lines
    write_line = next(line for line in lines if line.startswith("(allow file-write* "))
    assert f'(subpath "{real_ws}")' in write_line
    assert f'(subpath "{os.path.realpath(tmp_path / "t")}")' in write_line
    deny_write = next(line for line in lines if line.startswith("(deny file-write* "))
    assert f'(subpath "{real_ws}/.git/hooks")' in deny_write
    assert f'(literal "{real_ws}/.git/config")' in deny_write
    assert f'(literal "{real_ws}/reasonix.toml")' in deny_write
    escaped = os.path.realpath(secret).replace('"', '\\"')
    assert f'(deny file-read* (subpath "{escaped}"))' in lines
    assert "(allow network*)" not in lines
    assert lines.index("(allow file-read*)") < lines.index(
        f'(deny file-read* (subpath "{escaped}"))'
    )
    with_net = seatbelt_profile(
        workspace=ws, write_roots=[], forbid_read=[], network=True, tmp_dir=tmp_path
    )
    assert with_net.splitlines()[-1] == "(allow network*)"
    assert seatbelt_argv(["ls"], "P") == ["/usr/bin/sandbox-exec", "-p", "P", "--", "ls"]


@needs_bwrap
def test_read_only_paths_stay_read_only_inside_roots(workspace: Path, tmp_path: Path) -> None:
    state = tmp_path / "home"
    (state / ".reasonix").mkdir(parents=True)
    settings = _settings(workspace, write_roots=[state], read_only=[state / ".reasonix"])
    done = _run(f"touch {state}/ok && touch {state}/.reasonix/x; echo rc=$?", settings)
    assert done.stdout.splitlines() == ["rc=1"], done.stderr
    assert (state / "ok").exists() and not (state / ".reasonix" / "x").exists()


def _alive_with_arg(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in cmdline:
            pids.append(int(entry.name))
    return pids


@needs_bwrap
def test_background_leftovers_die_with_the_sandbox(workspace: Path) -> None:
    """A command that leaves a background child returns promptly and leaves nothing behind."""
    marker = "317.25"
    done = _run(f"sleep {marker} & echo started", _settings(workspace))
    assert done.returncode == 0 and "started" in done.stdout
    assert _alive_with_arg(marker) == []


@needs_bwrap
def test_git_dir_cannot_be_swapped_for_a_copy_with_hooks(workspace: Path) -> None:
    """QA: renaming .git and planting a hook in a fresh copy must fail."""
    script = (
        "mv .git .git-old; echo rc=$?; mkdir -p .git/hooks && echo 'echo pwned' > "
        ".git/hooks/pre-commit; rm -rf .git; echo rc=$?; touch .git/index && echo ok"
    )
    done = _run(script, _settings(workspace))
    assert done.stdout.splitlines()[0] == "rc=1", done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "ok"
    assert (workspace / ".git" / "config").read_text() == "[core]\n"
    assert not (workspace / ".git-old").exists()
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()


@needs_bwrap
def test_missing_hooks_dir_cannot_be_created(workspace: Path) -> None:
    (workspace / ".git" / "hooks").rmdir()
    done = _run(
        "mkdir -p .git/hooks; echo x > .git/hooks/pre-commit; echo rc=$?", _settings(workspace)
    )
    assert done.stdout.strip().endswith("rc=1"), done.stdout + done.stderr
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()


@needs_bwrap
def test_worktree_git_file_is_read_only(tmp_path: Path) -> None:
    ws = tmp_path / "wt"
    ws.mkdir()
    (ws / ".git").write_text("gitdir: /elsewhere/.git/worktrees/wt\n")
    done = _run("echo 'gitdir: evil' > .git; echo rc=$?; mv .git g; echo rc=$?", _settings(ws))
    assert done.stdout.splitlines() == ["rc=1", "rc=1"], done.stdout + done.stderr
    assert (ws / ".git").read_text() == "gitdir: /elsewhere/.git/worktrees/wt\n"


def test_seatbelt_profile_pins_dot_git(tmp_path: Path) -> None:
    def deny_line() -> str:
        profile = seatbelt_profile(
            workspace=tmp_path, write_roots=[], forbid_read=[], network=False, tmp_dir=tmp_path
        )
        return next(line for line in profile.splitlines() if line.startswith("(deny file-write*"))

    pinned = f'(literal "{os.path.realpath(tmp_path)}/.git")'
    assert pinned not in deny_line()  # `git init` in a fresh directory stays possible
    (tmp_path / ".git").mkdir()
    assert pinned in deny_line()


@needs_bwrap
def test_tools_under_tmp_stay_usable_but_tmp_stays_private(workspace: Path, tmp_path: Path) -> None:
    """A venv on PATH under /tmp is re-bound read-only; the rest of /tmp stays hidden."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "lib").mkdir()
    (venv / "lib" / "marker.txt").write_text("lib-visible\n")
    tool = venv / "bin" / "rx-tool"
    tool.write_text("#!/bin/sh\necho tool-ran\n")
    tool.chmod(0o755)
    secret = tmp_path / "other-secret.txt"
    secret.write_text("hidden\n")
    path = f"{venv / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    done = _run(
        f"rx-tool; cat {venv / 'lib' / 'marker.txt'}; cat {secret} || echo no-secret; "
        f"touch {venv / 'new'} 2>/dev/null || echo venv-read-only",
        _settings(workspace),
        PATH=path,
    )
    lines = done.stdout.splitlines()
    assert lines == ["tool-ran", "lib-visible", "no-secret", "venv-read-only"], done.stderr


def test_a_path_named_twice_is_bound_once(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "rx"  # the Reasonix home: the config home and the state home at once
    home.mkdir()
    argv = bwrap_argv("/usr/bin/bwrap", ["true"], workspace=workspace, write_roots=[],
                      forbid_read=[], network=True, read_only=[home, home])  # fmt: skip
    binds = [argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"]
    assert binds.count(str(home.resolve())) == 1
