"""The route hot path's shortcuts keep their promises (no database)."""

import re

import pytest

from knowledge.retrieval import Entry, RouterIndex, signals
from knowledge.retrieval.fusion import estimate_tokens


def test_the_token_estimate_counts_words_like_the_whitespace_regex():
    # str.split() and regex \s agree on every whitespace character, Unicode ones included.
    texts = ["a\u00a0b\u2003c\u3000d", "x\x1cy\x1dz\x1e w\x1f", "linha\r\nnova\tcoluna\x0bv\x0cf", "  ", "um"]
    for text in texts:
        words = len(re.findall(r"\S+", text))
        assert estimate_tokens(text) == max(-(-len(text) // 4), -(-words * 4 // 3))


def test_the_per_term_slot_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(signals, "_SLOT_CACHE_MAX", 3)
    index = RouterIndex([Entry("PRAZO", "Prazo do Sanger", body="Prazo em dias úteis.")])
    for word in ("prazo", "xqzwa", "xqzwb", "xqzwc", "xqzwd", "xqzwe"):
        index.route(f"{word} sanger")
    assert len(index.__dict__["_slots_by_term"]) == 3
    # A cached slot answers like a fresh one.
    assert index.route("prazo sanger").full_ids == RouterIndex(index.entries).route("prazo sanger").full_ids


def _word_catalog(n: int = 120) -> tuple[list[Entry], list[str]]:
    import random

    rng = random.Random(17)
    words = ["prazo", "amostra", "envio", "preço", "sanger", "coleta", "laudo", "exame", "sangue", "urina"]
    words += [f"termo{k}" for k in range(40)]
    entries = [
        Entry(
            f"PKG_{i:04d}",
            " ".join(rng.sample(words, 3)),
            summary=" ".join(rng.sample(words, 6)),
            keywords=(" ".join(rng.sample(words, 2)),),
            body=" ".join(rng.choices(words, k=40)),
        )
        for i in range(n)
    ]
    # Typos ("amostar", "prazp") give slots of several corrections, each at its own value.
    questions = [" ".join(rng.sample(words, rng.randint(1, 6))) for _ in range(60)]
    questions += ["prazp da amostar", "qual o prazo e o preço do sanger", "xqzw coleta"]
    return entries, questions


@pytest.mark.parametrize("rows", ["cached", "over budget"])
def test_candidate_coverage_gives_the_numpy_pass_numbers_and_terms(rows, monkeypatch):
    import pickle

    import numpy as np

    from knowledge.retrieval import bm25 as bm25_module

    entries, questions = _word_catalog()
    if rows == "over budget":
        # Three rows fit: the other terms are looked up with `contains`, as `coverage` does.
        monkeypatch.setattr(bm25_module, "_DOC_ROWS_BYTES", 3 * len(entries))
    index = RouterIndex(entries)
    rng = np.random.default_rng(3)
    # Hand-made slots too: a value above its denominator (the min bites), several terms at their
    # own weights (the max), a term unknown to the index next to a known one.
    crafted = [
        [signals.Slot(["praz"], 2.0, 0.5, "prazo"), signals.Slot(["sang"], 1.0, 3.0, "sanger")],
        [signals.Slot(["praz", "amostr", "xqzw"], 0.7, 1.2, "p", {"praz": 0.7, "amostr": 0.3, "xqzw": 1.0})],
        [signals.Slot(["colet", "laud"], 0.4, 0.1, "c", {"colet": 0.4, "laud": 2.0}), signals.Slot([], 0.0, 2.0, "?")],
    ]
    for slots in [signals.query_slots(index, q) for q in questions] + crafted:
        docs = rng.integers(0, len(entries), 50).tolist()  # duplicates included, as kw + bm25 hits have
        expected, expected_terms = signals.coverage(index, slots, np.asarray(docs, dtype=np.int64))
        got, terms = signals._candidate_coverage(index, slots, docs)
        assert got == expected.tolist()  # the same floats, not close ones
        assert [terms[j] for j in range(len(docs))] == [expected_terms[j] for j in range(len(docs))]
        again = pickle.loads(pickle.dumps(terms))
        assert (again.hits == expected_terms.hits).all() and again.labels == expected_terms.labels


@pytest.mark.parametrize("rows", ["score rows", "over budget"])
def test_small_corpus_top_k_sums_like_one_add_per_term(rows, monkeypatch):
    from knowledge.retrieval import bm25 as bm25_module

    entries, questions = _word_catalog()
    if rows == "over budget":
        # Two rows fit: a question with more terms takes the postings (one bincount) instead.
        monkeypatch.setattr(bm25_module, "_SCORE_ROWS_BYTES", 2 * 8 * len(entries))
    bm25 = RouterIndex(entries).bm25
    for q in questions:
        weights = {t: 1.0 + 0.25 * k for k, t in enumerate(dict.fromkeys(signals.analyze(q)))}
        acc, pool, floor = bm25._accumulate_small(weights)
        walk = sorted(
            ((bm25.span(t), w) for t, w in weights.items() if bm25.span(t) is not None),
            key=lambda sw: -sw[0][3] * sw[1],
        )
        expected = acc * 0.0
        for (start, end, _, _), w in walk:
            expected[bm25._postings.indices[start:end]] += bm25._postings.data[start:end] * w
        assert acc.tolist() == expected.tolist()
        assert pool.tolist() == [i for i, v in enumerate(expected.tolist()) if v]
    kept = len(bm25._score_rows.rows)
    assert kept == 2 if rows == "over budget" else kept > 2


def test_document_rows_are_cached_within_a_byte_budget(monkeypatch):
    from knowledge.retrieval import bm25 as bm25_module

    entries, _ = _word_catalog()
    monkeypatch.setattr(bm25_module, "_DOC_ROWS_BYTES", 2 * len(entries))
    bm25 = RouterIndex(entries).bm25
    everyone = list(range(len(entries)))
    assert bm25.doc_row("xqzw") is None  # unknown: nothing cached
    for term in ("praz", "amostr"):
        assert bm25.doc_row(term).tolist() == bm25.contains(term, everyone).tolist()
    assert bm25.doc_row("envi") is None and bm25.doc_row("praz") is not None
    assert len(bm25._doc_rows.rows) == 2 and bm25._doc_rows.bytes == 2 * len(entries)


def test_a_big_corpus_keeps_no_document_rows(monkeypatch):
    from knowledge.retrieval import bm25 as bm25_module

    entries, _ = _word_catalog()
    monkeypatch.setattr(bm25_module, "_DOC_ROWS_MAX_DOCS", len(entries) - 1)
    bm25 = RouterIndex(entries).bm25
    assert bm25.doc_row("praz") is None and not bm25._doc_rows.rows


def _bodies_catalog() -> list[Entry]:
    bodies = [
        "Prazo do Sanger: três dias úteis após o recebimento.",
        "",  # no body: costs nothing
        "a\u00a0b\u2003c\u3000d x\x1cy\x1dz  linha\r\nnova\tcoluna",  # Unicode whitespace splits words too
        "palavra " * 300,
        "🧬 sequenciamento " + "x" * 90,  # one long word: the character estimate wins
    ]
    return [Entry(f"PKG_{i}", f"Título {i}", summary="resumo", body=body) for i, body in enumerate(bodies)]


def test_the_build_counts_every_bodys_token_estimate_from_its_own_tokenization(monkeypatch):
    from knowledge.retrieval import index as index_module

    entries = _bodies_catalog()
    index = RouterIndex(entries)
    assert index.body_token_counts.tolist() == [estimate_tokens(e.body) for e in entries]
    # Delivering a body in full reads the build's count: the text is not split again on a question.
    monkeypatch.setattr(index_module, "estimate_tokens", lambda text: pytest.fail("body re-counted"))
    assert [index.body_tokens(i) for i in range(len(entries))] == [estimate_tokens(e.body) for e in entries]
    assert index.route("prazo do sanger").full_ids[:1] == ["PKG_0"]


def test_a_build_that_does_not_read_bodies_counts_them_when_asked():
    from dataclasses import replace

    from knowledge.retrieval import RouterConfig

    entries = _bodies_catalog()
    config = RouterConfig()
    config = replace(config, field_weights={**config.field_weights, "body": 0.0})
    index = RouterIndex(entries, config=config)
    assert index.body_token_counts is None
    assert [index.body_tokens(i) for i in range(len(entries))] == [estimate_tokens(e.body) for e in entries]


def test_a_segment_stores_the_body_token_counts_and_a_delta_counts_its_edits(tmp_path):
    from dataclasses import replace

    from knowledge.retrieval.delta import index_with_edits
    from knowledge.retrieval.segments import segment_load, segment_write

    entries = _bodies_catalog()
    built = RouterIndex(entries)
    segment_write(tmp_path, "k", built.bm25, tables=built.shared_tables())
    bm25, tables = segment_load(tmp_path, "k")
    mapped = RouterIndex(entries, bm25=bm25, tables=tables)
    assert mapped.body_token_counts.tolist() == built.body_token_counts.tolist()

    edited = list(entries)
    edited[0] = replace(entries[0], body="Prazo do Sanger: " + "muito mais longo " * 200)
    edited.append(Entry("PKG_NEW", "Novo", body="corpo novo do pacote"))
    delta = index_with_edits(mapped, edited, version=2, max_changes=8)
    assert delta is not None
    assert [delta.body_tokens(i) for i in range(len(edited))] == [estimate_tokens(e.body) for e in edited]
    assert mapped.body_tokens(0) == estimate_tokens(entries[0].body)  # the base is untouched


def test_the_strongest_eligible_entries_are_the_plain_sorts_first_n():
    # Wiki-link sources: the n best by (-fused score, package ID); ties on the score are common.
    import random

    rng = random.Random(5)
    entries = [Entry(f"PKG_{rng.randrange(10_000):05d}_{i}", "t") for i in range(60)]
    for _ in range(2_000):
        eligible = set(rng.sample(range(60), rng.randint(0, 25)))
        fused = {i: rng.choice([0.1, 0.2, 0.25, 1 / 3, 0.5]) for i in eligible if rng.random() < 0.9}
        for n in (0, 1, 3, 5, 30, -1):
            plain = sorted(eligible, key=lambda i: (-fused.get(i, 0.0), entries[i].package_id))[:n]
            assert signals._strongest(eligible, fused, entries, n) == plain
