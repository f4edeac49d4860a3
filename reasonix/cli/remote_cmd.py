"""``reasonix remote``: hosts, test, connect, run, forwards and files over SSH.

The sub-commands live in small modules (remote_hosts_cmd, remote_agent,
remote_tools); this one declares the command line and dispatches.
"""

from __future__ import annotations

import argparse

__all__ = ["configure", "execute"]


def _host_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("-p", "--port", type=int, default=0)
    p.add_argument("-i", "--identity", metavar="KEY", default="")
    p.add_argument("--jump", metavar="HOST", default="", help="ProxyJump host")
    p.add_argument("-F", dest="ssh_config", metavar="FILE", default="", help="ssh config file")
    p.add_argument("-o", dest="ssh_options", action="append", default=[], metavar="OPTION",
                   help="extra ssh option Key=Value (repeatable)")  # fmt: skip


def _trust(p: argparse.ArgumentParser) -> None:
    text = "accept this unknown host key fingerprint (SHA256:…) without asking"
    p.add_argument("--trust", metavar="FINGERPRINT", default="", help=text)


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare the ``remote`` sub-commands."""
    parser.description = "Work on a remote machine over the system OpenSSH client."
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = sub.add_parser("add", help="add or replace a host")
    add.add_argument("name")
    add.add_argument("target", metavar="[user@]host")
    _host_flags(add)
    imp = sub.add_parser("import", help="import Host entries from ~/.ssh/config (ssh -G)")
    imp.add_argument("aliases", nargs="*", metavar="ALIAS")
    imp.add_argument("-F", dest="ssh_config", default="", metavar="FILE")
    sub.add_parser("list", help="list configured hosts")
    rm = sub.add_parser("remove", help="remove a host")
    rm.add_argument("name")
    test = sub.add_parser("test", help="connect; report OS, arch, Python, latency")
    test.add_argument("name")
    _trust(test)
    for verb, text in (("connect", "chat on the remote workspace in this terminal"),
                       ("run", "run one headless task on the remote workspace")):  # fmt: skip
        p = sub.add_parser(verb, help=text, prefix_chars="\0")  # flags pass through
        p.add_argument("name")
        p.add_argument("dir", nargs="?" if verb == "connect" else None, default="")
        p.add_argument("rest", nargs=argparse.REMAINDER,
                       help="flags for the remote `reasonix run`/chat")  # fmt: skip
    fwd = sub.add_parser("forward", help="saved -L forwards, live while connect/run/open runs")
    fsub = fwd.add_subparsers(dest="verb", required=True)
    for verb in ("add", "rm"):
        f = fsub.add_parser(verb)
        f.add_argument("name")
        f.add_argument("spec", metavar="SPEC",
                       help="[BIND:]PORT:HOST:HOSTPORT as `ssh -L` takes it, or LOCAL:REMOTE "
                       "ports (loopback binds only)")  # fmt: skip
    fl = fsub.add_parser("ls")
    fl.add_argument("name")
    fs = sub.add_parser("fs", help="remote files over SFTP")
    ssub = fs.add_subparsers(dest="verb", required=True)
    fls = ssub.add_parser("ls")
    fls.add_argument("name")
    fls.add_argument("path", nargs="?", default="")
    fget = ssub.add_parser("get")
    fget.add_argument("name")
    fget.add_argument("path")
    fget.add_argument("local", nargs="?", default="")
    fput = ssub.add_parser("put")
    fput.add_argument("name")
    fput.add_argument("local")
    fput.add_argument("path")
    for p in (fls, fget, fput):
        _trust(p)
    from reasonix.cli import remote_serve

    remote_serve.configure(sub, _trust)


def execute(args: argparse.Namespace) -> int:
    """Dispatch to the sub-command's module."""
    action = args.action
    if action in ("add", "import", "list", "remove", "forward"):
        from reasonix.cli import remote_hosts_cmd

        return remote_hosts_cmd.execute(args)
    if action in ("connect", "run"):
        from reasonix.cli import remote_agent

        return remote_agent.execute(args)
    if action in ("test", "fs"):
        from reasonix.cli import remote_tools

        return remote_tools.execute(args)
    from reasonix.cli import remote_serve

    if action == "open":
        return remote_serve.execute_open(args)
    return remote_serve.execute_serve(args)
