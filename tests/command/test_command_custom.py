"""Custom command files: frontmatter, D24 expansion, namespaces, precedence, bad files.

Real files in temporary directories (a FIFO, a dangling symlink, binary and
oversized files among them); the registry runs over a real runtime.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes import FakeServer

from reasonix.boot import Runtime, RuntimeOptions, build_runtime
from reasonix.boot.commands import build_commands
from reasonix.command.custom import (
    MAX_FILE_BYTES,
    CommandDir,
    FrontmatterError,
    expand,
    load,
    parse,
)
from reasonix.command.registry import plain_text

# -- frontmatter -------------------------------------------------------------------

PARSE_CASES = [
    ("no frontmatter", "Just a body.\n", {}, "Just a body.\n"),
    (
        "simple keys",
        "---\ndescription: Review code\nargument-hint: <file>\n---\nBody $1\n",
        {"description": "Review code", "argument-hint": "<file>"},
        "Body $1\n",
    ),
    (
        "quotes, comments, blank lines, upper-case keys",
        "---\n# a comment\n\nDescription: \"Quoted: yes\"\nmodel: 'haiku'\n---\n\nB\n",
        {"description": "Quoted: yes", "model": "haiku"},
        "B\n",
    ),
    (
        "CRLF and a BOM",
        "\ufeff---\r\ndescription: Windows\r\n---\r\nBody\r\n",
        {"description": "Windows"},
        "Body\r\n",
    ),
    (
        "Claude Code list and folded text",
        "---\nallowed-tools:\n  - Read\n  - Bash(git:*)\ndescription: >\n  two\n  lines\n---\nX",
        {"allowed-tools": "Read, Bash(git:*)", "description": "two lines"},
        "X",
    ),
    ("a dashes line later is body", "Body\n---\nmore\n", {}, "Body\n---\nmore\n"),
]


@pytest.mark.parametrize(
    ("case", "text", "meta", "body"), PARSE_CASES, ids=[c[0] for c in PARSE_CASES]
)
def test_parse(case: str, text: str, meta: dict[str, str], body: str) -> None:
    assert parse(text) == (meta, body)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("---\ndescription: never closed\nBody\n", "no closing"),
        ("---\nthis is not a key value line\n---\nBody\n", "line 2"),
        ("---\n  indented first\n---\nBody\n", "continuation"),
    ],
)
def test_broken_frontmatter(text: str, reason: str) -> None:
    with pytest.raises(FrontmatterError, match=reason):
        parse(text)


# -- expansion (CMD-4, D24) ------------------------------------------------------------

EXPAND_CASES = [
    ("$1-$2-$3 [$ARGUMENTS] $$1", "a b", "a-b- [a b] $1"),  # the CMD-4 check
    ("$$ARGUMENTS and $$$1", "x", "$ARGUMENTS and $x"),
    ("[$1] [$2]", '"two words" three', "[two words] [three]"),  # shell quoting (D24)
    ("[$ARGUMENTS]", '  "keep" the   text ', '["keep" the   text]'),  # the text, not the words
    ("[$1] [$2]", "don't stop", "[don't] [stop]"),  # unbalanced quote: whitespace split
    ("$10|$2", "a b c d e f g h i j", "j|b"),
    ("$0 stays", "a", "$0 stays\n\nARGUMENTS: a"),  # $0 is no placeholder
    ("cost: 5$ each", "", "cost: 5$ each"),
    ("Summarise the diff.", "", "Summarise the diff."),
    ("Summarise the diff.\n", "only tests", "Summarise the diff.\n\nARGUMENTS: only tests"),
    ("Use $1 please", "", "Use  please"),
]


@pytest.mark.parametrize(("body", "args", "want"), EXPAND_CASES)
def test_expand(body: str, args: str, want: str) -> None:
    assert expand(body, args) == want


# -- loading real directories ---------------------------------------------------------


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_names_namespaces_and_first_directory_wins(tmp_path: Path) -> None:
    project, user = tmp_path / "p", tmp_path / "u"
    write(project / "review.md", "---\ndescription: project review\n---\nReview $1")
    write(project / "git" / "commit.md", "# Commit the staged work\n\nWrite a message.")
    write(project / "a" / "b" / "deep.md", "deep")
    write(user / "review.md", "---\ndescription: user review\n---\nUser review")
    write(user / "only-mine.md", "mine")
    write(project / "notes.txt", "not a command")
    write(project / ".hidden.md", "hidden")
    write(project / ".drafts" / "x.md", "hidden dir")
    loaded = load(CommandDir(project, "project"), CommandDir(user, "user"), tmp_path / "absent")
    assert loaded.notices == []
    by_name = {c.name: c for c in loaded.commands}
    assert sorted(by_name) == ["a:b:deep", "git:commit", "only-mine", "review"]
    assert (
        by_name["review"].description == "project review" and by_name["review"].scope == "project"
    )
    assert by_name["only-mine"].scope == "user"
    assert by_name["git:commit"].description == "Commit the staged work"  # the first line
    assert by_name["git:commit"].source == str(project / "git" / "commit.md")


def test_bad_files_are_skipped_with_a_notice_and_good_ones_load(tmp_path: Path) -> None:
    d = tmp_path / "cmds"
    write(d / "good.md", "---\ndescription: fine\n---\nGood $ARGUMENTS")
    write(d / "huge.md", "x" * (MAX_FILE_BYTES + 1))
    write(d / "binary.md", b"PNG\x00\x01\x02")
    write(d / "latin1.md", "caf\xe9".encode("latin-1"))
    write(d / "broken.md", "---\ndescription: open fence\nBody")
    write(d / "empty.md", "---\ndescription: nothing below\n---\n\n")
    write(d / "my file.md", "spaces are not allowed in names")
    os.mkfifo(d / "pipe.md")  # opening it would block forever
    (d / "dangling.md").symlink_to(d / "missing-target.md")
    if os.geteuid() != 0:  # root reads mode-000 files, so only a normal user can test this
        write(d / "secret.md", "unreadable").chmod(0)
    loaded = load(CommandDir(d))
    assert [c.name for c in loaded.commands] == ["good"]
    text = "\n".join(loaded.notices)
    for name, why in [
        ("huge.md", "too large"),
        ("binary.md", "binary"),
        ("latin1.md", "not UTF-8"),
        ("broken.md", "bad frontmatter"),
        ("empty.md", "no body"),
        ("my file.md", "not a command name"),
        ("pipe.md", "not a regular file"),
        ("dangling.md", "cannot read"),
    ]:
        assert any(name in n and why in n for n in loaded.notices), (name, text)
    assert all(n.endswith("skipped") for n in loaded.notices)


def test_a_symlink_loop_and_a_file_in_place_of_the_directory(tmp_path: Path) -> None:
    d = tmp_path / "cmds"
    write(d / "ok.md", "ok")
    (d / "loop").symlink_to(d)
    not_dir = write(tmp_path / "file-not-dir", "x")
    loaded = load(CommandDir(d), CommandDir(not_dir))
    assert "ok" in [c.name for c in loaded.commands]
    assert any("not a directory" in n for n in loaded.notices)


# -- the registry over a real runtime ---------------------------------------------------


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Runtime]:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake")
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeServer("openai", []) as srv:
        (ws / "reasonix.toml").write_text(
            'default_model = "fake/m"\n[[providers]]\nname = "fake"\nkind = "openai"\n'
            f'base_url = "{srv.url}"\nmodels = ["m"]\napi_key_env = "FAKE_PROVIDER_KEY"\n'
        )
        rt = build_runtime(RuntimeOptions(workspace=ws, interactive=True))
        try:
            yield rt
        finally:
            rt.close()
            assert srv.requests == []  # no command ever asked the model


def test_precedence_collisions_and_completion(runtime: Runtime, tmp_path: Path) -> None:
    from reasonix.config.paths import home_dir

    ws = runtime.workspace
    write(ws / ".reasonix" / "commands" / "review.md", "---\nargument-hint: <file>\n---\nR $1")
    write(ws / ".claude" / "commands" / "review.md", "claude project review")
    write(ws / ".claude" / "commands" / "cc-only.md", "from claude code")
    write(home_dir() / "commands" / "review.md", "home review")
    write(home_dir() / "commands" / "git" / "commit.md", "---\ndescription: commit\n---\nCommit")
    write(tmp_path / "userhome" / ".claude" / "commands" / "mine.md", "claude user command")
    write(ws / ".reasonix" / "commands" / "help.md", "shadowing a built-in")
    write(ws / ".reasonix" / "commands" / "mcp__x__y.md", "pretending to be a prompt")
    reg = build_commands(runtime)
    assert reg.run("/review main.py").prompt == "R main.py"  # project .reasonix wins
    assert reg.run("/cc-only").prompt == "from claude code"
    assert reg.run("/git:commit").prompt == "Commit"
    assert reg.run("/mine").prompt == "claude user command"
    assert "shadowing" not in (reg.run("/help").text or "")
    assert any("help.md" in n and "built-in" in n for n in reg.notices)
    assert any("mcp__x__y.md" in n for n in reg.notices)
    described = dict(reg.names())
    # a sub-folder command is /commit with its folder as a label; /git:commit is an alias
    assert described["/commit"] == "commit (git)" and "/review" in described
    assert "/git:commit" not in described and reg.run("/commit").prompt == "Commit"
    review = reg.get("review")
    assert review is not None and review.argument_hint == "<file>" and review.kind == "project"
    assert reg.complete("/rev")[0].description.startswith("<file>")
    assert [(c.text, c.description) for c in reg.complete("/comm")] == [("/commit", "commit (git)")]
    assert [(c.text, c.description) for c in reg.complete("/git:")] == [("/git:commit", "commit")]
    assert [c.text for c in reg.complete("/effort h")] == ["/effort high"]
    assert [c.text for c in reg.complete("/memory se")] == ["/memory search"]
    help_text = reg.run("/help").text
    assert help_text.index("project commands:") < help_text.index("your commands:")
    assert "/commit" in reg.run("/help commit").text


def test_line_classification_and_files_added_later(runtime: Runtime) -> None:
    reg = build_commands(runtime)
    assert reg.is_command("/help") and reg.is_command("  /status") and reg.is_command("/")
    assert not reg.is_command("//etc is a slash") and not reg.is_command("hello /help")
    assert not reg.is_command("/usr/bin/env is broken")  # a path someone typed
    assert plain_text("//etc is a slash") == "/etc is a slash" and plain_text("hi") == "hi"
    assert reg.run("/later").error
    write(runtime.workspace / ".reasonix" / "commands" / "later.md", "added after start")
    assert reg.run("/later").prompt == "added after start"  # an unknown name re-reads the files
    write(runtime.workspace / ".reasonix" / "commands" / "later.md", "edited since")
    assert reg.run("/later").prompt == "edited since"  # a file edited mid-session: its new text
