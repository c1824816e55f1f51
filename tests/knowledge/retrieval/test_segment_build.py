"""The streaming segment builder writes, from the entries alone, the segment an in-memory index would
(issue 17: build at 100k entries <= 400 MB).

``segment_build`` reads the entries once, a batch at a time, keeps each batch's postings on disk as
a run and merges the runs by term window into ``arrays.bin``. The contract is byte equality with
``segment_write`` of ``RouterIndex(entries)`` and its tables: every catalog, batching and weighting
below is compared file for file, meta for meta.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import threading
from pathlib import Path

import pytest

from knowledge.offline_catalog import load_package_folder
from knowledge.retrieval import index as index_module
from knowledge.retrieval import postings
from knowledge.retrieval import segment_build as segment_build_module
from knowledge.retrieval.entries import Entry, RouterConfig
from knowledge.retrieval.index import RouterIndex
from knowledge.retrieval.segment_build import _windows, segment_build
from knowledge.retrieval.segments import segment_exists, segment_load, segment_path, segment_write

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))

import bench_router  # noqa: E402


def _files(directory: Path, key: str) -> tuple[str, dict]:
    path = segment_path(directory, key)
    meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    for varying in ("key", "written_at"):
        meta.pop(varying)
    return hashlib.sha1((path / "arrays.bin").read_bytes()).hexdigest(), meta


def _both(tmp_path: Path, entries: list, config: RouterConfig, **kwargs) -> tuple[tuple, tuple]:
    built = RouterIndex(entries, config=config)
    segment_write(tmp_path, "memory", built.bm25, tables=built.shared_tables())
    segment_build(tmp_path, "streamed", iter(entries), config, **kwargs)
    return _files(tmp_path, "memory"), _files(tmp_path, "streamed")


def _synthetic(n: int) -> list:
    entries, _, _ = bench_router.make_catalog(n)
    return entries


def _catalog(name: str) -> list:
    if name == "sample":  # the bundled catalog
        return load_package_folder(ROOT / "knowledge" / "catalog")
    return load_package_folder(ROOT / "knowledge" / "evaluation" / "catalogs" / name / "packages")


@pytest.mark.parametrize(
    "batch, window",
    [(4096, 1 << 20), (97, 5_000), (13, 1), (1, 300)],
    ids=["one-batch", "batches-windows", "tiny-windows", "entry-by-entry"],
)
def test_the_streamed_segment_is_the_in_memory_one_byte_for_byte(tmp_path, monkeypatch, batch, window):
    # The batches decide the term ids (first appearance within a batch goes field by field): the build
    # and the streamed one share ``postings.CHUNK_ENTRIES``. A window of 1 posting still holds a whole term.
    monkeypatch.setattr(postings, "CHUNK_ENTRIES", batch)
    entries = _synthetic(600)[: 120 if batch == 1 else 600]
    memory, streamed = _both(tmp_path, entries, RouterConfig(), window_postings=window)
    assert streamed == memory


@pytest.mark.parametrize("name", ["sample", "hospital", "saas"])
def test_the_labeled_catalogs_stream_to_the_same_segment(tmp_path, monkeypatch, name):
    monkeypatch.setattr(postings, "CHUNK_ENTRIES", 16)
    entries = _catalog(name)
    assert entries
    memory, streamed = _both(tmp_path, entries, RouterConfig(), window_postings=700)
    assert streamed == memory


@pytest.mark.parametrize(
    "weights",
    [
        {"title": 1.3, "body": 0.7},  # not dyadic: float64 frequencies, a float64 ``tf``
        {"body": 0},  # the bodies are not read: their token counts come from the text
        {"keywords": 0, "summary": 0, "aliases": 0},
    ],
    ids=["inexact-weights", "no-body", "few-fields"],
)
def test_other_field_weights_stream_to_the_same_segment(tmp_path, monkeypatch, weights):
    monkeypatch.setattr(postings, "CHUNK_ENTRIES", 64)
    config = RouterConfig(field_weights={**RouterConfig().field_weights, **weights}, k1=1.2, b=0.6, delta=0.5)
    memory, streamed = _both(tmp_path, _synthetic(300), config, window_postings=2_000)
    assert streamed == memory


def test_search_terms_and_edge_cases_stream_to_the_same_segment(tmp_path, monkeypatch):
    monkeypatch.setattr(postings, "CHUNK_ENTRIES", 3)
    base = _catalog("sample")[:8]
    entries = [
        *base,
        dataclasses.replace(base[0], package_id="DUP_ALIAS", aliases=(base[1].package_id,), revision=2),
        Entry(package_id="EMPTY", title="", summary="", body="", kind="knowledge"),
        dataclasses.replace(base[2], package_id="TERMS", search_terms=("turnaround time", "tiempo de entrega")),
        dataclasses.replace(base[3], package_id="SPACES", body="a\u00a0b\u2003c  [[EMPTY]] [[NOWHERE]] [[SPACES]]"),
    ]
    memory, streamed = _both(tmp_path, entries, RouterConfig(), window_postings=10)
    assert streamed == memory


def test_an_empty_catalog_streams_to_the_same_segment(tmp_path):
    memory, streamed = _both(tmp_path, [], RouterConfig())
    assert streamed == memory


def test_the_builder_holds_no_index_and_reads_the_entries_once(tmp_path, monkeypatch):
    def no_index(*args, **kwargs):
        raise AssertionError("segment_build must not build an index in memory")

    monkeypatch.setattr(index_module.RouterIndex, "__init__", no_index)
    entries = _synthetic(200)
    reads = []

    def once():
        for e in entries:
            reads.append(e.package_id)
            yield e

    segment_build(tmp_path, "k", once(), RouterConfig())
    assert reads == [e.package_id for e in entries]
    assert segment_exists(tmp_path, "k")


def test_a_streamed_segment_routes_like_the_index_it_replaces(tmp_path):
    entries = _catalog("sample")
    segment_build(tmp_path, "k", entries, RouterConfig())
    bm25, tables = segment_load(tmp_path, "k")
    mapped = RouterIndex(entries, bm25=bm25, tables=tables)
    built = RouterIndex(entries)
    for question in ("Quanto custa o Sanger e qual o prazo?", "¿Cuánto cuesta la extracción de ADN?", "kits"):
        assert [(d.id, d.shape, d.score) for d in mapped.route(question).ranked()] == [
            (d.id, d.shape, d.score) for d in built.route(question).ranked()
        ]


def test_a_failure_mid_catalog_leaves_no_segment_and_no_temporary_files(tmp_path, monkeypatch):
    monkeypatch.setattr(postings, "CHUNK_ENTRIES", 8)  # batches placed and one being placed when it fails
    entries = _synthetic(50)

    def broken():
        yield from entries[:20]
        raise RuntimeError("the database went away")

    with pytest.raises(RuntimeError):
        segment_build(tmp_path, "k", broken(), RouterConfig())
    assert not segment_exists(tmp_path, "k")
    assert list(tmp_path.iterdir()) == []


def test_an_existing_segment_is_kept(tmp_path):
    entries = _synthetic(30)
    segment_build(tmp_path, "k", entries, RouterConfig())
    before = _files(tmp_path, "k")
    segment_build(tmp_path, "k", [], RouterConfig())  # another catalog under the same key: not rewritten
    assert _files(tmp_path, "k") == before


def test_windows_cover_every_term_once_in_order():
    import numpy as np

    indptr = np.cumsum([0, 5, 0, 0, 40, 1, 1, 1, 0])
    for size in (1, 3, 6, 41, 1000):
        windows = list(_windows(indptr, size))
        assert windows[0][0] == 0 and windows[-1][1] == len(indptr) - 1
        assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(windows, windows[1:]))
        # a window holds at most ``size`` postings unless it is a single term
        assert all(indptr[t1] - indptr[t0] <= size or t1 == t0 + 1 for t0, t1 in windows)
    assert list(_windows(np.zeros(1, dtype=np.int64), 10)) == []


@pytest.mark.parametrize(
    "weights", [{}, {"title": 1.3, "body": 0.7, "keywords": 0.1}], ids=["default", "inexact-weights"]
)
def test_triplets_by_term_are_the_document_ordered_ones_ordered_by_term(weights):
    """``segment_build`` stores a batch's pairs as ``batch_triplets(by_term=True)`` gives them, unsorted:
    they must be the document-ordered pairs, ordered by term then document, with the very same sums."""
    import numpy as np

    config = RouterConfig(field_weights={**RouterConfig().field_weights, **weights})
    field_weights = [(name, float(config.field_weights.get(name, 1.0))) for name in postings.FIELDS]
    entries = _synthetic(400) + _catalog("saas")
    by_doc, by_term = postings.TermTable(), postings.TermTable()
    for start in range(0, len(entries), 128):
        batch = entries[start : start + 128]
        terms, docs, values = postings.batch_triplets(by_doc, batch, field_weights)
        got = postings.batch_triplets(by_term, batch, field_weights, by_term=True)
        order = np.lexsort((docs, terms))
        assert order.tolist() != list(range(len(order)))  # the two orders differ: the test can tell them apart
        for want, have in zip((terms[order], docs[order], values[order]), got):
            assert have.dtype == want.dtype and have.tobytes() == want.tobytes()
    assert list(by_term.vocabulary.items()) == list(by_doc.vocabulary.items())


def test_a_batch_is_placed_while_the_next_one_is_analyzed(tmp_path, monkeypatch):
    # Placing a batch (sorting its pairs, writing its run) waits here until the next batch's analysis has
    # begun: a build that places each batch before reading the next never gets there.
    monkeypatch.setattr(postings, "CHUNK_ENTRIES", 50)
    entries = _synthetic(150)
    analyses, placements = [], []
    second_begun = threading.Event()
    real_fields, real_pairs = segment_build_module.batch_field_terms, segment_build_module.field_pairs

    def fields(*args, **kwargs):
        analyses.append(threading.current_thread())
        if len(analyses) == 2:
            second_begun.set()
        return real_fields(*args, **kwargs)

    def pairs(*args, **kwargs):
        if not placements:
            assert second_begun.wait(10), "the first batch was placed before the second was read"
        placements.append(threading.current_thread())
        return real_pairs(*args, **kwargs)

    monkeypatch.setattr(segment_build_module, "batch_field_terms", fields)
    monkeypatch.setattr(segment_build_module, "field_pairs", pairs)
    memory, streamed = _both(tmp_path, entries, RouterConfig())
    assert streamed == memory
    assert len(analyses) == len(placements) == 3
    assert set(analyses) == {threading.main_thread()}
    assert threading.main_thread() not in placements


def test_a_failure_placing_a_batch_fails_the_build_and_leaves_nothing(tmp_path, monkeypatch):
    # Raised on the placing thread, re-raised by the build: no segment, no runs file, no temporary folder.
    monkeypatch.setattr(postings, "CHUNK_ENTRIES", 50)
    calls = []

    def broken(*args, **kwargs):
        calls.append(threading.current_thread())
        raise OSError("disk full while placing")

    monkeypatch.setattr(segment_build_module, "field_pairs", broken)
    with pytest.raises(OSError, match="while placing"):
        segment_build(tmp_path, "k", _synthetic(150), RouterConfig())
    assert calls and threading.main_thread() not in calls
    assert not segment_exists(tmp_path, "k")
    assert list(tmp_path.iterdir()) == []
