"""Retired keys: CTX-15 removal on start, DIST-6 omission on the next save, keep round-trip."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from unprivileged import run_python

from reasonix.config import load, paths
from reasonix.config.legacy import save_setting

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

LEGACY = """\
# user config, hand written
soft_compact_ratio = 0.6
default_model = "deepseek"

[agent]
# my threshold
compact_ratio = 0.75
tool_result_snip_ratio = 0.3
compact_force_ratio = 0.95
cold_resume_prune = true
context_editing = { enabled = true }
keep = 4
recent_keep = 2
"""


def test_legacy_keys_removed_on_start_other_content_kept(tmp_path: Path) -> None:
    path = paths.user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(LEGACY, encoding="utf-8")
    cfg = load(tmp_path)
    text = path.read_text(encoding="utf-8")
    assert text == (
        "# user config, hand written\n"
        'default_model = "deepseek"\n'
        "\n"
        "[agent]\n"
        "# my threshold\n"
        "compact_ratio = 0.75\n"
        "keep = 4\n"
        "recent_keep = 2\n"
    )
    assert cfg.agent.compact_ratio == 0.75
    assert cfg.agent.keep == 4  # read and round-tripped, unused
    assert cfg.agent.recent_keep == 2
    assert any("soft_compact_ratio" in w for w in cfg.warnings)


def test_no_migration_leaves_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "reasonix.toml"
    path.write_text(LEGACY, encoding="utf-8")
    cfg = load(tmp_path, migrate=False)
    assert path.read_text(encoding="utf-8") == LEGACY
    assert cfg.agent.compact_ratio == 0.75
    assert any("retired" in w and "cold_resume_prune" in w for w in cfg.warnings)


def test_update_channel_parses_and_is_dropped_on_next_write(tmp_path: Path) -> None:
    path = tmp_path / "reasonix.toml"
    path.write_text('update_channel = "beta"\n[update]\nchannel = "nightly"\n', encoding="utf-8")
    cfg = load(tmp_path)
    assert cfg.warnings == []  # retired, not unknown
    assert "update_channel" in path.read_text(encoding="utf-8")  # kept until a save
    save_setting(path, "agent", "compact_ratio", 0.7)
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert "update_channel" not in data
    assert "channel" not in data.get("update", {})
    assert data["agent"] == {"compact_ratio": 0.7}


def test_legacy_key_written_as_section(tmp_path: Path) -> None:
    path = tmp_path / "reasonix.toml"
    path.write_text(
        "[agent]\ncompact_ratio = 0.7\n\n[agent.context_editing]\nenabled = true\n"
        '[context_editing.sub]\nx = 1\n[serve]\nauth_mode = "none"\n',
        encoding="utf-8",
    )
    load(tmp_path)
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert data == {"agent": {"compact_ratio": 0.7}, "serve": {"auth_mode": "none"}}
    assert load(tmp_path).warnings == []  # nothing left to remove


_WARNINGS_OF_LOAD = (
    "import json, sys; from pathlib import Path; from reasonix.config import load; "
    "print(json.dumps(load(Path(sys.argv[1])).warnings))"
)


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_read_only_file_does_not_stop_the_start(tmp_path: Path) -> None:
    conf_dir = tmp_path / "ro"
    conf_dir.mkdir()
    path = conf_dir / "reasonix.toml"
    path.write_text("[agent]\ncold_resume_prune = true\n", encoding="utf-8")
    conf_dir.chmod(0o500)
    try:  # in a child with permission bits enforced: CI runs as root
        out = run_python(_WARNINGS_OF_LOAD, str(conf_dir))
    finally:
        conf_dir.chmod(0o700)
    assert out.returncode == 0, out.stderr
    assert any("could not remove" in w for w in json.loads(out.stdout))
    assert "cold_resume_prune" in path.read_text(encoding="utf-8")  # really left in place
