"""What ``reasonix setup`` writes: a provider choice turned into config and ``.env`` edits.

The wizard and the non-interactive flags both end in :func:`plan_setup` (validate
the choice) and :func:`apply_setup` (write it). The key goes into
``<home>/.env`` (0600) and nowhere else; the TOML file gets ``default_model``
and, only when something differs from the built-in preset (another URL, a
custom endpoint, another key variable), a ``[[providers]]`` entry that
overrides the preset field by field. Existing keys and comments are kept.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from reasonix.config import paths
from reasonix.config.dotenv import is_valid_key, update_dotenv
from reasonix.config.presets import preset
from reasonix.config.schema import PROVIDER_KINDS
from reasonix.config.tomledit import set_key, upsert_array_entry
from reasonix.errors import UsageError
from reasonix.lazy import dataclass

__all__ = ["SETUP_CHOICES", "SetupPlan", "apply_setup", "plan_setup"]

# setup name -> (built-in preset, one-line description). None: a custom endpoint.
SETUP_CHOICES: dict[str, tuple[str | None, str]] = {
    "deepseek": ("deepseek", "DeepSeek (api.deepseek.com)"),
    "openai": ("openai", "OpenAI (api.openai.com)"),
    "anthropic": ("anthropic", "Anthropic (api.anthropic.com)"),
    "openrouter": ("openrouter", "OpenRouter (openrouter.ai)"),
    "ollama": ("ollama", "Ollama on this machine (no key)"),
    "llama.cpp": ("llama.cpp-server", "llama.cpp llama-server on this machine (no key)"),
    "openai-compatible": (None, "any OpenAI-compatible URL (vLLM, LM Studio, a gateway …)"),
}
CUSTOM_NAME = "custom"
CUSTOM_KEY_ENV = "CUSTOM_API_KEY"


@dataclass(frozen=True)
class SetupPlan:
    """One validated provider choice: enough to probe the endpoint and write the config."""

    choice: str
    provider: str  # the [[providers]] name default_model points at
    kind: str
    base_url: str
    key_env: str  # "" = no key (a custom endpoint gets CUSTOM_API_KEY when a key is given)
    model: str = ""
    models: tuple[str, ...] = ()  # the preset's known models (choices before probing)
    preset_url: str = ""
    preset_key_env: str = ""

    def with_model(self, model: str) -> SetupPlan:
        """The same plan with the default model chosen."""
        return SetupPlan(
            self.choice, self.provider, self.kind, self.base_url, self.key_env, model,
            self.models, self.preset_url, self.preset_key_env,
        )  # fmt: skip


def _check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--base-url {url!r}: expected an http:// or https:// URL with a host")
    return url.rstrip("/")


def plan_setup(
    choice: str,
    *,
    base_url: str | None = None,
    model: str | None = None,
    key_env: str | None = None,
    kind: str | None = None,
) -> SetupPlan:
    """Validate a choice (a name of :data:`SETUP_CHOICES`) and its options (UsageError)."""
    if choice not in SETUP_CHOICES:
        raise UsageError(f"unknown preset {choice!r}; choose one of: {', '.join(SETUP_CHOICES)}")
    if key_env is not None and not is_valid_key(key_env):
        raise UsageError(f"--key-env {key_env!r}: not a valid environment variable name")
    preset_name, _ = SETUP_CHOICES[choice]
    if preset_name is None:
        if not base_url:
            raise UsageError(
                "openai-compatible needs --base-url URL (e.g. http://127.0.0.1:8000/v1)"
            )
        kind = kind or "openai"
        if kind not in PROVIDER_KINDS:
            raise UsageError(f"--kind {kind!r}: choose one of {', '.join(PROVIDER_KINDS)}")
        url = _check_url(base_url)
        return SetupPlan(choice, CUSTOM_NAME, kind, url, key_env or "", model or "")
    if kind is not None:
        raise UsageError(f"--kind goes with openai-compatible; {choice} is fixed")
    base = preset(preset_name)
    assert base is not None, preset_name
    url = _check_url(base_url) if base_url else base.base_url
    env = base.api_key_env if key_env is None else key_env
    return SetupPlan(
        choice, base.name, base.kind, url, env, model or "", tuple(base.models),
        base.base_url, base.api_key_env,
    )  # fmt: skip


def config_target(local: bool, workspace: Path) -> Path:
    """``./reasonix.toml`` with ``--local``, else ``<home>/config.toml``."""
    return paths.project_config_path(workspace) if local else paths.user_config_path()


def apply_setup(plan: SetupPlan, *, key: str | None, local: bool, workspace: Path) -> list[Path]:
    """Write the key (when given) and the config; returns the files written."""
    if not plan.model:
        raise UsageError("no model chosen: give --model MODEL")
    written: list[Path] = []
    custom = plan.provider == CUSTOM_NAME
    key_env = plan.key_env or (CUSTOM_KEY_ENV if key and custom else "")
    if key:
        if not key_env:
            raise UsageError(f"{plan.choice} takes no key; leave it out")
        env_file = paths.env_path()
        env_file.parent.mkdir(parents=True, exist_ok=True)
        update_dotenv(env_file, {key_env: key})  # written 0600
        written.append(env_file)
    target = config_target(local, workspace)
    target.parent.mkdir(parents=True, exist_ok=True)
    fields: dict[str, object] = {"name": plan.provider}
    if custom:
        fields["kind"] = plan.kind
    if custom or plan.base_url != plan.preset_url:
        fields["base_url"] = plan.base_url
    if key_env != plan.preset_key_env or (custom and key_env):
        fields["api_key_env"] = key_env
    if custom or (plan.models and plan.model not in plan.models):
        fields["models"] = [plan.model]
    set_key(target, "", "default_model", f"{plan.provider}/{plan.model}")
    if len(fields) > 1:
        upsert_array_entry(target, "providers", plan.provider, fields)
    written.append(target)
    return written
