"""``reasonix setup [--local]``: choose a provider, store its key, test it, pick a model.

Interactive (a terminal, no ``--preset``): a short wizard in plain lines — pick a
preset, paste the key with hidden input, see the endpoint answer (or why not,
in plain words), choose the default model. For scripts:
``reasonix setup --preset NAME [--base-url U] [--model M] [--key-env VAR]
[--key-stdin] [--kind K] [--local] [--no-test]``. The key only ever goes to
``<home>/.env`` (0600); ``<home>/config.toml`` (or ``./reasonix.toml`` with
``--local``) gets the default model, keeping every other line and comment.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from pathlib import Path

from reasonix.config.setup_plan import SETUP_CHOICES, SetupPlan, apply_setup, plan_setup
from reasonix.errors import ProviderError, UsageError

__all__ = ["configure", "execute", "offer_wizard", "wizard"]

SHOW_MODELS = 30  # longer lists are cut in the wizard (any name can still be typed)


def configure(parser: argparse.ArgumentParser) -> None:
    """Declare the setup flags."""
    parser.description = "Set up a model provider: key in <home>/.env, model in the config."
    add = parser.add_argument
    add("--local", action="store_true", help="write ./reasonix.toml instead of <home>/config.toml")
    add("--preset", choices=list(SETUP_CHOICES), help="non-interactive: the provider preset")
    add("--base-url", metavar="URL", help="endpoint URL (needed for openai-compatible)")
    add("--model", metavar="MODEL", help="the default model")
    add("--key-env", metavar="VAR", help="the variable that holds the key in <home>/.env")
    add("--key-stdin", action="store_true", help="read the API key from stdin (one line)")
    add("--kind", choices=("openai", "anthropic", "responses"), help="wire format (custom URL)")
    add("--no-test", action="store_true", help="do not contact the endpoint before writing")


def execute(args: argparse.Namespace) -> int:
    """Run the wizard or the non-interactive form; return the exit code."""
    if args.preset is None:
        if args.key_stdin or not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise UsageError("not a terminal: give --preset NAME (see `reasonix setup --help`)")
        return 0 if wizard(local=args.local) else 1
    return _scripted(args)


def _existing_key(var: str) -> str:
    from reasonix.config import paths
    from reasonix.config.dotenv import read_dotenv

    if not var:
        return ""
    return read_dotenv(paths.env_path()).values.get(var) or os.environ.get(var, "")


def _probe(plan: SetupPlan, key: str) -> list[str]:
    from reasonix.provider.catalog import list_models

    return list_models(plan.kind, plan.base_url, key, timeout=10.0)


def _scripted(args: argparse.Namespace) -> int:
    from reasonix.provider.catalog import plain_words

    plan = plan_setup(
        args.preset, base_url=args.base_url, model=args.model, key_env=args.key_env, kind=args.kind
    )
    key = sys.stdin.readline().strip() if args.key_stdin else ""
    if args.key_stdin and not key:
        raise UsageError("--key-stdin: stdin gave an empty line")
    offered: list[str] = []
    if not args.no_test:
        try:
            offered = _probe(plan, key or _existing_key(plan.key_env))
        except ProviderError as err:
            print(f"reasonix setup: {plan.base_url}: {plain_words(err)}", file=sys.stderr)
            print("nothing was written (use --no-test to write anyway)", file=sys.stderr)
            return 1
    model = plan.model or (plan.models[0] if plan.models else (offered[0] if offered else ""))
    if not model:
        raise UsageError("no model known for this endpoint: give --model MODEL")
    if offered and model not in offered:
        print(f"reasonix setup: note: {model!r} is not in the endpoint's list", file=sys.stderr)
    for path in apply_setup(plan.with_model(model), key=key or None, local=args.local,
                            workspace=Path.cwd()):  # fmt: skip
        print(f"wrote {path}")
    print(f"default model: {plan.provider}/{model}")
    if args.local:
        _trust_note()
    return 0


def _trust_note() -> None:
    """``--local`` wrote the provider into ./reasonix.toml: it applies once trusted."""
    from reasonix.config.trust import decide

    if not decide(Path.cwd())[0]:
        print(
            "note: this folder is not trusted yet, so a provider in its reasonix.toml at a new "
            "host is left out until you trust it: run `reasonix trust` here (the chat asks)",
            file=sys.stderr,
        )


# -- the interactive wizard ---------------------------------------------------------------


def _ask(prompt: str, default: str = "") -> str:
    shown = f"{prompt} [{default}]: " if default else f"{prompt}: "
    answer = input(shown).strip()
    return answer or default


def _pick_preset() -> str:
    names = list(SETUP_CHOICES)
    print("Which provider?")
    for i, name in enumerate(names, 1):
        print(f"  {i}. {name:<18} {SETUP_CHOICES[name][1]}")
    while True:
        answer = _ask("number or name", "1")
        if answer.isdigit() and 1 <= int(answer) <= len(names):
            return names[int(answer) - 1]
        if answer in SETUP_CHOICES:
            return answer
        print(f"  please type 1–{len(names)} or one of the names")


def _plan_for(choice: str) -> SetupPlan:
    while True:
        try:
            if SETUP_CHOICES[choice][0] is None:
                url = _ask("base URL (e.g. http://127.0.0.1:8000/v1)")
                kind = _ask("wire format: openai, anthropic or responses", "openai")
                return plan_setup(choice, base_url=url, kind=kind)
            plan = plan_setup(choice)
            if not plan.key_env:  # a local server: its port may differ
                url = _ask("base URL", plan.base_url)
                return plan_setup(choice, base_url=url)
            return plan
        except UsageError as err:
            print(f"  {err}")


def _read_key(plan: SetupPlan) -> str:
    """The key typed (hidden); "" keeps an existing one or means "none"."""
    custom = SETUP_CHOICES[plan.choice][0] is None
    if not plan.key_env and not custom:
        return ""
    have = _existing_key(plan.key_env)
    if have:
        hint = f"a key is already set in {plan.key_env}; Enter keeps it"
    elif custom:
        hint = "leave empty if the server needs none"
    else:
        hint = f"it is stored as {plan.key_env} in <home>/.env, never in a TOML file"
    print(f"API key ({hint})")
    return getpass.getpass("  key (input hidden): ").strip()


def _choose_model(plan: SetupPlan, offered: list[str]) -> str:
    choices = offered or list(plan.models)
    if not choices:
        while True:
            name = _ask("model name (the endpoint lists none)")
            if name:
                return name
    default = next((m for m in plan.models if m in choices), choices[0])
    print("Default model:")
    for i, name in enumerate(choices[:SHOW_MODELS], 1):
        print(f"  {i}. {name}")
    if len(choices) > SHOW_MODELS:
        print(f"  … {len(choices) - SHOW_MODELS} more: type any name")
    answer = _ask("number or name", default)
    if answer.isdigit() and 1 <= int(answer) <= min(len(choices), SHOW_MODELS):
        return choices[int(answer) - 1]
    return answer


def wizard(*, local: bool = False) -> bool:
    """The interactive setup; True when a configuration was written."""
    from reasonix.provider.catalog import plain_words

    try:
        plan = _plan_for(_pick_preset())
        while True:
            key = _read_key(plan)
            try:
                offered = _probe(plan, key or _existing_key(plan.key_env))
                print(f"  ok: {plan.base_url} answers ({len(offered)} models)")
                break
            except ProviderError as err:
                print(f"  {plain_words(err)}")
                again = _ask("[r]etry, [c]ontinue without a check, [q]uit", "r").lower()
                if again.startswith("q"):
                    print("nothing was written")
                    return False
                if again.startswith("c"):
                    offered = []
                    break
        model = _choose_model(plan, offered)
        for path in apply_setup(plan.with_model(model), key=key or None, local=local,
                                workspace=Path.cwd()):  # fmt: skip
            print(f"wrote {path}")
    except (EOFError, KeyboardInterrupt):
        print("\nsetup cancelled; nothing more was written")
        return False
    print(f"default model: {plan.provider}/{model} — run `reasonix` to start")
    if local:
        _trust_note()
    return True


def offer_wizard(problem: str) -> bool:
    """On a first start with no usable provider: explain, offer the wizard, run it."""
    print(f"reasonix: {problem}")
    try:
        answer = input("No provider is ready. Set one up now? [Y/n] ").strip().lower()
    except (EOFError, KeyboardInterrupt):
        print()
        return False
    if answer not in ("", "y", "yes"):
        return False
    return wizard()
