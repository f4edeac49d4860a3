"""``reasonix remote add|import|list|remove|forward``: the host list in the user config."""

from __future__ import annotations

import argparse
import socket
from pathlib import Path

from reasonix.cli.remote_hosts import (
    find_host,
    from_ssh_config,
    load_hosts,
    parse_target,
    remove_host,
    save_host,
    ssh_config_aliases,
)
from reasonix.cli.safe_text import printable
from reasonix.config import paths
from reasonix.errors import UsageError
from reasonix.remote.forward import ForwardSpec, parse_spec
from reasonix.remote.ssh import Host

__all__ = ["execute"]


def _add(args: argparse.Namespace) -> int:
    user, hostname = parse_target(args.target)
    identity = str(Path(args.identity).expanduser().resolve()) if args.identity else ""
    host = Host(args.name, hostname, user, args.port, identity, args.jump,
                args.ssh_config, tuple(args.ssh_options))  # fmt: skip
    replaced = save_host(host)
    verb = "replaced" if replaced else "added"
    print(printable(f"{verb} remote host {host.name} ({host.label}) in {paths.user_config_path()}"))
    print(printable(f"next: reasonix remote test {host.name}"))
    return 0


def _import(args: argparse.Namespace) -> int:
    config = Path(args.ssh_config).expanduser() if args.ssh_config else Path.home() / ".ssh/config"
    aliases = args.aliases or ssh_config_aliases(config)
    if not aliases:
        raise UsageError(f"no Host entries to import in {config}")
    for alias in aliases:
        kept = str(config) if args.ssh_config else ""
        host = from_ssh_config(alias, kept, read_from=str(config) if config.is_file() else "")
        save_host(host)
        print(printable(f"imported {host.name} ({host.label})"))
    return 0


def _list() -> int:
    hosts = load_hosts()
    if not hosts:
        print("no remote hosts; add one with `reasonix remote add NAME [user@]host`")
        return 0
    for host, forwards in hosts:
        extra = []
        if host.identity:
            extra.append(f"key {host.identity}")
        if host.jump:
            extra.append(f"via {host.jump}")
        if forwards:
            extra.append("forwards " + ", ".join(forwards))
        tail = f"  ({'; '.join(extra)})" if extra else ""
        print(printable(f"{host.name}  {host.label}{tail}"))
    return 0


def _listening(spec: ForwardSpec) -> bool:
    try:
        with socket.create_connection((spec.bind, spec.port), timeout=1):
            return True
    except OSError:
        return False


def _saved_as(forwards: list[str], spec: ForwardSpec) -> str | None:
    """The saved entry that means ``spec`` (``8080:80`` is ``8080:127.0.0.1:80``)."""
    for saved in forwards:
        try:
            if parse_spec(saved) == spec:
                return saved
        except UsageError:
            continue  # a hand-edited entry that no longer parses; `ls` reports it
    return None


def _forward(args: argparse.Namespace) -> int:
    host, forwards = find_host(args.name)
    if args.verb == "ls":
        for saved in forwards:
            try:
                spec = parse_spec(saved)
            except UsageError as err:
                print(printable(f"{saved}  (not started: {err})"))
                continue
            live = "  (live)" if _listening(spec) else ""
            print(printable(f"{spec.describe()}{live}"))
        if not forwards:
            print(printable(f"no forwards for {host.name}"))
        return 0
    spec = parse_spec(args.spec)
    existing = _saved_as(forwards, spec)
    if args.verb == "add":
        if existing is None:
            forwards.append(args.spec.strip())
        save_host(host, forwards)
        print(printable(f"{host.name}: forward {args.spec} saved ({spec.describe()}); live in "
                        f"a running `reasonix remote connect|run|open {host.name}` within a "
                        "second, and in every later one"))  # fmt: skip
        return 0
    if existing is None:
        raise UsageError(f"{host.name} has no forward {args.spec}")
    forwards.remove(existing)
    save_host(host, forwards)
    print(printable(f"{host.name}: forward {existing} removed (closed in a running connection)"))
    return 0


def execute(args: argparse.Namespace) -> int:
    """Run one host-list sub-command."""
    if args.action == "add":
        return _add(args)
    if args.action == "import":
        return _import(args)
    if args.action == "list":
        return _list()
    if args.action == "forward":
        return _forward(args)
    remove_host(args.name)
    print(printable(f"removed remote host {args.name}"))
    return 0
