"""The ``history`` index kept across searches (issue 38, item 1).

Differential: over generated sessions the kept, incrementally extended index
returns exactly what the old search returned (a fresh :class:`BM25Index` over
every message of the scope, rebuilt per search): same hits, same order.
Counting, not timing: a second search tokenises no message again, and after
N records are appended only those N are tokenised.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from reasonix.agent.memory import history_index
from reasonix.agent.memory.bm25 import BM25Index, tokenize
from reasonix.agent.memory.history import HistorySource
from reasonix.agent.memory.history_index import message_text, term_counts

_WORDS = [
    "parser", "token", "buffer", "offset", "checkpoint", "the", "a", "flux", "cache",
    "parseJsonValue", "HTTPServer", "snake_case_name", "__init__", "v2", "x86_64",
    "令牌", "解析器", "缓存", "キャッシュ", "ア・イ", "café", "naïve", "Ωmega", "😀",
]  # fmt: skip
_SEPARATORS = [" ", " ", " ", "\n", ", ", ".", "(", ")", "=", "—", "…", "\t", "/"]


def _text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(_WORDS) + rng.choice(_SEPARATORS) for _ in range(n))


def _record(rng: random.Random, i: int) -> dict[str, Any]:
    kind = rng.random()
    if kind < 0.08:
        return {"type": "title", "title": f"title {i}"}
    if kind < 0.12:
        return {"type": "message", "message": {"role": "user", "content": ""}}  # not searchable
    role = rng.choice(["user", "assistant", "tool"])
    # repeated short messages make exact score ties, which must keep their order
    content = rng.choice(["run the parser", "ok", _text(rng, rng.randint(1, 40))])
    msg: dict[str, Any] = {"role": role, "content": content}
    if role == "assistant" and rng.random() < 0.3:
        msg["tool_calls"] = [{"id": f"c{i}", "name": "grep", "arguments": '{"pattern": "flux"}'}]
    return {"type": "message", "message": msg}


def _write(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def _old_search(
    source: HistorySource, live: str, records: Sequence[Mapping[str, Any]], scope: str, k: int,
    query: str,
) -> list[tuple[str, int]]:  # fmt: skip
    """The search as it was: every message of the scope into a fresh BM25Index."""
    from reasonix.agent.session import read_records

    docs: list[tuple[str, int, str]] = []
    for i, rec in enumerate(records):
        if text := message_text(rec):
            docs.append((live, i, text))
    if scope != "session":
        dirs = source.project_dirs + (source.global_dirs if scope == "global" else [])
        seen: set[Path] = set()
        for folder in dirs:
            for path in sorted(folder.rglob("*.jsonl")) if folder.is_dir() else []:
                if path.resolve() in seen or path.stem == live:
                    continue
                seen.add(path.resolve())
                for i, rec in enumerate(read_records(path)):
                    if text := message_text(rec):
                        docs.append((path.stem, i, text))
    index = BM25Index()
    for n, (_, _, text) in enumerate(docs):
        index.add(n, text)
    return [docs[int(str(h.key))][:2] for h in index.search(query, k=k)]


_QUERIES = ["parser", "the parser offset", "flux capacitor", "令牌 缓存", "parse json", "ok",
            "HTTPServer snake", "a", "ア・イ café", "nothing-matches-zzz"]  # fmt: skip


@pytest.mark.parametrize("seed", range(6))
def test_same_hits_in_the_same_order_as_a_fresh_index(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    project, other, archive = tmp_path / "proj", tmp_path / "sessions", tmp_path / "archive"
    for d, n in ((project, 3), (other, 2), (archive, 1)):
        for j in range(n):
            _write(d / f"s{seed}-{d.name}-{j}.jsonl", [_record(rng, i) for i in range(30)])
    live: list[dict[str, Any]] = [_record(rng, i) for i in range(40)]
    source = HistorySource(
        current=lambda: ("live", live), project_dirs=[project], global_dirs=[other, archive]
    )
    for step in range(4):
        for scope in ("session", "project", "global"):
            for query in _QUERIES:
                k = rng.choice([1, 3, 8, 50])
                got = [(d.session, d.index) for d in source.search(query, scope, k)]
                assert got == _old_search(source, "live", live, scope, k, query), (step, query)
        # the live session grows and another session's file grows between searches
        live.extend(_record(rng, len(live) + i) for i in range(rng.randint(1, 25)))
        grown = project / f"s{seed}-proj-0.jsonl"
        with grown.open("a") as fh:
            fh.write(json.dumps(_record(rng, 99), ensure_ascii=False) + "\n")


def test_term_counts_equal_the_tokeniser() -> None:
    rng = random.Random(1)
    alphabet = "aZ_9 \n.-・゛ア令牌éΩ😀\u3000x" + "camelCaseWORDSnake_"
    texts = ["", "___", "ア・イ", "x\u30fby", "HTTPServer2go", "__dunder__"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(400)]
    texts += [_text(rng, 30) for _ in range(100)]
    for text in texts:
        counts, length = term_counts(text)
        tokens = tokenize(text)
        assert counts == Counter(tokens), text
        assert length == len(tokens), text


class _Counting:
    """Wraps ``term_counts`` and remembers which texts it tokenised."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.texts: list[str] = []
        real = history_index.term_counts

        def counting(text: str) -> tuple[dict[str, int], int]:
            self.texts.append(text)
            return real(text)

        monkeypatch.setattr(history_index, "term_counts", counting)


def _msg(text: str) -> dict[str, Any]:
    return {"type": "message", "message": {"role": "user", "content": text}}


def test_a_second_search_tokenises_nothing_and_appends_only_themselves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _Counting(monkeypatch)
    live = [_msg(f"message {i} about the parser") for i in range(50)]
    source = HistorySource(current=lambda: ("live", live))
    source.search("parser", "session", 8)
    assert len(seen.texts) == 50
    source.search("parser offset", "session", 8)
    source.search("something else", "session", 8)
    assert len(seen.texts) == 50  # nothing tokenised again
    live.extend([_msg("appended one"), {"type": "title", "title": "t"}, _msg("appended two")])
    hits = source.search("appended", "session", 8)
    assert seen.texts[50:] == ["appended one", "appended two"]
    assert [h.index for h in hits] == [50, 52]


def test_a_file_that_grew_tokenises_its_new_records_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _Counting(monkeypatch)
    path = tmp_path / "sessions" / "old.jsonl"
    _write(path, [_msg(f"old {i} flux") for i in range(20)])
    source = HistorySource(project_dirs=[tmp_path / "sessions"])
    assert len(source.search("flux", "project", 30)) == 20
    source.search("flux", "project", 30)
    assert len(seen.texts) == 20
    with path.open("a") as fh:
        fh.write(json.dumps(_msg("new flux")) + "\n")
    assert len(source.search("flux", "project", 30)) == 21
    assert seen.texts[20:] == ["new flux"]


def test_a_rewritten_or_replaced_transcript_is_indexed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _Counting(monkeypatch)
    current: list[Any] = ["a", [_msg("alpha flux"), _msg("beta flux")]]
    source = HistorySource(current=lambda: (current[0], current[1]))
    assert [h.text for h in source.search("flux", "session", 8)] == ["alpha flux", "beta flux"]
    current[1] = [_msg("gamma flux"), _msg("delta flux"), _msg("more flux")]  # same id, new records
    hits = source.search("flux", "session", 8)
    assert [h.text for h in hits] == ["gamma flux", "delta flux", "more flux"]
    assert len(seen.texts) == 5
    current[:] = ["b", [_msg("epsilon flux")]]  # another live session
    assert [h.session for h in source.search("flux", "session", 8)] == ["b"]
    path = tmp_path / "s" / "f.jsonl"
    _write(path, [_msg("one flux"), _msg("two flux")])
    files = HistorySource(project_dirs=[tmp_path / "s"])
    files.search("flux", "project", 8)
    _write(path, [_msg("three flux"), _msg("four flux"), _msg("five flux")])  # rewritten, longer
    assert {h.text for h in files.search("flux", "project", 8)} == {
        "three flux", "four flux", "five flux"
    }  # fmt: skip


def _live_on_disk(tmp_path: Path, n: int) -> tuple[Path, list[dict[str, Any]]]:
    rng = random.Random(n)
    records: list[dict[str, Any]] = [{"type": "meta", "id": "live", "created": 1.5}]
    records += [_record(rng, i) for i in range(1, n)]
    _write(tmp_path / "sessions" / "live.jsonl", records)
    return tmp_path / "sessions", records


def _kept(folder: Path, records: list[dict[str, Any]]) -> HistorySource:
    source = HistorySource(current=lambda: ("live", records), live_dir=folder)
    source.save_every = 1
    return source


def test_the_next_process_loads_the_kept_index_instead_of_tokenising(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, records = _live_on_disk(tmp_path, 120)
    first = [(d.index, d.text) for d in _kept(folder, records).search("parser", "session", 50)]
    assert (folder / "live.hidx").is_file()
    seen = _Counting(monkeypatch)
    again = _kept(folder, records)  # a new process: nothing in memory
    for query in _QUERIES:
        got = [(d.session, d.index) for d in again.search(query, "session", 8)]
        assert got == _old_search(again, "live", records, "session", 8, query), query
    assert [(d.index, d.text) for d in again.search("parser", "session", 50)] == first
    assert seen.texts == []  # loaded, not tokenised
    records.append(_msg("appended after the load"))
    with (folder / "live.jsonl").open("a") as fh:
        fh.write(json.dumps(records[-1]) + "\n")
    assert again.search("appended", "session", 1)[0].index == len(records) - 1
    assert seen.texts == ["appended after the load"]


@pytest.mark.parametrize(
    "damage",
    ["empty", "garbage", "torn", "other-session", "rewritten", "shorter"],
)
def test_a_damaged_or_stale_kept_index_is_built_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    folder, records = _live_on_disk(tmp_path, 60)
    _kept(folder, records).search("parser", "session", 8)
    kept = folder / "live.hidx"
    data = kept.read_bytes()
    if damage == "empty":
        kept.write_bytes(b"")
    elif damage == "garbage":
        kept.write_bytes(data[:40] + b"\x00{not json\n" + data[40:])
    elif damage == "torn":
        kept.write_bytes(data[:-3])
    elif damage == "other-session":
        kept.write_bytes(data.replace(b'"session":"live"', b'"session":"else"'))
    elif damage == "rewritten":
        records[-1] = _msg("a different last record")
    else:
        del records[30:]
    seen = _Counting(monkeypatch)
    again = _kept(folder, records)
    for query in _QUERIES:
        got = [(d.session, d.index) for d in again.search(query, "session", 8)]
        assert got == _old_search(again, "live", records, "session", 8, query), query
    assert len(seen.texts) == sum(1 for r in records if message_text(r))  # built again


def test_an_unwritable_place_keeps_the_index_in_memory(tmp_path: Path) -> None:
    records = [_msg("parser one"), _msg("parser two")]
    source = _kept(tmp_path / "missing", records)
    assert [d.index for d in source.search("parser", "session", 8)] == [0, 1]
    assert not (tmp_path / "missing").exists()
