import numpy as np
import pytest
from rank_bm25 import BM25Okapi, BM25Plus

from common.text import analyze
from knowledge.retrieval.bm25 import SparseBM25Index

TEXTS = [
    "Prazo de entrega do sequenciamento Sanger em dias úteis",
    "Coleta de amostra de solo com trado e kit de coleta",
    "Preço do sequenciamento Sanger por reação e desconto por volume",
    "Kit de qPCR para o laboratório do cliente com reagentes",
    "Prazo urgente: taxa de urgência e prazo reduzido",
    "Envio de amostras: concentração, volume mínimo e acondicionamento",
    "Primers universais M13 e primer do cliente para Sanger",
    "Tamanho máximo do genoma bacteriano e de fungos",
]
CORPUS = [analyze(t) for t in TEXTS]
QUERIES = [
    ["praz", "sang"],
    ["amostr", "sol"],
    ["kit"],
    ["praz", "praz", "urgenc"],
    ["inexistent"],
    ["sang", "genom", "primer"],
]


@pytest.mark.parametrize("query", QUERIES)
def test_scores_equal_rank_bm25_bm25plus(query):
    index = SparseBM25Index.build(CORPUS)
    reference = BM25Plus(CORPUS)
    assert np.allclose(index.scores(query), reference.get_scores(query))


@pytest.mark.parametrize("query", QUERIES)
def test_candidate_scores_equal_rank_bm25_batch_scores(query):
    index = SparseBM25Index.build(CORPUS)
    reference = BM25Plus(CORPUS)
    candidates = [6, 0, 2]
    assert np.allclose(
        index.scores(query, candidates=np.array(candidates)), reference.get_batch_scores(query, candidates)
    )


def test_parameters_are_honoured_like_rank_bm25():
    index = SparseBM25Index.build(CORPUS, k1=1.2, b=0.5, delta=0.5)
    reference = BM25Plus(CORPUS, k1=1.2, b=0.5, delta=0.5)
    assert np.allclose(index.scores(["praz", "sang"]), reference.get_scores(["praz", "sang"]))


def test_term_in_exactly_half_the_documents_still_scores():
    corpus = [["sanger", "prazo"], ["sanger", "preco"], ["solo"], ["kit"]]
    # The trap: BM25Okapi's IDF is zero for a term in exactly half the documents.
    assert np.allclose(BM25Okapi(corpus).get_scores(["sanger"]), 0.0)
    index = SparseBM25Index.build(corpus)
    scores = index.scores(["sanger"])
    assert scores[0] > scores[2] and scores[1] > scores[3]
    assert [doc for doc, _ in index.top_k(["sanger"], 5)] == [0, 1]


def test_a_tiny_filtered_candidate_set_keeps_whole_corpus_idf():
    corpus = [["sanger", "prazo"], ["sanger", "preco"], ["solo"], ["kit"], ["kit", "prazo"]]
    # Re-indexing only the two filtered candidates is what zeroes BM25Okapi...
    assert np.allclose(BM25Okapi([corpus[0], corpus[1]]).get_scores(["prazo"]), 0.0)
    # ...whereas the candidates scored inside the whole index keep a positive IDF.
    index = SparseBM25Index.build(corpus)
    scores = index.scores(["prazo"], candidates=[0, 1])
    assert scores[0] > scores[1] > 0
    assert index.top_k(["prazo"], 3, candidates=[0, 1]) == [(0, pytest.approx(scores[0]))]


def test_idf_is_positive_even_for_a_term_in_every_document():
    index = SparseBM25Index.build([["a", "b"], ["a"], ["a", "c"]])
    assert index.idf("a") > 0
    assert index.top_k(["a"], 2)


def test_top_k_orders_by_score_then_document_and_skips_unmatched():
    index = SparseBM25Index.build(CORPUS)
    reference = BM25Plus(CORPUS).get_scores(["sang"])
    top = index.top_k(["sang"], 2)
    assert [d for d, _ in top] == list(np.argsort(-reference, kind="stable")[:2])
    assert np.allclose([s for _, s in top], np.sort(reference)[::-1][:2])
    assert index.top_k(["nothing"], 3) == []
    assert len(index.top_k(["sang"], 50)) == 3


def test_top_k_breaks_score_ties_by_document_and_adds_the_floor_to_each_score():
    # Identical documents tie: the lower position comes first, as np.lexsort((pool, -scores)) orders.
    docs = [["praz", "sang"], ["sol"], ["praz"], ["praz", "sang"], ["praz"], ["sang", "praz"], ["praz", "x"]]
    index = SparseBM25Index.build(docs)
    scores = index.scores(["praz", "sang"])
    for k in (3, 5, 6, 10):  # cuts between distinct scores (which of several tied at a cut stay is argpartition's)
        top = index.top_k(["praz", "sang"], k)
        matched = [d for d in range(len(docs)) if {"praz", "sang"} & set(docs[d])]
        expected = sorted(matched, key=lambda d: (-scores[d], d))[:k]
        assert [d for d, _ in top] == expected
        assert [s for _, s in top] == [float(scores[d]) for d in expected]  # the same floats


def test_weighted_build_equals_repeating_tokens():
    docs = [{"praz": 2.0, "sang": 1.0}, {"sol": 1.0}, {"praz": 1.0}]
    index = SparseBM25Index.build_weighted(docs, [3.0, 1.0, 1.0])
    plain = SparseBM25Index.build([["praz", "praz", "sang"], ["sol"], ["praz"]])
    assert np.allclose(index.scores(["praz", "sang"]), plain.scores(["praz", "sang"]))


def test_empty_index_and_empty_query():
    index = SparseBM25Index.build([])
    assert index.top_k(["x"], 3) == []
    index = SparseBM25Index.build(CORPUS)
    assert index.top_k([], 3) == []
    assert np.allclose(index.scores([]), 0.0)


def test_pruned_top_k_equals_exhaustive_ranking_on_a_zipf_corpus():
    rng = np.random.default_rng(7)
    vocab = [f"t{i}" for i in range(400)]
    weights = 1.0 / np.arange(1, 401) ** 1.1
    weights /= weights.sum()
    docs = [list(rng.choice(vocab, size=rng.integers(5, 60), p=weights)) for _ in range(600)]
    index = SparseBM25Index.build(docs)
    for _ in range(200):
        query = list(rng.choice(vocab, size=rng.integers(1, 7), p=weights))
        k = int(rng.integers(1, 15))
        scores = index.scores(query)
        matched = index.match_scores(query) > 0
        expected = sorted(np.flatnonzero(matched), key=lambda d: (-scores[d], d))[:k]
        got = index.top_k(query, k)
        # Same scores in the same order (documents may differ only among exact ties).
        assert np.allclose([s for _, s in got], scores[expected])
        assert np.allclose([s for _, s in got], scores[[d for d, _ in got]])


def test_a_common_terms_bitset_finds_the_same_postings_slots_as_a_binary_search():
    from knowledge.retrieval.bm25 import _TermBits

    rng = np.random.default_rng(11)
    for n_docs in (1, 63, 64, 65, 1000, 4097):
        postings = np.flatnonzero(rng.random(n_docs) < 0.4).astype(np.int32)
        bits = _TermBits.build(postings, n_docs)
        docs = np.sort(rng.choice(n_docs, size=min(n_docs, 300), replace=False)).astype(np.int32)
        positions, held = bits.positions(docs)
        expected_held = np.isin(docs, postings)
        assert held.tolist() == expected_held.tolist()
        assert positions.tolist() == np.searchsorted(postings, docs[expected_held]).tolist()


def test_pruned_top_k_with_common_terms_scores_exactly_like_the_full_walk(monkeypatch):
    # Past the pruning point, common terms are looked up through bitsets: the same numbers
    # (exactly, not approximately) as walking every posting in the same term order.
    from knowledge.retrieval import bm25

    rng = np.random.default_rng(3)
    vocab = [f"t{i}" for i in range(300)]
    weights = 1.0 / np.arange(1, 301) ** 1.2
    weights /= weights.sum()
    docs = [list(rng.choice(vocab, size=rng.integers(5, 60), p=weights)) for _ in range(5000)]
    index = SparseBM25Index.build(docs)
    queries = [
        (list(rng.choice(vocab, size=rng.integers(2, 7), p=weights)), int(rng.integers(1, 40))) for _ in range(100)
    ]
    assert index.n_docs > bm25._SMALL_CORPUS
    pruned = [index.top_k(query, k) for query, k in queries]
    assert index.__dict__.get("_term_bits")  # the common-term path was taken
    monkeypatch.setattr(bm25, "_SMALL_CORPUS", 10**9)
    walked = [index.top_k(query, k) for query, k in queries]
    for got, full in zip(pruned, walked):
        assert [s for _, s in got] == [s for _, s in full]  # bit for bit
        # The same documents, except which of several tied at the cut are kept (argpartition's choice).
        cut = full[-1][1]
        assert [d for d, s in got if s != cut] == [d for d, s in full if s != cut]


def test_postings_placed_batch_by_batch_are_bit_identical_to_one_sort_of_every_triplet(monkeypatch):
    from knowledge.offline_catalog import load_package_folder
    from knowledge.retrieval import postings
    from knowledge.retrieval.entries import DEFAULT_FIELD_WEIGHTS

    entries = load_package_folder(postings_catalog())
    monkeypatch.setattr(postings, "CHUNK_ENTRIES", 3)  # many small batches, terms spread over them
    vocabulary, parts, lengths = postings.weighted_parts(entries, DEFAULT_FIELD_WEIGHTS)
    assert len(parts) > 3
    # Dyadic field weights: the batches hold their frequencies as float32 (exact), placed without a float64 copy.
    assert {values.dtype for _, _, values in parts} == {np.dtype(np.float32)}
    whole = SparseBM25Index.from_triplets(*postings.weighted_triplets(entries, DEFAULT_FIELD_WEIGHTS))
    by_parts = SparseBM25Index.from_parts(vocabulary, parts, lengths)
    assert parts == []  # each batch is let go once its postings are placed
    _assert_bit_identical(whole, by_parts)


def _assert_bit_identical(whole, by_parts) -> None:
    """Every array of the two indexes: same dtype, same bytes."""
    for name in ("indptr", "indices", "data"):
        a, b = getattr(whole._postings, name), getattr(by_parts._postings, name)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    for name in ("idf_values", "doc_freq", "term_max", "lengths", "tf"):
        a, b = getattr(whole, name), getattr(by_parts, name)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def postings_catalog():
    from pathlib import Path

    return Path(__file__).resolve().parents[3] / "knowledge" / "catalog"


def test_postings_with_weights_float32_cannot_hold_are_placed_as_float64_and_stay_bit_identical(monkeypatch):
    from knowledge.offline_catalog import load_package_folder
    from knowledge.retrieval import postings
    from knowledge.retrieval.entries import DEFAULT_FIELD_WEIGHTS

    entries = load_package_folder(postings_catalog())
    weights = {**DEFAULT_FIELD_WEIGHTS, "title": 2.3, "summary": 1.1}  # not dyadic: w·count rounds in float32
    monkeypatch.setattr(postings, "CHUNK_ENTRIES", 3)
    vocabulary, parts, lengths = postings.weighted_parts(entries, weights)
    assert np.dtype(np.float64) in {values.dtype for _, _, values in parts}
    whole = SparseBM25Index.from_triplets(*postings.weighted_triplets(entries, weights))
    by_parts = SparseBM25Index.from_parts(vocabulary, parts, lengths)
    _assert_bit_identical(whole, by_parts)
    assert by_parts.tf.dtype == np.float64


@pytest.mark.parametrize("high", [50, 70_000, 2**31 - 1, 2**40, 2**50])
def test_the_radix_order_of_integer_keys_is_numpys_stable_argsort(high):
    from knowledge.retrieval.sorting import sorted_distinct, sorted_unique_counts, stable_order

    rng = np.random.default_rng(high % 1000)
    keys = rng.integers(0, high, size=20_000, dtype=np.int64)
    keys[::7] = keys[0]  # many equal keys: their original order must be kept
    assert np.array_equal(stable_order(keys), np.argsort(keys, kind="stable"))
    assert np.array_equal(
        stable_order(keys.astype(np.int32) if high < 2**31 else keys), np.argsort(keys, kind="stable")
    )
    unique, counts = sorted_unique_counts(keys)
    expected_unique, expected_counts = np.unique(keys, return_counts=True)
    assert np.array_equal(unique, expected_unique) and np.array_equal(counts, expected_counts)
    assert np.array_equal(sorted_distinct(keys), expected_unique)
    assert stable_order(np.zeros(0, dtype=np.int32)).size == 0
    assert sorted_distinct(np.zeros(0, dtype=np.int64)).size == 0
    assert [a.size for a in sorted_unique_counts(np.zeros(0, dtype=np.int64))] == [0, 0]


def test_negative_keys_are_ordered_by_numpy_itself():
    from knowledge.retrieval.sorting import stable_order

    keys = np.array([3, -1, 2, -1, 0], dtype=np.int64)
    assert np.array_equal(stable_order(keys), np.argsort(keys, kind="stable"))


def test_the_terms_of_a_range_of_postings_match_a_search_of_indptr():
    from knowledge.retrieval.bm25 import _terms_of_postings

    rng = np.random.default_rng(3)
    doc_freq = rng.integers(0, 4, size=500)  # empty terms included
    indptr = np.r_[0, np.cumsum(doc_freq)]
    total = int(indptr[-1])
    for start, end in [(0, total), (0, 1), (5, 6), (17, 400), (total - 3, total)]:
        expected = np.searchsorted(indptr, np.arange(start, end), side="right") - 1
        assert np.array_equal(_terms_of_postings(indptr, start, end), expected)


def test_chunking_a_batch_does_not_import_numpys_masked_arrays():
    # A plain np.unique imports numpy.ma on first use (~14 ms of a process's first edit through a delta).
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from knowledge.retrieval.entries import Entry, RouterConfig\n"
        "from knowledge.retrieval.postings import weighted_triplets\n"
        "weighted_triplets([Entry('A_ONE', 'Prazo do Sanger', body='Prazo: três dias úteis, Sanger.')],"
        " RouterConfig().field_weights)\n"
        "print('numpy.ma' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
