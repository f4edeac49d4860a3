"""load(): precedence, sources, validation messages, providers, keys, sandbox (CFG-1…11)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reasonix.config import load, paths, require_api_key
from reasonix.config.model import Config
from reasonix.errors import ConfigError, MissingAPIKey


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def user_cfg() -> Path:
    return paths.user_config_path()


def test_defaults_without_any_file(tmp_path: Path) -> None:
    cfg = load(tmp_path)
    assert cfg.default_model == "deepseek"
    assert cfg.agent.compact_ratio == 0.80
    assert cfg.permissions.mode == "ask"
    assert cfg.sources["agent.compact_ratio"] == "default"
    assert cfg.sources["default_model"] == "default"
    assert cfg.sandbox.workspace_root == str(tmp_path)
    assert cfg.providers[0].name == "deepseek"
    assert cfg.warnings == []


def test_precedence_across_all_four_levels(tmp_path: Path, user_cfg: Path) -> None:
    write(
        user_cfg,
        '[agent]\ncompact_ratio = 0.70\ntemperature = 0.5\n[permissions]\nmode = "auto"\n',
    )
    project = write(tmp_path / "reasonix.toml", "[agent]\ncompact_ratio = 0.75\n")
    cfg = load(tmp_path, {"permissions.mode": "plan", "agent.max_steps": None})
    assert cfg.agent.compact_ratio == 0.75  # project beats user
    assert cfg.sources["agent.compact_ratio"] == str(project)
    assert cfg.agent.temperature == 0.5  # user beats default
    assert cfg.sources["agent.temperature"] == str(user_cfg)
    assert cfg.permissions.mode == "plan"  # flag beats both
    assert cfg.sources["permissions.mode"] == "flag"
    assert cfg.agent.max_steps == 0  # None flags are "not given"
    assert cfg.sources["agent.max_steps"] == "default"
    cfg = load(tmp_path, {"agent.compact_ratio": 0.85})
    assert cfg.agent.compact_ratio == 0.85
    assert cfg.sources["agent.compact_ratio"] == "flag"


def test_rule_and_path_lists_accumulate(tmp_path: Path, user_cfg: Path) -> None:
    write(user_cfg, '[permissions]\ndeny = ["Bash(rm -rf*)"]\nallow = ["Read"]\n')
    write(tmp_path / "reasonix.toml", '[permissions]\nallow = ["Bash(ls:*)", "Read"]\n')
    cfg = load(tmp_path, {"sandbox.allow_write": ["/extra"]})
    assert cfg.permissions.deny == ["Bash(rm -rf*)"]
    assert cfg.permissions.allow == ["Read", "Bash(ls:*)"]
    assert cfg.sandbox.allow_write == [os.path.normpath("/extra")]


def expect_error(tmp_path: Path, text: str, *needles: str) -> ConfigError:
    path = write(tmp_path / "reasonix.toml", text)
    with pytest.raises(ConfigError) as info:
        load(tmp_path)
    message = str(info.value)
    assert str(path) in message
    for needle in needles:
        assert needle in message, message
    assert "Traceback" not in message
    return info.value


def test_bad_toml_names_file_and_line(tmp_path: Path) -> None:
    err = expect_error(tmp_path, "a = 1\n[agent]\ntemperature = = 2\n", "invalid TOML")
    assert err.line == 3
    assert "reasonix.toml:3" in str(err)


def test_unknown_provider_kind(tmp_path: Path) -> None:
    err = expect_error(
        tmp_path,
        '[[providers]]\nname = "a"\nkind = "openai"\n[[providers]]\nname = "b"\nkind = "gemini"\n',
        "gemini",
        "openai, anthropic, responses",
        "providers.kind",
    )
    assert err.line == 6


@pytest.mark.parametrize("value", ["0.9", "0.6", "1"])
def test_compact_ratio_out_of_range_is_rejected_not_clamped(tmp_path: Path, value: str) -> None:
    err = expect_error(
        tmp_path,
        f"[agent]\ncompact_ratio = {value}\n",
        "agent.compact_ratio",
        value,
        "0.65",
        "0.85",
    )
    assert err.line == 2
    assert err.key == "agent.compact_ratio"


def test_compact_ratio_bounds_are_inclusive(tmp_path: Path) -> None:
    for value in (0.65, 0.85):
        write(tmp_path / "reasonix.toml", f"agent.compact_ratio = {value}\n")
        assert load(tmp_path).agent.compact_ratio == value


def test_compact_ratio_from_flag_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, {"agent.compact_ratio": 0.9})
    assert "command line" in str(info.value)
    assert "0.65" in str(info.value)


def test_bad_permission_mode(tmp_path: Path) -> None:
    err = expect_error(
        tmp_path, '[permissions]\nmode = "sometimes"\n', "permissions.mode", "sometimes", "manual"
    )
    assert err.line == 2


@pytest.mark.parametrize(
    ("given", "want"),
    [
        ("ask", "ask"),
        ("manual", "ask"),
        ("yolo", "bypassPermissions"),
        ("allow", "auto"),
        ("deny", "dontAsk"),
        ("acceptEdits", "acceptEdits"),
        ("plan", "plan"),
    ],
)
def test_permission_mode_aliases(tmp_path: Path, given: str, want: str) -> None:
    write(tmp_path / "reasonix.toml", f'[permissions]\nmode = "{given}"\n')
    assert load(tmp_path).permissions.mode == want


def test_sandbox_bash_mode(tmp_path: Path) -> None:
    expect_error(tmp_path, '[sandbox]\nbash = "strict"\n', "sandbox.bash", "enforce, auto, off")


def test_wrong_type(tmp_path: Path) -> None:
    err = expect_error(
        tmp_path,
        '[tools]\nbash_timeout_seconds = "long"\n',
        "a number",
        "tools.bash_timeout_seconds",
    )
    assert err.line == 2
    expect_error(tmp_path, '[permissions]\nallow = "Read"\n', "a list of strings")
    expect_error(tmp_path, "agent = 3\n", "[agent]")
    expect_error(tmp_path, "[agent]\nmax_steps = true\n", "an integer")


def test_unknown_keys_only_warn(tmp_path: Path) -> None:
    project = write(
        tmp_path / "reasonix.toml",
        'color = "blue"\n[agent]\nfancy = 1\n'
        '[[providers]]\nname = "x"\nmodels = ["m"]\nshiny = 1\n',
    )
    cfg = load(tmp_path)
    assert any("color" in w and str(project) in w for w in cfg.warnings)
    assert any("agent.fancy" in w for w in cfg.warnings)
    assert any("shiny" in w for w in cfg.warnings)


def test_provider_override_and_addition(tmp_path: Path, user_cfg: Path) -> None:
    write(
        user_cfg,
        '[[providers]]\nname = "deepseek"\ncontext_window = 64000\n'
        '[[providers]]\nname = "gw"\nkind = "responses"\nbase_url = "http://gw"\n'
        'model = "only"\nmodel_overrides.only.context_window = 1000\n',
    )
    write(
        tmp_path / "reasonix.toml", '[[providers]]\nname = "deepseek"\nmodels = ["deepseek-chat"]\n'
    )
    cfg = load(tmp_path)
    names = [p.name for p in cfg.providers]
    assert names[:2] == ["deepseek", "gw"]  # configured before presets
    assert names.count("deepseek") == 1
    deepseek = cfg.providers[0]
    assert deepseek.context_window == 64000  # from the user file
    assert deepseek.models == ["deepseek-chat"]  # from the project file
    assert deepseek.base_url == "https://api.deepseek.com"  # kept from the preset
    assert deepseek.source == str(tmp_path / "reasonix.toml")
    gw = cfg.providers[1]
    assert gw.kind == "responses"
    assert gw.models == ["only"]
    assert gw.context_window_for("only") == 1000


def test_api_key_home_env_beats_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "from-env")
    monkeypatch.setenv("OPENAI_API_KEY", "openai-env")
    write(paths.env_path(), "DEEPSEEK_API_KEY=from-home\n")
    write(tmp_path / ".env", "OPENAI_API_KEY=project-must-not-count\nANTHROPIC_API_KEY=nope\n")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    cfg = load(tmp_path)
    assert require_api_key(_p(cfg, "deepseek")) == "from-home"
    assert require_api_key(_p(cfg, "openai")) == "openai-env"
    assert require_api_key(_p(cfg, "ollama")) == ""
    with pytest.raises(MissingAPIKey) as info:
        require_api_key(_p(cfg, "anthropic"))
    text = str(info.value)
    assert "ANTHROPIC_API_KEY" in text
    assert str(paths.env_path()) in text
    assert "environment" in text


def _p(cfg: Config, name: str):  # type: ignore[no-untyped-def]
    found = cfg.provider(name)
    assert found is not None
    return found


def test_project_env_is_private_and_filtered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PROJECT_ONLY", raising=False)
    write(
        tmp_path / ".env",
        "PROJECT_ONLY=1\nREASONIX_HOME=/evil\nREASONIX_STATE_HOME=/evil\nXDG_CONFIG_HOME=/evil\n",
    )
    cfg = load(tmp_path)
    assert cfg.project_env == {"PROJECT_ONLY": "1"}
    assert "PROJECT_ONLY" not in os.environ
    assert os.environ["REASONIX_HOME"] != "/evil"


def test_sandbox_paths_expand_and_become_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", "/home/ann")
    write(tmp_path / ".env", "CACHE_DIR=/var/cache/proj\n")
    write(
        tmp_path / "reasonix.toml",
        '[sandbox]\nallow_write = ["${CACHE_DIR}", "build", "${OUT:-out}"]\n'
        'forbid_read = ["${HOME}/.ssh"]\nbash = "enforce"\n',
    )
    cfg = load(tmp_path)
    assert cfg.sandbox.allow_write == [
        "/var/cache/proj",
        str(tmp_path / "build"),
        str(tmp_path / "out"),
    ]
    assert cfg.sandbox.forbid_read == ["/home/ann/.ssh"]
    assert cfg.sandbox.bash == "enforce"


def test_sandbox_missing_variable_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    err = expect_error(
        tmp_path,
        '[sandbox]\nforbid_read = ["${NOT_SET_ANYWHERE}/x"]\n',
        "NOT_SET_ANYWHERE",
        "forbid_read",
    )
    assert err.key == "sandbox.forbid_read"


def test_workspace_root_relative_to_cwd(tmp_path: Path) -> None:
    write(tmp_path / "reasonix.toml", '[sandbox]\nworkspace_root = "sub"\nallow_write = ["w"]\n')
    cfg = load(tmp_path)
    assert cfg.sandbox.workspace_root == str(tmp_path / "sub")
    assert cfg.sandbox.allow_write == [str(tmp_path / "sub" / "w")]


def test_unknown_flag_key_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"agent\.bogus"):
        load(tmp_path, {"agent.bogus": 1})
