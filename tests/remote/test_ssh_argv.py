"""``build_argv`` is pure: a table of hosts/options -> exact argv fragments."""

from __future__ import annotations

import pytest

from reasonix.errors import UsageError
from reasonix.remote.askpass import prompt_kind
from reasonix.remote.errors import (
    AuthFailed,
    ConnectFailed,
    ConnectionLost,
    HostKeyChanged,
    classify_ssh_failure,
)
from reasonix.remote.forward import parse_spec
from reasonix.remote.ssh import Host, SshOptions, build_argv

H = Host("box", "example.org", "me", 2222, "/k/id", "bastion")
CASES = [
    (H, SshOptions(), ["-p", "2222"], "ssh"),
    (H, SshOptions(), ["-i", "/k/id", "-o", "IdentitiesOnly=yes"], "ssh"),
    (H, SshOptions(), ["-J", "bastion"], "ssh"),
    (H, SshOptions(), ["-o", "StrictHostKeyChecking=ask"], "ssh"),
    (H, SshOptions(), ["-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3"], "ssh"),
    (H, SshOptions(), ["-T", "--", "me@example.org"], "ssh"),
    (H, SshOptions(tty=True), ["-t", "--", "me@example.org"], "ssh"),
    (H, SshOptions(control_path="/s/cm", master=True),
     ["-o", "ControlMaster=yes", "-o", "ControlPersist=no"], "ssh"),
    (H, SshOptions(control_path="/s/cm"), ["-o", "ControlPath=/s/cm", "-o", "ControlMaster=no"],
     "ssh"),
    (H, SshOptions(batch=True), ["-o", "BatchMode=yes"], "ssh"),
    (H, SshOptions(), ["-P", "2222"], "sftp"),
    (Host("b", "h", options=("UserKnownHostsFile=/kh",), ssh_config="/cfg"), SshOptions(),
     ["ssh", "-F", "/cfg"], "ssh"),
]  # fmt: skip


def _contains(argv: list[str], part: list[str]) -> bool:
    return any(argv[i : i + len(part)] == part for i in range(len(argv)))


@pytest.mark.parametrize(("host", "opts", "part", "prog"), CASES)
def test_build_argv_table(host: Host, opts: SshOptions, part: list[str], prog: str) -> None:
    argv = build_argv(host, opts, program=prog)
    assert argv[0] == prog and _contains(argv, part), argv


def test_keepalive_off_and_command_after_destination() -> None:
    argv = build_argv(Host("b", "h"), SshOptions(keepalive=0), ["sh", "-c", "'true'"])
    assert not any("ServerAlive" in a for a in argv)
    assert argv[-4:] == ["h", "sh", "-c", "'true'"]


BAD = [Host("b", "-oProxyCommand=x"), Host("b", "h", user="-l"), Host("b", "h", jump="-x"),
       Host("b", "h p"), Host("b", "")]  # fmt: skip


@pytest.mark.parametrize("bad", BAD)
def test_option_injection_refused(bad: Host) -> None:
    with pytest.raises(UsageError):
        build_argv(bad, SshOptions())


@pytest.mark.parametrize(
    ("stderr", "code", "kind"),
    [
        ("@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@", 255, HostKeyChanged),
        ("me@h: Permission denied (publickey).", 255, AuthFailed),
        ("ssh: connect to host h port 22: Connection refused", 255, ConnectFailed),
        ("Connection to h closed by remote host.", 255, ConnectionLost),
    ],
)
def test_exit_codes_become_typed_errors(stderr: str, code: int, kind: type) -> None:
    assert isinstance(classify_ssh_failure("box", code, stderr), kind)


def test_prompt_kinds() -> None:
    text = "Are you sure you want to continue connecting (yes/no/[fingerprint])? "
    assert prompt_kind(text) == "hostkey"
    assert prompt_kind("Enter passphrase for key '/k': ") == "passphrase"
    assert prompt_kind("me@h's password: ") == "password"


@pytest.mark.parametrize(
    ("spec", "ssh_arg"),
    [("8080:80", "127.0.0.1:8080:127.0.0.1:80"),
     ("8080:127.0.0.1:9090", "127.0.0.1:8080:127.0.0.1:9090"),
     ("8080:db.internal:5432", "127.0.0.1:8080:db.internal:5432"),
     ("localhost:8080:db:5432", "localhost:8080:db:5432"),
     ("127.0.0.2:8080:db:5432", "127.0.0.2:8080:db:5432"),
     ("[::1]:8080:[fd00::5]:22", "[::1]:8080:[fd00::5]:22"),
     ("8080:[::1]:22", "127.0.0.1:8080:[::1]:22")],
)  # fmt: skip
def test_forward_specs_as_ssh_takes_them(spec: str, ssh_arg: str) -> None:
    assert parse_spec(spec).ssh_arg() == ssh_arg


@pytest.mark.parametrize(
    "spec",
    ["8080", "a:b", "8080:80:90:1:2", "0.0.0.0:8080:h:80", "*:8080:h:80", ":8080:h:80",
     "192.168.1.5:8080:h:80", "8080:-oProxyCommand=x:80", "8080:h h:80", "8080:h:0",
     "8080:h:65536", "[::1:8080:h:80", "[::]:8080:h:80", "8080::80"],
)  # fmt: skip
def test_bad_or_exposed_forward_specs_are_refused(spec: str) -> None:
    with pytest.raises(UsageError, match="forward"):
        parse_spec(spec)
