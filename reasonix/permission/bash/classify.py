"""Classification: builders → segments, plus what specific commands run indirectly.

The tables below name shells, interpreters with inline-code flags, wrappers
that run another command (their wrapped command becomes its own segment) and
tool options that execute commands (git, go, tar, ssh …).
"""

from __future__ import annotations

import posixpath
import re

from reasonix.lazy import Pattern
from reasonix.permission.bash.lexer import (
    ASSIGN_RE,
    MAX_DEPTH,
    Builder,
    Parser,
    Unparseable,
    Word,
)
from reasonix.permission.bash.model import Kind, Segment

__all__ = ["segments_of"]

_STATE_BUILTINS = frozenset(
    {"export", "declare", "typeset", "local", "readonly", "alias", "hash", "enable", "shopt"}
    | {"let", "unset", "ulimit"}
)


def segments_of(command: str, depth: int, via: str) -> list[Segment]:
    """Parse ``command`` into classified segments; errors become one NESTED segment."""
    try:
        p = Parser(command, depth)
        p.parse_all()
        builders = p.builders + p.extra
    except (Unparseable, RecursionError, IndexError, ValueError) as exc:
        reason = str(exc) or "too deeply nested"
        return [Segment((command,), command, Kind.NESTED, (f"unparseable: {reason}",), via)]
    out: list[Segment] = []
    try:
        for b in builders:
            if via and not b.via:
                b.via = via
            out.extend(_finish(b, depth))
    except RecursionError:
        return [Segment((command,), command, Kind.NESTED, ("unparseable: too deeply nested",), via)]
    return out


def _finish(b: Builder, depth: int) -> list[Segment]:
    words = b.words
    k = 0
    while k < len(words) and ASSIGN_RE.match(words[k].unquoted):
        w = words[k]
        b.flag(Kind.NESTED if w.nested else Kind.DYNAMIC, f"assignment {w.source!r}")
        k += 1
    cmd = words[k:]
    for w in cmd:
        if w.nested:
            b.flag(Kind.NESTED, f"command substitution in {w.source!r}")
        elif w.dynamic:
            b.flag(Kind.DYNAMIC, f"expansion in {w.source!r}")
        elif w.glob:
            b.flag(Kind.DYNAMIC, f"glob in {w.source!r}")
    inner: list[Segment] = []
    if cmd:
        name = cmd[0]
        if name.dynamic or name.glob or name.nested:
            b.flag(Kind.NESTED, f"dynamic command name {name.source!r}")
        elif not name.value.isascii() or not name.value.isprintable():
            b.flag(Kind.DYNAMIC, f"non-ASCII or non-printable command name {name.value!r}")
        else:
            if name.quoted:
                # `'g''it' status`, `\rm`, `$'\x72m'`: quoting the name hides it from a
                # reader (and bypasses aliases/functions), so prefix rules do not reuse it.
                b.flag(Kind.DYNAMIC, f"quoted command name {name.source!r}")
            inner = _inspect(b, cmd, depth)
    source = b.src
    kind = max((kd for kd, _ in b.reasons), default=Kind.STATIC)
    argv = tuple(w.value if not (w.dynamic or w.nested) else w.source for w in cmd)
    seg = Segment(argv, source, kind, tuple(r for _, r in b.reasons), b.via)
    return [seg, *inner]


def _wrapped(b: Builder, words: list[Word], wrapper: str, depth: int) -> list[Segment]:
    """Emit the command a wrapper runs as its own segment (so deny rules see it)."""
    if not words and wrapper != "xargs":
        return []  # `exec 2>&1`, bare `env`/`nohup`: nothing is run indirectly
    b.flag(Kind.NESTED, f"'{wrapper}' runs another command")
    if not words:
        return []
    if depth >= MAX_DEPTH:
        # `timeout 1 timeout 1 …`, `find -exec find -exec …`: stop before Python's stack does.
        b.flag(Kind.NESTED, "unparseable: wrappers nested too deeply")
        return []
    inner = Builder(words=list(words), via=wrapper, src=" ".join(w.source for w in words))
    return _finish(inner, depth + 1)


def _parse_string(b: Builder, word: Word | None, via: str, depth: int) -> list[Segment]:
    """A static command string (``sh -c '…'``, ``eval …``) is parsed for its segments too."""
    if word is None or word.dynamic or word.nested or depth > MAX_DEPTH:
        return []
    return segments_of(word.value, depth + 1, via)


_SHELLS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh", "rbash"}
)
_WIN_SHELLS = frozenset({"pwsh", "powershell", "pwsh.exe", "powershell.exe", "cmd", "cmd.exe"})
_INTERPRETERS = frozenset(
    {"python", "pypy", "ruby", "perl", "php", "lua", "luajit", "node", "nodejs", "julia"}
)
# Flags whose next argument is inline code, per interpreter family.
_INLINE_FLAGS: dict[str, frozenset[str]] = {
    "python": frozenset({"-c"}),
    "pypy": frozenset({"-c"}),
    "ruby": frozenset({"-e"}),
    "perl": frozenset({"-e", "-E"}),
    "php": frozenset({"-r", "-R", "-B", "-E", "-F"}),
    "lua": frozenset({"-e"}),
    "luajit": frozenset({"-e"}),
    "node": frozenset({"-e", "--eval", "-p", "--print", "-pe"}),
    "nodejs": frozenset({"-e", "--eval", "-p", "--print", "-pe"}),
    "julia": frozenset({"-e", "--eval", "-E", "--print"}),
    "deno": frozenset({"eval"}),
    "bun": frozenset({"-e", "--eval", "-p", "--print"}),
    "osascript": frozenset({"-e"}),
    "rscript": frozenset({"-e"}),
}
_INFO_FLAGS = frozenset({"--version", "-V", "-v", "--help", "-h", "-version"})
# wrapper -> (options that take a value, positional arguments before the command)
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "env": (frozenset({"-u", "--unset", "-C", "--chdir"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "nohup": (frozenset(), 0),
    "setsid": (frozenset(), 0),
    "time": (frozenset({"-o", "-f", "--output", "--format"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "sudo": (
        frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"})
        | frozenset({"--user", "--group", "--chdir", "--prompt", "--role", "--type", "--host"})
        | frozenset({"--other-user", "--close-from", "--command-timeout"}),
        0,
    ),
    "doas": (frozenset({"-u", "-C"}), 0),
    "xargs": (
        frozenset({"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file"})
        | frozenset({"--delimiter", "--eof", "--replace", "--max-lines", "--max-args"})
        | frozenset({"--max-procs", "--max-chars", "--process-slot-var"}),
        0,
    ),
    "watch": (frozenset({"-n", "--interval", "-q", "--equexit"}), 0),
    "flock": (frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}), 1),
    "chroot": (frozenset({"--userspec", "--groups"}), 1),
    "unshare": (frozenset({"-S", "-G", "--setuid", "--setgid", "-R", "-w"}), 0),
    "taskset": (frozenset(), 1),
    "ionice": (frozenset({"-c", "-n", "-p", "--class", "--classdata"}), 0),
    "chrt": (frozenset(), 1),
    "strace": (frozenset({"-e", "-o", "-p", "-s", "-u", "-E", "-I", "-b", "-a", "-X", "-P"}), 0),
    "ltrace": (frozenset({"-e", "-o", "-p", "-s", "-u", "-n", "-a"}), 0),
    "runuser": (frozenset({"-u", "-g", "-G", "--user", "--group"}), 0),
    "caffeinate": (frozenset({"-t", "-w"}), 0),
    "firejail": (frozenset(), 0),
    "proxychains": (frozenset({"-f"}), 0),
    "proxychains4": (frozenset({"-f"}), 0),
    "torsocks": (frozenset(), 0),
    "parallel": (frozenset({"-j", "--jobs", "-S", "--sshlogin"}), 0),
    "busybox": (frozenset(), 0),
    "systemd-run": (frozenset({"-u", "--unit", "-p", "--property"}), 0),
    "xvfb-run": (frozenset({"-n", "-s", "-f", "-e"}), 0),
    "dbus-run-session": (frozenset(), 0),
}
_GIT_GLOBAL_VALUE = frozenset({"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix"})
_GIT_NESTED_OPTS = (
    "--upload-pack",
    "--receive-pack",
    "--exec",
    "--open-files-in-pager",
    "--ext-diff",
    "--extcmd",
    "--config-env",
    "--to-command",
)
_GIT_RUNNERS = {("submodule", "foreach"), ("bisect", "run")}
_GIT_CONFIG_RE = Pattern(
    r"(core\.(pager|editor|sshcommand|fsmonitor|hookspath|gitproxy|askpass)"
    r"|sequence\.editor|diff\.external|gpg\..*program|alias\..*|pager\..*"
    r"|(diff|merge|filter|credential|remote)\..*\.(command|textconv|driver|clean|smudge|process"
    r"|helper|uploadpack|receivepack|proxy)|credential\.helper|include.*|.*\.(cmd|program))",
    re.IGNORECASE,
)


# Options of ordinary tools that make them run an arbitrary command.
_RUNNER_OPTS: dict[str, tuple[str, ...]] = {
    "go": ("-exec", "-toolexec", "-vettool", "--exec", "--toolexec", "--vettool"),
    "cargo": ("--config", "-Zhost-config", "--target-runner"),
    "npm": ("--script-shell",),
    "pnpm": ("--script-shell",),
    "yarn": ("--script-shell",),
    "make": ("SHELL=", ".SHELLFLAGS="),
    "man": ("-P", "--pager", "-H", "--html"),
    "git": (),
}


def _runner_opt(name: str, vals: list[str]) -> str:
    for opt in _RUNNER_OPTS.get(name, ()):
        for v in vals:
            if v == opt or v.startswith(opt if opt.endswith("=") else opt + "="):
                return v
    return ""


def _inspect(b: Builder, cmd: list[Word], depth: int) -> list[Segment]:
    """Command-specific rules for indirect execution; returns wrapped-command segments."""
    name = posixpath.basename(cmd[0].value)
    args = cmd[1:]
    vals = [w.value for w in args]
    if name in ("eval", "source", ".", "fc", "trap"):
        if name == "trap" and (not vals or vals[0] in ("-l", "-p")):
            return []
        b.flag(Kind.NESTED, f"'{name}' executes code from its arguments")
        if name == "eval" and args and not any(w.dynamic or w.nested for w in args):
            joined = Word(" ".join(vals), " ".join(w.source for w in args))
            return _parse_string(b, joined, "eval", depth)
        return []
    if name in _STATE_BUILTINS:
        b.flag(Kind.DYNAMIC, f"'{name}' changes shell state")
        return []
    if name == "command" and any(v in ("-v", "-V") for v in vals[:2]):
        return []
    if name in _SHELLS:
        return _shell(b, name, args, depth)
    if name.lower() in _WIN_SHELLS:
        b.flag(Kind.NESTED, f"'{name}' runs a command string")
        return []
    interp = _interpreter(name)
    if interp:
        _interp_code(b, name, interp, vals)
        return []
    if name in _WRAPPERS:
        return _wrapper(b, name, args, depth)
    if name == "find":
        return _find(b, args, depth)
    hit = _runner_opt(name, vals)
    if hit:
        b.flag(Kind.NESTED, f"'{name} {hit}' runs another command")
    elif name == "git":
        _git(b, vals)
    elif name == "tar" and any(
        v.startswith(("--to-command", "--checkpoint-action", "--use-compress-program"))
        or v.startswith(("--info-script", "--new-volume-script"))
        or v == "-I"
        for v in vals
    ):
        b.flag(Kind.NESTED, "tar option runs a command")
    elif name in ("ssh", "scp", "sftp") and any(
        "proxycommand" in v.lower() or "localcommand" in v.lower() for v in vals
    ):
        b.flag(Kind.NESTED, f"'{name}' option runs a local command")
    elif name == "rsync" and any(v in ("-e", "--rsh") or v.startswith("--rsh=") for v in vals):
        b.flag(Kind.NESTED, "rsync --rsh runs a command")
    elif name in ("su", "script", "flock", "nix-shell") and any(
        v in ("-c", "--command", "--run") for v in vals
    ):
        b.flag(Kind.NESTED, f"'{name}' runs a command string")
        k = next(j for j, v in enumerate(vals) if v in ("-c", "--command", "--run"))
        return _parse_string(b, args[k + 1] if k + 1 < len(args) else None, name, depth)
    if name == "git":
        # `git -c alias.x='!rm -rf ~' x`: the shell alias body is parsed so deny rules see it
        for j, v in enumerate(vals[:-1]):
            key, _, body = vals[j + 1].partition("=")
            if v == "-c" and key.lower().startswith("alias.") and body.startswith("!"):
                code = Word(body[1:], args[j + 1].source, args[j + 1].dynamic)
                return _parse_string(b, code, "git alias", depth)
    return []


def _interpreter(name: str) -> str:
    low = name.lower()
    base = low.rstrip("0123456789.")  # python3.12, node18: a version after the name
    if base in _INTERPRETERS:
        return base
    return low if low in _INLINE_FLAGS else ""


def _interp_code(b: Builder, name: str, interp: str, vals: list[str]) -> None:
    flags = _INLINE_FLAGS[interp]
    for v in vals:
        if v in flags or (v.startswith("--") and v.split("=", 1)[0] in flags):
            b.flag(Kind.NESTED, f"'{name} {v}' runs inline code")
            return
        # clustered short flags: python -Sc, perl -ne / -pie
        if v.startswith("-") and not v.startswith("--") and len(v) > 2:
            if interp in ("python", "pypy") and "c" in v[1:]:
                b.flag(Kind.NESTED, f"'{name} {v}' runs inline code")
                return
            if interp in ("perl", "ruby") and ("e" in v[1:] or "E" in v[1:]):
                b.flag(Kind.NESTED, f"'{name} {v}' runs inline code")
                return
        if not v.startswith("-") or v == "-":
            if v == "-":
                b.flag(Kind.NESTED, f"'{name}' reads code from stdin")
            return  # a script file / module operand: what follows are its arguments
        if v in ("-m",):
            return
    if not any(v in _INFO_FLAGS for v in vals):
        b.flag(Kind.NESTED, f"'{name}' without a script reads code from stdin")


def _shell(b: Builder, name: str, args: list[Word], depth: int) -> list[Segment]:
    skip = False
    for k, w in enumerate(args):
        v = w.value
        if skip or v == "--":
            skip = False
            continue
        if v in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            skip = True
            continue
        if not v.startswith(("-", "+")):
            return []  # a script file operand
        if v.startswith("-") and not v.startswith("--") and ("c" in v[1:] or "s" in v[1:]):
            b.flag(Kind.NESTED, f"'{name} {v}' runs a command string")
            code = _shell_code(args[k + 1 :]) if "c" in v[1:] else None
            return _parse_string(b, code, f"{name} -c", depth)
        if v in _INFO_FLAGS:
            return []
    b.flag(Kind.NESTED, f"'{name}' without a script reads commands from stdin")
    return []


def _shell_code(rest: list[Word]) -> Word | None:
    """The command string of ``sh -c``: the first operand after further options (``-c -- 'x'``)."""
    skip = False
    for j, w in enumerate(rest):
        v = w.value
        if skip:
            skip = False
        elif v == "--":
            return rest[j + 1] if j + 1 < len(rest) else None
        elif v in ("-o", "+o", "-O", "+O"):
            skip = True
        elif not v.startswith(("-", "+")):
            return w
    return None


def _wrapper(b: Builder, name: str, args: list[Word], depth: int) -> list[Segment]:
    valued, positional = _WRAPPERS[name]
    k = 0
    while k < len(args):
        v = args[k].value
        if v == "--":
            k += 1
            break
        if name == "env" and ASSIGN_RE.match(args[k].unquoted):
            k += 1
            continue
        if name == "env" and v.startswith(("-S", "--split-string")):
            b.flag(Kind.NESTED, "'env -S' splits a command string")
            if v in ("-S", "--split-string"):
                parts = [w.value for w in args[k + 1 :]]
                used = args[k + 1 :]
            else:
                parts = [v.split("=", 1)[1] if v.startswith("--") else v[2:]]
                parts += [w.value for w in args[k + 1 :]]
                used = args[k:]
            # the string is split into a command and its arguments: deny rules see it
            text = " ".join(parts).strip()
            hidden = any(w.dynamic or w.nested for w in used)
            return _parse_string(b, Word(text, text, hidden), "env -S", depth) if text else []
        if not v.startswith("-") or v == "-":
            break
        k += 2 if v in valued else 1
    k += positional
    inner = args[k:] if k <= len(args) else []
    if name == "xargs" and not inner:
        return _wrapped(b, [], name, depth)
    return _wrapped(b, inner, name, depth)


def _find(b: Builder, args: list[Word], depth: int) -> list[Segment]:
    out: list[Segment] = []
    k = 0
    while k < len(args):
        v = args[k].value
        if v in ("-exec", "-execdir", "-ok", "-okdir"):
            j = k + 1
            while j < len(args) and args[j].value not in (";", "+"):
                j += 1
            out.extend(_wrapped(b, args[k + 1 : j], f"find {v}", depth))
            k = j
        k += 1
    return out


def _git(b: Builder, vals: list[str]) -> None:
    k = 0
    while k < len(vals):
        v = vals[k]
        if v in ("-c",) or v.startswith("--exec-path="):
            b.flag(Kind.NESTED, f"git option {v!r} can run commands")
            return
        if v in _GIT_GLOBAL_VALUE:
            k += 2
            continue
        if not v.startswith("-"):
            break
        if v.startswith(_GIT_NESTED_OPTS):
            b.flag(Kind.NESTED, f"git option {v!r} can run commands")
            return
        k += 1
    sub = vals[k] if k < len(vals) else ""
    rest = vals[k + 1 :]
    if (sub, rest[0] if rest else "") in _GIT_RUNNERS or sub == "filter-branch":
        b.flag(Kind.NESTED, f"'git {sub}' runs commands")
    elif sub in ("rebase",) and any(r in ("-x", "--exec") or r.startswith("--exec=") for r in rest):
        b.flag(Kind.NESTED, "'git rebase --exec' runs commands")
    elif sub in ("grep",) and any(r == "-O" or r.startswith("-O") for r in rest):
        b.flag(Kind.NESTED, "'git grep -O' runs a pager command")
    elif sub == "difftool" and any(r in ("-x", "--extcmd") for r in rest):
        b.flag(Kind.NESTED, "'git difftool --extcmd' runs commands")
    elif any(r.startswith(_GIT_NESTED_OPTS) for r in rest):
        b.flag(Kind.NESTED, f"'git {sub}' option can run commands")
    elif sub == "config" and any(_GIT_CONFIG_RE.fullmatch(r) for r in rest):
        b.flag(Kind.NESTED, "git config key that runs commands")
