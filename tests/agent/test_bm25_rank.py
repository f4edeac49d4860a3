"""BM25 tokenizer and ranking on small corpora (MEM-2, D23)."""

from __future__ import annotations

import math

import pytest

from reasonix.agent.memory.bm25 import K1, B, BM25Index, content_terms, tokenize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("parse_json_value", ["parse_json_value", "parse", "json", "value"]),
        ("parseJsonValue", ["parsejsonvalue", "parse", "json", "value"]),
        ("HTTPServer", ["httpserver", "http", "server"]),
        ("hello World", ["hello", "world"]),
        ("v2_api", ["v2_api", "v", "2", "api"]),
        ("上下文管理", ["上下", "下文", "文管", "管理"]),
        ("字", ["字"]),
        ("用 bm25 检索", ["用", "bm25", "bm", "25", "检索"]),
        ("__init__", ["init"]),
    ],
)
def test_tokenize(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_defaults_are_the_decided_constants() -> None:
    assert (K1, B) == (1.2, 0.75)


def test_score_matches_the_formula_by_hand() -> None:
    idx = BM25Index()
    docs = ["apple banana", "apple apple cherry", "durian"]
    for i, d in enumerate(docs):
        idx.add(i, d)
    n, avgdl = 3, 6 / 3
    df = 2
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))

    def term(tf: int, dl: int) -> float:
        return idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avgdl))

    scores = idx.scores(["apple"])
    assert scores[0] == pytest.approx(term(1, 2))
    assert scores[1] == pytest.approx(term(2, 3))
    assert 2 not in scores


def test_rare_terms_outrank_common_ones_and_idf_is_positive() -> None:
    idx = BM25Index()
    for i in range(20):
        idx.add(f"common{i}", "the build failed again")
    idx.add("rare", "the flaky quantum_entangler test failed")
    hits = idx.search("quantum entangler failed", k=3)
    assert hits[0].key == "rare"
    assert idx.idf("the") > 0  # present in every document, still not negative


def test_identifier_parts_and_whole_both_match() -> None:
    idx = BM25Index()
    idx.add("def", "def load_session_records(path): ...")
    idx.add("other", "unrelated text about sessions")
    assert idx.search("load_session_records")[0].key == "def"
    assert idx.search("loadSessionRecords")[0].key == "def"  # camelCase query, snake doc
    assert idx.search("records")[0].key == "def"


def test_cjk_query_matches_only_documents_sharing_a_bigram() -> None:
    idx = BM25Index()
    idx.add("ctx", "上下文管理使用摘要检查点")
    idx.add("mem", "记忆事实保存在文件里")
    idx.add("en", "context management")
    hits = idx.search("上下文", k=5)
    assert [h.key for h in hits] == ["ctx"]
    assert idx.search("管", k=5) == []  # a lone character is not a bigram of either document


def test_incremental_add_updates_statistics() -> None:
    idx = BM25Index()
    idx.add(1, "alpha beta")
    first = idx.idf("alpha")
    idx.add(2, "gamma delta")
    assert idx.idf("alpha") > first  # rarer now
    assert idx.search("gamma")[0].key == 2
    assert len(idx) == 2


def test_top_k_with_maxscore_equals_exhaustive_ranking() -> None:
    idx = BM25Index()
    words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]
    for i in range(400):
        doc = " ".join(words[(i * j) % len(words)] for j in range(1, 2 + i % 7))
        doc += " rare" if i % 97 == 0 else ""
        idx.add(i, doc)
    for query in (["rare", "alpha"], ["alpha", "beta", "gamma"], ["theta", "rare", "eta"]):
        full = sorted(idx.scores(query).items(), key=lambda kv: (-kv[1], kv[0]))[:10]
        got = [(h.key, h.score) for h in idx.search(query, k=10)]
        assert [k for k, _ in got] == [k for k, _ in full]
        assert [s for _, s in got] == pytest.approx([s for _, s in full])


def test_ties_keep_insertion_order() -> None:
    idx = BM25Index()
    for key in ("first", "second", "third"):
        idx.add(key, "same words here")
    assert [h.key for h in idx.search("words")] == ["first", "second", "third"]


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("continue", []),
        ("please go on", []),
        ("继续", []),
        ("fix the parser bug", ["fix", "parser", "bug"]),
        ("上下文", ["上下", "下文"]),
    ],
)
def test_content_terms_drop_stop_words(query: str, terms: list[str]) -> None:
    assert content_terms(query) == terms
