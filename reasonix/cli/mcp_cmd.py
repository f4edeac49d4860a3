"""``reasonix mcp list|add|remove|auth|logout``: manage MCP server declarations.

* ``list [--check]`` — every effective server with its type and source file;
  ``--check`` connects to each and lists its tools (or why it failed).
* ``add NAME [--global] -- COMMAND ARGS…`` (stdio) or ``add NAME --url URL
  [--type http|sse]`` appends a ``[[mcp.servers]]`` table to ``./reasonix.toml``
  (``--global``: ``<home>/config.toml``); ``--env K=V`` / ``--header K=V``
  repeat, ``--concurrency`` and ``--startup-timeout`` set those keys.
* ``remove NAME [--global]`` deletes the declaration from the file it is
  effective from (MCP-22), or from the global config; a lower-priority
  declaration of the same name then shows through, and the command says so.
* ``auth`` / ``logout`` run or forget the OAuth authorization (D12), in
  :mod:`reasonix.cli.mcp_auth`.

The text edits keep every other byte of the file (comments included); an edit
that would leave the file unparsable is refused and the file left as it was.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.cli.safe_text import printable
from reasonix.config.safe_read import CONFIG_LIMIT, read_text
from reasonix.lazy import Pattern

if TYPE_CHECKING:
    from typing import Any

__all__ = ["configure", "execute"]

_HEADER = Pattern(r"^\s*\[")
_SERVER_TABLE = Pattern(r"^\s*\[\[\s*(mcp\s*\.\s*servers|plugins)\s*\]\]\s*(#.*)?$")
_SUB_TABLE = Pattern(r"^\s*\[\s*(mcp\s*\.\s*servers|plugins)\s*\.")


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare the ``mcp`` sub-subcommands."""
    parser.description = "List, add, remove and authorise MCP servers."
    sub = parser.add_subparsers(dest="mcp_command", metavar="ACTION")
    lst = sub.add_parser("list", help="show the effective MCP servers")
    lst.add_argument("--check", action="store_true", help="connect and list each server's tools")
    lst.add_argument("--timeout", type=float, default=30.0, help="seconds per server for --check")
    add = sub.add_parser(
        "add",
        help="declare a server",
        usage="reasonix mcp add NAME [options] -- COMMAND [ARGS...] | --url URL",
    )
    add.add_argument("name", metavar="NAME")
    add.add_argument("--url", help="server URL (http / sse servers)")
    add.add_argument("--type", choices=["stdio", "http", "streamable-http", "sse"])
    add.add_argument("--env", action="append", default=[], metavar="K=V")
    add.add_argument("--header", action="append", default=[], metavar="K=V")
    add.add_argument("--concurrency", choices=["serial", "parallel"])
    add.add_argument("--startup-timeout", type=float, metavar="SECONDS")
    add.add_argument("--global", dest="global_", action="store_true", help="<home>/config.toml")
    # nargs="*" rather than REMAINDER: options after NAME stay options, and
    # everything after "--" is positional, so `-- npx -y pkg` works.
    add.add_argument("command", nargs="*", help="-- COMMAND ARGS (stdio servers)")
    rm = sub.add_parser("remove", help="delete a declaration")
    rm.add_argument("name", metavar="NAME")
    rm.add_argument("--global", dest="global_", action="store_true", help="<home>/config.toml")
    auth = sub.add_parser("auth", help="authorise with OAuth (opens a browser)")
    auth.add_argument("name", metavar="SERVER")
    auth.add_argument("--client-id", default="", help="a client registered by hand")
    auth.add_argument("--client-secret", default="", help="its secret, if it has one")
    auth.add_argument(
        "--grant",
        choices=("auto", "authorization_code", "client_credentials"),
        default="auto",
        help="client_credentials: a machine client (needs --client-id/--client-secret)",
    )
    auth.add_argument(
        "--client-metadata-url",
        default="",
        help="an https URL of our client metadata document (used when the AS supports CIMD)",
    )
    auth.add_argument(
        "--id-token-file",
        default="",
        help="enterprise-managed auth: a file holding your identity provider's ID token",
    )
    auth.add_argument("--idp-token-endpoint", default="", help="the IdP's token endpoint")
    auth.add_argument("--idp-client-id", default="", help="our client id at the IdP")
    logout = sub.add_parser("logout", help="forget the OAuth credentials")
    logout.add_argument("name", metavar="SERVER")
    sub.add_parser(
        "example-server",
        help="run the built-in reference MCP server (echo, wordcount) on stdio",
    )


def execute(args: argparse.Namespace) -> int:
    """Run the chosen action; returns the exit code."""
    action = getattr(args, "mcp_command", None)
    if action == "list":
        return _list(args)
    if action == "add":
        return _add(args)
    if action == "remove":
        return _remove(args)
    if action in ("auth", "logout"):
        return _oauth(action, args)
    if action == "example-server":
        from reasonix.plugin.mcp.example_server import serve

        return serve(sys.stdin, sys.stdout)
    print("usage: reasonix mcp list|add|remove|auth|logout|example-server …", file=sys.stderr)
    return 2


# -- list ------------------------------------------------------------------------
def _list(args: argparse.Namespace) -> int:
    from reasonix.config import load

    cfg = load(Path.cwd(), check_mcp_vars=False)
    for item in cfg.trust.skipped:  # on stderr: stdout's rows stay one server each
        if item.kind == "mcp":
            note = f"{item.line()}: not started, this workspace is not trusted (`reasonix trust`)"
            print(printable(note, keep_newlines=False), file=sys.stderr)
    if not cfg.mcp_servers:
        print("no MCP servers declared (add one with `reasonix mcp add`)")
        return 0
    for s in cfg.mcp_servers:
        where = (
            s.command + (" " + " ".join(s.args) if s.args else "") if s.type == "stdio" else s.url
        )
        flag = "" if s.enabled else " (disabled)"
        cells = (s.name, s.type, s.source or "?", where + flag)
        print("\t".join(printable(cell, keep_newlines=False) for cell in cells))
    if not args.check:
        return 0
    return _check(cfg, args.timeout)


def _check(cfg: Any, timeout: float) -> int:
    from reasonix.config.expand import chain_lookup, environ_lookup
    from reasonix.plugin.mcp import McpManager

    print()
    from reasonix.plugin.mcp.oauth import auth_for

    lookup = chain_lookup(cfg.project_env, environ_lookup)
    mgr = McpManager(
        cfg.mcp_servers,
        workspace=Path.cwd(),
        env_lookup=lookup,
        startup_timeout=timeout,
        call_timeout=timeout,
        auth_for=lambda server: auth_for(server, lookup=lookup),  # authorised servers pass
    )
    failed = 0
    with mgr:
        mgr.start()
        mgr.wait_ready(timeout + 1)
        for st in mgr.status():
            if st.state == "ready":
                info = f"{st.protocol_version}, {st.concurrency}"
                print(printable(f"{st.name}: ready ({info}), {len(st.tools)} tools"))
                for tool in st.tools:
                    print(printable(f"  - {tool}", keep_newlines=False))
            else:
                failed += 1
                print(printable(f"{st.name}: {st.state}: {st.error}"))
    return 1 if failed else 0


# -- add / remove ------------------------------------------------------------------
def _pairs(items: list[str], what: str) -> dict[str, str]:
    from reasonix.errors import UsageError

    out: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise UsageError(f"--{what} wants KEY=VALUE, got {item!r}")
        out[key] = value
    return out


def _target(args: argparse.Namespace) -> Path:
    from reasonix.config import paths

    return paths.user_config_path() if args.global_ else paths.project_config_path(Path.cwd())


def _inline_table(values: dict[str, str]) -> str:
    from reasonix.config.tomledit import dumps_value

    def key(k: str) -> str:
        return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else dumps_value(k)

    inner = ", ".join(f"{key(k)} = {dumps_value(v)}" for k, v in values.items())
    return "{ " + inner + " }" if inner else "{}"


def server_block(fields: dict[str, Any]) -> str:
    """The ``[[mcp.servers]]`` text for ``fields`` (str, float, list and dict values)."""
    from reasonix.config.tomledit import dumps_value

    lines = ["[[mcp.servers]]"]
    for key, value in fields.items():
        text = _inline_table(value) if isinstance(value, dict) else dumps_value(value)
        lines.append(f"{key} = {text}")
    return "\n".join(lines) + "\n"


def _add(args: argparse.Namespace) -> int:
    from reasonix.errors import UsageError

    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    kind = args.type or ("stdio" if command else "http" if args.url else "")
    if not kind:
        raise UsageError("give either -- COMMAND ARGS (stdio) or --url URL (http/sse)")
    if kind == "stdio" and not command:
        raise UsageError("a stdio server needs -- COMMAND [ARGS...]")
    if kind != "stdio" and (not args.url or command):
        raise UsageError(f"a {kind} server needs --url URL and no command")
    fields: dict[str, Any] = {"name": args.name, "type": kind}
    if kind == "stdio":
        fields["command"], fields["args"] = command[0], command[1:]
    else:
        fields["url"] = args.url
    if args.env:
        fields["env"] = _pairs(args.env, "env")
    if args.header:
        fields["headers"] = _pairs(args.header, "header")
    if args.concurrency:
        fields["concurrency"] = args.concurrency
    if args.startup_timeout is not None:
        fields["startup_timeout_seconds"] = float(args.startup_timeout)
    target = _target(args)
    text = read_text(target, CONFIG_LIMIT) if target.exists() else ""
    if _find_blocks(text.splitlines(keepends=True), args.name):
        raise UsageError(f"{target} already declares an MCP server {args.name!r}; remove it first")
    sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    _write_checked(target, text + sep + server_block(fields))
    print(f"added MCP server {args.name!r} ({kind}) to {target}")
    if not args.global_:
        from reasonix.config.trust import decide

        if not decide(Path.cwd())[0]:
            print(
                "note: this workspace is not trusted, so its MCP servers do not start; "
                "run `reasonix trust` here if you trust it (or add the server with --global)",
                file=sys.stderr,
            )
    return 0


def _find_blocks(lines: list[str], name: str) -> list[tuple[int, int]]:
    """(start, end) line ranges of server tables named ``name`` (sub-tables included)."""
    found: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        if not _SERVER_TABLE.match(lines[i]):
            i += 1
            continue
        start, j = i, i + 1
        while j < len(lines) and (not _HEADER.match(lines[j]) or _SUB_TABLE.match(lines[j])):
            j += 1
        body = "".join(lines[start:j])
        if re.search(r"^\s*name\s*=\s*([\"'])" + re.escape(name) + r"\1\s*(#.*)?$", body, re.M):
            found.append((start, j))
        i = j
    return found


def remove_from_toml(path: Path, name: str) -> bool:
    """Delete the declarations of ``name`` from a TOML file; True when one was there."""
    lines = read_text(path, CONFIG_LIMIT).splitlines(keepends=True)
    blocks = _find_blocks(lines, name)
    if not blocks:
        return False
    for start, end in reversed(blocks):
        del lines[start:end]
    _write_checked(path, "".join(lines))
    return True


def remove_from_mcp_json(path: Path, name: str) -> bool:
    """Delete ``name`` from a ``.mcp.json``; True when it was there."""
    from reasonix.config.atomic import write_atomic

    data = json.loads(read_text(path, CONFIG_LIMIT))
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict) or name not in servers:
        return False
    del servers[name]
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return True


def _write_checked(path: Path, text: str) -> None:
    from reasonix.config.atomic import write_atomic
    from reasonix.config.tomlparse import TOMLDecodeError, loads
    from reasonix.errors import ConfigError

    try:
        loads(text, str(path))
    except TOMLDecodeError as exc:
        raise ConfigError(
            f"the edit would make the file invalid ({exc}); left unchanged", file=str(path)
        ) from None
    write_atomic(path, text)


def _remove(args: argparse.Namespace) -> int:
    from reasonix.config import load
    from reasonix.errors import UsageError

    name = args.name
    if args.global_:
        path = _target(args)
    else:
        # removing a declaration narrows: the workspace's own count even untrusted
        declared = load(Path.cwd(), check_mcp_vars=False, trust=True).mcp_servers
        effective = {s.name: s for s in declared}
        if name not in effective:
            raise UsageError(f"no MCP server named {name!r} is declared")
        path = Path(effective[name].source)
    if not path.exists():
        raise UsageError(f"{path} does not exist")
    removed = (
        remove_from_mcp_json(path, name) if path.suffix == ".json" else remove_from_toml(path, name)
    )
    if not removed:
        raise UsageError(f"{path} declares no MCP server named {name!r}")
    print(f"removed MCP server {name!r} from {path}")
    now = {s.name: s for s in load(Path.cwd(), check_mcp_vars=False).mcp_servers}
    if name in now:
        print(f"note: {name!r} is still declared in {now[name].source}, which now takes effect")
    _prune_oauth(now)
    return 0


# -- OAuth ---------------------------------------------------------------------------
def _prune_oauth(servers: dict[str, Any]) -> None:
    from reasonix.plugin.mcp import oauth_store

    # MCP-8: a removed declaration takes its OAuth state along, unless the
    # declaration now in effect points at the same resource.
    oauth_store.prune_store({n: s.url for n, s in servers.items() if s.url})


def _oauth(action: str, args: argparse.Namespace) -> int:
    from reasonix.cli import mcp_auth as flow

    if action == "logout":
        return int(flow.logout(args.name, Path.cwd()))
    return int(
        flow.auth(
            args.name,
            Path.cwd(),
            client_id=args.client_id,
            client_secret=args.client_secret,
            grant=args.grant,
            client_metadata_url=args.client_metadata_url,
            id_token_file=args.id_token_file,
            idp_token_endpoint=args.idp_token_endpoint,
            idp_client_id=args.idp_client_id,
        )
    )
