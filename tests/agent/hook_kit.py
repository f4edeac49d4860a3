"""Shared set-up of the hook tests: a workspace wired to the fake provider, hook settings.

The hooks are declared in ``.claude/settings.json`` as Claude Code projects do
(``{"hooks": {EVENT: [{"matcher", "hooks": [{"type": "command", …}]}]}}``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def project(ws: Path, url: str, extra: str = "") -> None:
    """``ws/reasonix.toml``: the fake provider at ``url``, bash unsandboxed, plus ``extra``."""
    (ws / "reasonix.toml").write_text(
        'default_model = "fake/fake-model"\n[sandbox]\nbash = "off"\n'
        f'[[providers]]\nname = "fake"\nkind = "openai"\nbase_url = "{url}"\n'
        'models = ["fake-model"]\napi_key_env = "FAKE_PROVIDER_KEY"\n' + extra
    )


def settings(ws: Path, hooks: dict[str, object]) -> None:
    """Write ``hooks`` as the workspace's ``.claude/settings.json``."""
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))


def hook(command: str, matcher: str = "") -> list[dict[str, object]]:
    """One matcher group running ``command``."""
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]


def save_stdin(path: Path) -> str:
    """A hook command that appends its JSON payload to ``path`` (one per line)."""
    code = f"import sys; open({str(path)!r}, 'a').write(sys.stdin.read().strip() + '\\n')"
    return f"{sys.executable} -c {json.dumps(code)}"
