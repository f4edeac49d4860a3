"""``reasonix doctor``: one check per line — ok, warn or fail — each with a fix hint.

Checks: the config files and their merge, the provider key (presence only —
never the key), the endpoint's reachability, the model's window and output
budget, the bash sandbox backend, ripgrep, every MCP server's start-up and
``tools/list`` time, the terminal for the chat view, the state directory and
its free disk space; for a local model server, the window it really serves
(:mod:`reasonix.provider.probe`). Pure data out; the CLI prints it. Nothing
here starts an agent or sends a model request (``GET …/models`` and the
window probe's metadata requests are the only traffic).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix.config import paths
from reasonix.config.model import Config
from reasonix.errors import ConfigError, MissingAPIKey, ProviderError, ReasonixError
from reasonix.lazy import asdict, dataclass

if TYPE_CHECKING:
    from typing import Any

__all__ = ["Check", "run_checks"]

LOW_DISK_WARN = 512 * 1024 * 1024
LOW_DISK_FAIL = 32 * 1024 * 1024


@dataclass
class Check:
    """One health check: ``status`` is ok | warn | fail; ``fix`` says what to do."""

    name: str
    status: str
    detail: str
    fix: str = ""

    def as_dict(self) -> dict[str, str]:
        """The JSON form (``reasonix doctor --json``)."""
        return asdict(self)


def _ok(name: str, detail: str) -> Check:
    return Check(name, "ok", detail)


def _config_checks(workspace: Path) -> tuple[list[Check], Config | None]:
    from reasonix import config as config_mod

    files = {
        "user config": paths.user_config_path(),
        "project config": paths.project_config_path(workspace),
        "project .mcp.json": paths.project_mcp_path(workspace),
        "keys file": paths.env_path(),
    }
    found = [f"{label} {p}" for label, p in files.items() if p.exists()]
    try:
        cfg = config_mod.load(workspace, {})
    except ConfigError as err:
        where = f"{err.file}" + (f" line {err.line}" if err.line else "") if err.file else "config"
        return [Check("config", "fail", str(err), f"fix {where}, then run doctor again")], None
    model = cfg.default_model or "deepseek"
    detail = f"default model {model}; " + ("; ".join(found) if found else "no config files yet")
    checks = [_ok("config", detail)]
    for warning in cfg.warnings:
        checks.append(Check("config", "warn", warning, "remove or rename the key"))
    return checks, cfg


def _provider_checks(cfg: Config) -> list[Check]:
    from reasonix.config import require_api_key
    from reasonix.provider.catalog import list_models, plain_words

    try:
        resolved = cfg.default_resolved()
    except ConfigError as err:
        return [Check("model", "fail", str(err), "set default_model to a provider/model")]
    p = resolved.provider
    out: list[Check] = []
    try:
        key = require_api_key(p)
        where = "no key needed" if not p.api_key_env else f"key present in {p.api_key_env}"
        out.append(_ok("provider key", f"{p.name}: {where}"))
    except MissingAPIKey:
        out.append(
            Check(
                "provider key",
                "fail",
                f"{p.name} needs {p.api_key_env}, which is set nowhere",
                f"run `reasonix setup`, or add {p.api_key_env}=... to {paths.env_path()}",
            )
        )
        key = ""
    window = p.context_window_for(resolved.model)
    budget = p.max_output_tokens_for(resolved.model)
    out.append(
        _ok("model", f"{resolved.ref}: window {window} tokens, output budget {budget or 'auto'}")
    )
    window_check = _window_check(p, resolved.model, key)
    if window_check is not None:
        out.append(window_check)
    url = p.base_url or p.request_url or p.chat_url
    if p.api_key_env and not key:
        out.append(Check("provider", "warn", f"{url}: not contacted without a key"))
        return out
    started = time.monotonic()
    try:
        models = list_models(p.kind, p.base_url or url, key, timeout=5.0, headers=p.headers)
        ms = (time.monotonic() - started) * 1000
        listed = "" if not models or resolved.model in models else f"; {resolved.model} not listed"
        out.append(_ok("provider", f"{url} answers in {ms:.0f} ms ({len(models)} models{listed})"))
    except ProviderError as err:
        out.append(
            Check("provider", "fail", f"{url}: {plain_words(err)}", "check base_url and the key")
        )
    return out


def _window_check(p: Any, model: str, key: str) -> Check | None:
    """Configured and served window of a local server (None when it is not asked)."""
    from reasonix.agent.window import ContextWindow
    from reasonix.provider.probe import probe_window, should_probe

    if not should_probe(p):
        return None
    auth = {"x-api-key": key} if p.kind == "anthropic" else {"Authorization": f"Bearer {key}"}
    found = probe_window(p, model, headers={**(auth if key else {}), **p.headers})
    configured = p.context_window_for(model)
    if found is None or not (found.tokens or found.trained):
        return Check(
            "window",
            "ok",
            f"configured {configured} tokens; the server does not say what it serves",
        )
    window = ContextWindow(configured)
    window.learn_served(found.tokens or found.trained, found.source, hint=found.hint)
    served = window.served
    detail = f"configured {configured} tokens, served {served} ({found.source})"
    if window.limit < configured:
        fix = f"set context_window = {window.limit}, or {found.hint}" if found.hint else ""
        return Check("window", "warn", detail + f"; {window.limit} is used", fix)
    return _ok("window", detail)


def _sandbox_check(cfg: Config, workspace: Path) -> Check:
    from reasonix.permission.sandbox import SandboxSettings, backend_status

    settings = SandboxSettings(cfg.sandbox.bash, workspace, [workspace], [], cfg.sandbox.network)
    backend, problem = backend_status(settings, dict(os.environ))
    if backend:
        return _ok("sandbox", f"bash runs inside {backend} (mode {cfg.sandbox.bash})")
    status = "fail" if cfg.sandbox.bash == "enforce" else "warn"
    fix = "install bubblewrap (apt install bubblewrap)" if sys.platform.startswith("linux") else ""
    return Check("sandbox", status, f"{problem} (mode {cfg.sandbox.bash})", fix)


def _ripgrep_check() -> Check:
    rg = shutil.which("rg")
    if rg:
        return _ok("ripgrep", f"grep and glob use {rg}")
    return Check("ripgrep", "warn", "rg not found: grep and glob use the slower built-in walk",
                 "install ripgrep (apt install ripgrep)")  # fmt: skip


def _mcp_checks(cfg: Config, workspace: Path) -> list[Check]:
    from reasonix.config.expand import chain_lookup, environ_lookup
    from reasonix.plugin.mcp import McpManager

    servers = [s for s in cfg.mcp_servers if s.enabled]
    if not servers:
        return []
    lookup = chain_lookup(cfg.project_env, environ_lookup)
    timeout = cfg.tools.mcp_startup_timeout_seconds
    out: list[Check] = []
    with McpManager(servers, workspace=workspace, env_lookup=lookup, startup_timeout=timeout,
                    call_timeout=timeout) as mgr:  # fmt: skip
        started = time.monotonic()
        mgr.start()
        mgr.wait_ready(timeout + 1)
        ms = (time.monotonic() - started) * 1000
        for st in mgr.status():
            src = next((s.source for s in servers if s.name == st.name), "") or "config"
            if st.state == "ready":
                text = f"{st.name}: ready in ≤{ms:.0f} ms, {len(st.tools)} tools"
                out.append(_ok("mcp", text))
            else:
                why = st.error or st.state
                fix = f"fix or disable [[mcp.servers]] {st.name!r} in {src}"
                out.append(Check("mcp", "fail", f"{st.name}: {why}", fix))
    return out


def _terminal_check() -> Check:
    term = os.environ.get("TERM", "")
    if not sys.stdout.isatty():
        return Check("terminal", "warn", "stdout is not a terminal: the chat uses line mode")
    try:
        import curses  # noqa: F401 - only whether it imports
    except ImportError:
        return Check("terminal", "warn", "no curses module: the chat uses line mode",
                     "use a Python built with curses")  # fmt: skip
    if term in ("", "dumb"):
        return Check("terminal", "warn", f"TERM={term or '(unset)'}: the chat uses line mode",
                     "set TERM, e.g. xterm-256color")  # fmt: skip
    return _ok("terminal", f"TERM={term}: the full-screen chat view is available")


def _state_checks() -> list[Check]:
    state = paths.state_dir()
    try:
        state.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=state, prefix=".doctor-"):
            pass
        out = [_ok("state dir", f"{state} is writable")]
    except OSError as err:
        fix = "fix the permissions or set REASONIX_STATE_HOME"
        return [Check("state dir", "fail", f"{state}: {err.strerror or err}", fix)]
    free = shutil.disk_usage(state).free
    text = f"{free / 2**30:.1f} GiB free under {state}"
    if free < LOW_DISK_FAIL:
        out.append(Check("disk", "fail", text, "free some disk space"))
    elif free < LOW_DISK_WARN:
        out.append(Check("disk", "warn", text, "free some disk space"))
    else:
        out.append(_ok("disk", text))
    return out


def run_checks(workspace: Path) -> list[Check]:
    """Every check, in order; a check that breaks unexpectedly is reported as a fail."""
    checks, cfg = _config_checks(workspace)
    steps: list[Callable[[], Any]] = []
    if cfg is not None:
        steps += [
            lambda: _provider_checks(cfg),
            lambda: _sandbox_check(cfg, workspace),
            lambda: _mcp_checks(cfg, workspace),
        ]
    steps += [_ripgrep_check, _terminal_check, _state_checks]
    for step in steps:
        try:
            got = step()
        except (ReasonixError, OSError) as err:
            got = Check("doctor", "fail", f"a check could not run: {err}")
        checks += got if isinstance(got, list) else [got]
    return checks
