"""The one table of explicit routing directives, in English and Chinese (D11, COORD-13).

A directive counts only when the user clearly says it: the phrase must begin
a clause (the start of the text, after punctuation or after a connector such
as "then" / "然后") and end one (punctuation, the end, or a connector such as
"and" / "再"), and it must not sit inside quotes, backticks, a fenced code
block or a ``>`` quoted line. Nothing here weighs keywords or guesses how
hard a task is: a phrase is either in the table or it is not.

The approval and rejection tables answer a plan that waits for approval; a
message must consist of one such phrase (punctuation aside) to count.
:data:`PLAN_HEADINGS` names the sections of a plan in both languages.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from reasonix.lazy import Pattern

__all__ = [
    "APPROVALS",
    "DIRECTIVES",
    "PLAN_HEADINGS",
    "REJECTIONS",
    "Directive",
    "find_directive",
    "is_approval",
    "is_rejection",
    "mask_quotes",
]


class Directive(NamedTuple):
    """One phrase and the route it asks for (a Route value).

    A named tuple, not a dataclass: the table below makes ~90 of them when the
    module loads, on every run's first turn (routing reads it), and a tuple class
    costs a tenth of a dataclass's generated methods there.
    """

    phrase: str
    route: str


_ONLY, _APPROVE, _FIRST = "plan_only", "plan_for_approval", "plan_then_execute"

DIRECTIVES: tuple[Directive, ...] = tuple(
    Directive(p, r)
    for r, phrases in (
        (_ONLY, (
            "plan only", "only plan", "just plan", "just plan it", "just make a plan",
            "only make a plan", "make a plan only", "planning only", "only a plan",
            "just the plan", "plan but don't execute", "plan but do not execute",
            "plan without executing", "plan it but don't implement",
            "只规划", "只做规划", "仅规划", "只出计划", "只给计划", "只要计划", "只做计划",
            "只制定计划", "只规划不执行", "规划即可", "只需规划",
        )),
        (_APPROVE, (
            "wait for my approval", "wait for my confirmation", "wait for my go-ahead",
            "wait for approval", "wait for confirmation", "wait for me to approve",
            "wait until i approve", "get my approval first", "ask for my approval first",
            "ask me before executing", "ask me before you start", "let me approve the plan",
            "let me approve the plan first", "let me review the plan first",
            "check with me before executing", "don't start until i approve",
            "do not start until i approve", "plan and wait for my approval",
            "plan and wait for my confirmation",
            "等我确认", "等我批准", "等我同意", "等我审核", "等待我的确认", "等待我确认",
            "等我看过", "我确认后再执行", "经我确认后再执行", "确认后再执行", "批准后再执行",
            "先让我确认", "先给我看计划", "规划后等我确认",
        )),
        (_FIRST, (
            "plan first", "plan it first", "make a plan first", "first make a plan",
            "start with a plan", "draft a plan first", "come up with a plan first",
            "plan before executing", "plan before you start", "plan before coding",
            "plan before implementing", "plan then execute", "plan and then execute",
            "plan, then execute",
            "先规划", "先做规划", "先做计划", "先出计划", "先出个计划", "先制定计划",
            "先定计划", "先规划再执行", "先规划后执行", "规划后再执行", "先想好计划", "先列计划",
            "先写计划",
        )),
    )
    for p in phrases
)  # fmt: skip

# The most restrictive route wins when a text carries several directives (fail closed).
_STRENGTH = {_FIRST: 1, _APPROVE: 2, _ONLY: 3}

_PUNCT = set(",.;:!?，。；：！？、\n()（）[]【】—…~·")
# Words that may stand between a clause boundary and a directive; the conjunctions
# among them start a new clause by themselves ("fix it and wait for my approval").
_EN_LEAD = ("please", "then", "and", "but", "so", "also", "now", "kindly")
_ZH_LEAD = ("请", "然后", "再", "并且", "并", "但是", "但", "帮我", "麻烦", "你", "接着", "之后")
_CONJUNCTIONS = frozenset(
    {"then", "and", "but", "so", "然后", "再", "并且", "但是", "接着", "之后"}
)
_EN_TAIL = ("and", "then", "before", "so", "but", "to", "please", "because", "since", "first")
_ZH_TAIL = ("再", "然后", "之后", "后再", "不要", "别", "并", "但", "等", "吧", "即可", "就好")
_ZH_PARTICLES = ("一下", "下", "吧", "好了", "就行", "就好", "即可")

APPROVALS = frozenset({
    "yes", "y", "ok", "okay", "approve", "approved", "i approve", "lgtm", "go", "go ahead",
    "proceed", "do it", "ship it", "looks good", "sounds good", "execute", "execute it",
    "execute the plan", "start", "yes go ahead", "yes please", "approve the plan",
    "好", "好的", "可以", "行", "批准", "同意", "确认", "执行", "开始", "开始执行", "没问题",
    "就这样", "照做", "按计划执行", "批准执行",
})  # fmt: skip
REJECTIONS = frozenset({
    "no", "n", "nope", "reject", "rejected", "cancel", "discard", "discard the plan",
    "drop it", "forget it",
    "不", "不要", "取消", "拒绝", "算了", "放弃", "不行",
})  # fmt: skip

# Plan section headings (lower case, English and Chinese) -> the plan field they fill.
PLAN_HEADINGS: dict[str, str] = {
    "summary": "summary", "概要": "summary", "摘要": "summary",
    "verified touchpoints": "verified", "verified": "verified", "已验证触点": "verified",
    "candidate touchpoints": "candidates", "candidates": "candidates", "候选触点": "candidates",
    "steps": "steps", "步骤": "steps",
    "non-goals": "non_goals", "non goals": "non_goals", "非目标": "non_goals",
    "risks": "risks", "风险": "risks",
    "acceptance criteria": "acceptance", "acceptance": "acceptance", "验收标准": "acceptance",
    "verification": "verification", "verification commands": "verification", "验证": "verification",
}  # fmt: skip
_FENCE = Pattern(r"```.*?(?:```|$)", re.S)
_QUOTE_PAIRS = (("\u201c", "\u201d"), ("\u2018", "\u2019"), ("\u300c", "\u300d"),
                ("\u300e", "\u300f"), ("\u00ab", "\u00bb"), ("`", "`"), ('"', '"'))  # fmt: skip
_SINGLE = Pattern(r"(?<![\w'])'[^'\n]*'(?![\w'])")
_PLACEHOLDER = " QUOTED "  # a quote reads as one word: it neither opens nor closes a clause


def mask_quotes(text: str) -> str:
    """``text`` with quoted spans, code and ``>`` quoted lines replaced by a placeholder."""
    # Each pattern runs (and is compiled, once per process) only when the character
    # that opens its span is there: most prompts hold no quote, no fence, no ``>``.
    out = _FENCE.sub(_PLACEHOLDER, text) if "```" in text else text
    if ">" in out:
        lines = out.split("\n")
        out = "\n".join(_PLACEHOLDER if ln.lstrip().startswith(">") else ln for ln in lines)
    for open_, close in _QUOTE_PAIRS:
        if open_ in out:
            pattern = re.escape(open_) + r"[^" + re.escape(close) + r"\n]*" + re.escape(close)
            out = re.sub(pattern, _PLACEHOLDER, out)
    return _SINGLE.sub(_PLACEHOLDER, out) if "'" in out else out


def _normal(text: str) -> str:
    return " ".join(text.replace("\u2019", "'").casefold().split())


def _is_cjk(ch: str) -> bool:
    return "\u3000" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef"


def _strip_lead(head: str) -> tuple[str, bool]:
    """``head`` without the connectors that may precede a directive, and whether one
    of them was a conjunction."""
    conjunction = False
    while True:
        head = head.rstrip()
        for word in (*_EN_LEAD, *_ZH_LEAD):
            if not head.endswith(word):
                continue
            before = head[: len(head) - len(word)]
            if _is_cjk(word[0]) or not before or not before[-1].isalnum():
                head, conjunction = before, conjunction or word in _CONJUNCTIONS
                break
        else:
            return head, conjunction


def _starts_clause(text: str, start: int) -> bool:
    head, conjunction = _strip_lead(text[:start])
    if not head or head[-1] in _PUNCT or conjunction:
        return True
    return head[-1] == "-" and (len(head) == 1 or head[-2].isspace())  # " - plan only"


def _ends_clause(text: str, end: int) -> bool:
    tail = text[end:]
    for particle in _ZH_PARTICLES:
        if tail.startswith(particle):
            tail = tail[len(particle) :]
            break
    if tail.startswith(_ZH_TAIL) or not tail.strip():
        return True
    if tail[0] in _PUNCT:
        return True
    if not tail[0].isspace():
        return False
    tail = tail.lstrip()
    if not tail or tail[0] in _PUNCT:
        return True
    word = re.match(r"[a-z']+", tail)
    return word is not None and word.group(0) in _EN_TAIL


def _word_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_'"


def _occurrences(text: str, phrase: str) -> list[tuple[int, int]]:
    """Where ``phrase`` stands in ``text`` as whole words (plain string search: the table
    is matched on every turn, so no regular expressions are compiled for it)."""
    out: list[tuple[int, int]] = []
    latin_start, latin_end = phrase[0].isascii(), phrase[-1].isascii()
    i = text.find(phrase)
    while i >= 0:
        j = i + len(phrase)
        left_ok = not (latin_start and i > 0 and _word_char(text[i - 1]))
        right_ok = not (latin_end and j < len(text) and _word_char(text[j]))
        if left_ok and right_ok:
            out.append((i, j))
        i = text.find(phrase, i + 1)
    return out


def find_directive(text: str) -> Directive | None:
    """The strongest directive stated at a clause boundary outside quotes, or None."""
    clean = _normal(mask_quotes(text))
    found: list[tuple[int, int, Directive]] = []
    for directive in DIRECTIVES:
        for start, end in _occurrences(clean, directive.phrase):
            found.append((start, end, directive))
    found.sort(key=lambda f: (f[0], -(f[1] - f[0])))
    anchored: list[Directive] = []
    ends: list[int] = []
    for start, end, directive in found:
        # A directive may also follow another one directly ("plan first and wait for my approval").
        chained = any(not _strip_lead(clean[e:start])[0].strip() for e in ends if e <= start)
        if (_starts_clause(clean, start) or chained) and _ends_clause(clean, end):
            anchored.append(directive)
            ends.append(end)
    if not anchored:
        return None
    return max(anchored, key=lambda d: _STRENGTH[d.route])


def _reply(text: str) -> str:
    flat = _normal(text)
    flat = re.sub(r"[\s,.;:!?，。；：！？~]+", " ", flat).strip()
    for tail in (" please", " thanks", " thank you"):
        flat = flat.removesuffix(tail)
    return flat.removesuffix("吧").strip()


def is_approval(text: str) -> bool:
    """True when the whole message approves a waiting plan ("yes", "go ahead", "批准")."""
    return _reply(text) in APPROVALS


def is_rejection(text: str) -> bool:
    """True when the whole message rejects a waiting plan ("no", "cancel", "取消")."""
    return _reply(text) in REJECTIONS
