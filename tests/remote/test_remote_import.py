"""``reasonix remote import``: Host entries of an ssh config (resolved by the real ``ssh -G``).

HOME points at a temp dir holding ``.ssh/config``; the entries must be read
from THAT file (ssh itself would look in the password database's home).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from remote.cli_kit import ROOT

pytestmark = pytest.mark.interop


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    if shutil.which("ssh") is None:
        pytest.skip("MISSING ssh (apt install openssh-client)")
    key = tmp_path / "id_box"
    key.write_text("not a real key, only has to exist\n")
    ssh = tmp_path / "home" / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "config").write_text(
        "Host box1\n  HostName 127.0.0.1\n  User alice\n  Port 2222\n"
        f"  IdentityFile {key}\n\n"
        "Host jumped other\n  HostName 10.0.0.5\n  ProxyJump bastion\n\n"
        "Host *.wild !nope\n  User nobody\n"
    )
    return {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8",
            "REASONIX_HOME": str(tmp_path / "rx"), "PYTHONPATH": str(ROOT)}  # fmt: skip


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reasonix", "remote", *args], env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip


def test_import_every_concrete_host(home: dict[str, str], tmp_path: Path) -> None:
    res = _cli(home, "import")
    assert res.returncode == 0, res.stderr
    assert "imported box1 (alice@127.0.0.1:2222)" in res.stdout
    assert "imported jumped (10.0.0.5)" in res.stdout and "imported other" in res.stdout
    assert "wild" not in res.stdout and "nope" not in res.stdout  # patterns are not hosts
    listed = _cli(home, "list").stdout
    assert f"box1  alice@127.0.0.1:2222  (key {tmp_path / 'id_box'})" in listed
    assert "jumped  10.0.0.5  (via bastion)" in listed
    config = (tmp_path / "rx" / "config.toml").read_text()
    assert config.count("[[remote.hosts]]") == 3
    assert "ssh_config" not in config  # the default file stays the default


def test_import_named_alias_and_a_missing_one(home: dict[str, str], tmp_path: Path) -> None:
    res = _cli(home, "import", "box1")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "rx" / "config.toml").read_text().count("[[remote.hosts]]") == 1
    empty = dict(home, HOME=str(tmp_path / "nohome"))
    res = _cli(empty, "import")
    assert res.returncode == 2 and "no Host entries to import" in res.stderr


def test_import_from_an_explicit_file_keeps_it(home: dict[str, str], tmp_path: Path) -> None:
    other = tmp_path / "cfg"
    other.write_text("Host far\n  HostName far.example\n  User bob\n")
    res = _cli(home, "import", "-F", str(other))
    assert res.returncode == 0, res.stderr
    assert "imported far (bob@far.example)" in res.stdout
    assert f'ssh_config = "{other}"' in (tmp_path / "rx" / "config.toml").read_text()
