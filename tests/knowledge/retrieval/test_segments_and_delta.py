"""The shared on-disk index (segments.py) and edits through a delta (delta.py) route like a fresh build."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from knowledge.offline_catalog import folder_dense, load_package_folder
from knowledge.retrieval import bm25, signals
from knowledge.retrieval.delta import MergedBM25Index, index_with_edits
from knowledge.retrieval.dense import DenseIndex
from knowledge.retrieval.entries import Entry
from knowledge.retrieval.index import RouterIndex
from knowledge.retrieval.segments import (
    SegmentError,
    is_mapped,
    segment_exists,
    segment_load,
    segment_lock,
    segment_write,
    segments_collect,
)
from tests.knowledge.router.route_snapshot import SNAPSHOT, collect, compact

ROOT = Path(__file__).resolve().parents[3]


def _edited(entries: list) -> list:
    """A few edits of every kind: a body, keywords and summary, a removal, two additions (one linking back)."""
    out = list(entries)
    out[1] = dataclasses.replace(
        out[1], body=out[1].body + "\n\nRevisado: prazo novo de entrega e orçamento.", revision=9
    )
    out[3] = dataclasses.replace(
        out[3], summary="Resumo reescrito sobre assinatura", keywords=("assinatura digital", *out[3].keywords[:1])
    )
    removed = out.pop(5)
    first = out[0]
    out.append(
        Entry(
            package_id="ZZ_NEW_PACKAGE",
            title="Pacote novo de prazos e orçamento",
            summary="Como pedir orçamento com prazo curto",
            keywords=("prazo curto", *first.keywords[:1]),
            semantic_ids=(*first.semantic_ids[:1], "novo.tela"),
            body=f"Texto novo. Ver [[{first.package_id}]] e [[{removed.package_id}]].",
        )
    )
    out.append(dataclasses.replace(removed, package_id="ZZ_MOVED_" + removed.package_id[:20], aliases=()))
    return out


def _fresh(entries, config=None):
    return RouterIndex(entries, config=config, dense=folder_dense(entries))


def _with_dense(index: RouterIndex) -> RouterIndex:
    """The entry vectors of the dense signal, as the service attaches them: none for a delta's dead slots."""
    dense = folder_dense(index.entries)
    if dense is not None:
        live = getattr(index.bm25, "live", None)
        index.attach_dense(
            DenseIndex.from_rows(
                [
                    dense.matrix[i] if dense.present[i] and (live is None or live[i]) else None
                    for i in range(len(index.entries))
                ]
            )
        )
    return index


@pytest.fixture(params=["small", "large"])
def paths(request, monkeypatch):
    if request.param == "large":
        # The paths big catalogs take (MaxScore top-k, numpy keyword sums).
        monkeypatch.setattr(bm25, "_SMALL_CORPUS", 0)
        monkeypatch.setattr(signals, "_SMALL_KEYWORD_HITS", 0)
    return request.param


def test_an_index_over_a_memory_mapped_segment_delivers_the_recorded_results(tmp_path, paths):
    def from_segment(folder):
        built = RouterIndex(load_package_folder(folder))
        key = f"k{abs(hash(str(folder)))}"
        segment_write(tmp_path, key, built.bm25, tables=built.shared_tables())
        mapped, tables = segment_load(tmp_path, key)
        assert is_mapped(mapped._postings.data) and not isinstance(mapped._postings.data, np.memmap)
        return RouterIndex(
            built.entries,
            bm25=mapped,
            content_digest=built.content_digest,
            dense=folder_dense(built.entries),
            tables=tables,
        )

    recorded = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert compact(collect(from_segment)) == recorded


def test_base_plus_delta_routes_every_labeled_question_like_a_fresh_build(paths):
    def fresh(folder):
        return _fresh(_edited(load_package_folder(folder)))

    def delta(folder):
        entries = load_package_folder(folder)
        merged = index_with_edits(_fresh(entries), _edited(entries), version=2, max_changes=50)
        assert merged is not None and merged.delta_base is not None
        assert isinstance(merged.bm25, MergedBM25Index)
        assert merged.dense is None  # the base's vectors are aligned with the base's entries
        return _with_dense(merged)

    assert collect(delta) == collect(fresh)


def test_delta_statistics_and_scores_equal_a_fresh_build_bit_for_bit():
    entries = load_package_folder(ROOT / "knowledge" / "catalog")
    edited = _edited(entries)
    merged = index_with_edits(RouterIndex(entries), edited, version=2, max_changes=50)
    fresh = _fresh(edited)
    assert len(merged) == len(fresh) == len(edited)
    assert merged.bm25.n_docs == fresh.bm25.n_docs and merged.bm25.avgdl == fresh.bm25.avgdl
    assert dict(merged.bm25.vocabulary_df()) == fresh.bm25.vocabulary_df()
    slots = [merged.position[e.package_id] for e in edited]  # fresh index i ↔ merged slot
    for query in ("prazo do sanger", "orçamento assinatura digital", "pacote novo prazo curto", "resumo reescrito"):
        terms = {t: 1.0 for t in query.split()}
        assert merged.bm25.scores(terms)[slots].tolist() == fresh.bm25.scores(terms).tolist()
        ours = [(merged.entries[i].package_id, s) for i, s in merged.bm25.top_k(terms, 10)]
        theirs = [(fresh.entries[i].package_id, s) for i, s in fresh.bm25.top_k(terms, 10)]
        assert ours == theirs
    assert {merged.entries[i].package_id for i in merged.strict_rules} == {
        fresh.entries[i].package_id for i in fresh.strict_rules
    }
    links = {(merged.entries[i].package_id, merged.entries[j].package_id) for i, js in merged.links.items() for j in js}
    assert links == {
        (fresh.entries[i].package_id, fresh.entries[j].package_id) for i, js in fresh.links.items() for j in js
    }


def test_a_removed_entry_is_never_delivered_and_a_new_one_is():
    entries = load_package_folder(ROOT / "knowledge" / "catalog")
    gone = entries[5]
    merged = index_with_edits(RouterIndex(entries), _edited(entries), version=2, max_changes=50)
    for text in (gone.title, gone.package_id, " ".join(gone.keywords)):
        assert gone.package_id not in {d.id for d in merged.route(text).ranked()}
    assert "ZZ_NEW_PACKAGE" in {d.id for d in merged.route("pacote novo de prazos e orçamento").ranked()}


def test_too_many_changes_or_a_new_order_ask_for_a_full_build():
    entries = load_package_folder(ROOT / "knowledge" / "catalog")
    base = RouterIndex(entries)
    assert index_with_edits(base, _edited(entries), version=2, max_changes=3) is None
    assert index_with_edits(base, list(reversed(entries)), version=2, max_changes=50) is None
    unchanged = index_with_edits(base, entries, version=2, max_changes=50)
    assert unchanged is not None and unchanged.bm25.n_docs == len(entries)


def test_deltas_do_not_stack_they_are_taken_against_the_base():
    entries = load_package_folder(ROOT / "knowledge" / "catalog")
    base = RouterIndex(entries)
    first = index_with_edits(base, _edited(entries), version=2, max_changes=50)
    second = index_with_edits(first, entries, version=3, max_changes=50)
    assert second.delta_base is base and len(second) == len(entries)
    assert collect_one(second) == collect_one(base)


def test_an_edited_kind_is_delivered_as_its_new_kind_after_the_base_has_routed():
    # The base's lazy query-path caches (entry heads, which positions are procedures or rules)
    # describe its entries: a delta must not read them for an entry whose kind changed.
    entries = load_package_folder(ROOT / "knowledge" / "catalog")
    base = RouterIndex(entries)
    at, target = next((i, e) for i, e in enumerate(entries) if e.kind == "knowledge")
    question = target.title
    assert target.package_id in base.route(question).delivered_ids
    assert target.package_id not in base.route(question).procedure_ids
    edited = list(entries)
    edited[at] = dataclasses.replace(target, kind="procedure", revision=target.revision + 1)
    merged = index_with_edits(base, edited, version=2, max_changes=50)
    assert merged is not None and merged.delta_base is base
    assert target.package_id in merged.route(question).procedure_ids
    assert collect_one(merged) == collect_one(RouterIndex(edited))


def collect_one(index) -> list:
    return [[d.id for d in index.route(q).ranked()] for q in ("prazo do sanger", "como assino o orçamento")]


# ------------------------------------------------------------------ storage


def test_a_segment_round_trips_and_a_bad_one_is_refused(tmp_path):
    entries = load_package_folder(ROOT / "knowledge" / "catalog")
    built = RouterIndex(entries)
    segment_write(tmp_path, "one", built.bm25)
    mapped, _ = segment_load(tmp_path, "one")
    assert list(mapped.vocabulary) == list(built.bm25.vocabulary)
    for name in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(mapped._postings, name), getattr(built.bm25._postings, name))
    assert np.array_equal(mapped.tf, built.bm25.tf) and mapped.avgdl == built.bm25.avgdl
    data = tmp_path / "one" / "arrays.bin"
    whole = data.read_bytes()
    # A truncated data file, a foreign one of the right size, an array placed past the end: refused.
    data.write_bytes(whole[:-64])
    with pytest.raises(SegmentError):
        segment_load(tmp_path, "one")
    data.write_bytes(b"\0" * len(whole))
    with pytest.raises(SegmentError):
        segment_load(tmp_path, "one")
    data.write_bytes(whole)
    meta_path = tmp_path / "one" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["arrays"]["vocab/offsets"]["shape"] = [len(whole)]
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(SegmentError):
        segment_load(tmp_path, "one")
    with pytest.raises(SegmentError):
        segment_load(tmp_path, "missing")


def test_a_format_2_segment_of_npy_files_is_refused_not_misread(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "meta.json").write_text(json.dumps({"format": 2, "n_docs": 1, "n_terms": 1, "tables": {}}))
    np.save(folder / "indptr.npy", np.zeros(2, dtype=np.int64))
    with pytest.raises(SegmentError, match="format 2"):
        segment_load(tmp_path, "old")


def test_a_segment_is_one_data_file_mapped_once_per_process(tmp_path):
    entries = load_package_folder(ROOT / "knowledge" / "catalog")
    built = RouterIndex(entries)
    segment_write(tmp_path, "one", built.bm25, tables=built.shared_tables())
    assert sorted(p.name for p in (tmp_path / "one").iterdir()) == ["arrays.bin", "meta.json"]
    bm25_index, tables = segment_load(tmp_path, "one")
    index = RouterIndex(entries, bm25=bm25_index, tables=tables)
    index.route("prazo do sanger")
    segment = str((tmp_path / "one").resolve())
    mappings = [line for line in Path("/proc/self/maps").read_text().splitlines() if segment in line]
    assert len(mappings) == 1 and mappings[0].endswith("/arrays.bin")
    # Python's mmap keeps a duplicate of the file's descriptor while the mapping lives: one, not one per array.
    descriptors = [fd for fd in Path("/proc/self/fd").iterdir() if os.path.realpath(fd).startswith(segment)]
    assert len(descriptors) == 1


def test_the_build_lock_is_exclusive_and_old_segments_are_collected(tmp_path):
    small = RouterIndex([Entry(package_id="A_ONE", title="prazo de entrega", body="texto")])
    with segment_lock(tmp_path, "busy") as held, segment_lock(tmp_path, "busy", blocking=False) as other:
        assert held is True and other is False
    for i, key in enumerate(["old1", "old2", "recent", "busy"]):
        segment_write(tmp_path, key, small.bm25)
        os.utime(tmp_path / key, (1000 + i, 1000 + i))
    waiting = threading.Event()
    with segment_lock(tmp_path, "old1"):  # a segment whose lock is held (being rewritten) is left alone
        waiting.set()
        removed = segments_collect(tmp_path, keep=2)
    assert removed == ["old2"]
    assert segment_exists(tmp_path, "old1") and segment_exists(tmp_path, "recent") and segment_exists(tmp_path, "busy")
    assert segments_collect(tmp_path, keep=2, protect=("old1",)) == []
    assert segments_collect(tmp_path, keep=1) == ["recent", "old1"]
    # A collected segment's lock file stays (a process may be waiting on it) until it is an hour old.
    assert (tmp_path / "old2.lock").exists()
    os.utime(tmp_path / "old2.lock", (1000, 1000))
    segments_collect(tmp_path, keep=1)
    assert not (tmp_path / "old2.lock").exists() and (tmp_path / "busy.lock").exists()


_CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})
from knowledge.retrieval.segments import segment_load
index, _ = segment_load({dir!r}, {key!r})
print(json.dumps({{"n": index.n_docs, "top": index.top_k({{"prazo": 1.0, "sanger": 1.0}}, 3)}}), flush=True)
"""


def test_two_processes_map_one_segment_and_see_the_same_index(tmp_path):
    entries = load_package_folder(ROOT / "knowledge" / "catalog")
    built = RouterIndex(entries)
    segment_write(tmp_path, "shared", built.bm25)
    code = _CHILD.format(root=str(ROOT), dir=str(tmp_path), key="shared")
    children = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [json.loads(child.communicate(timeout=60)[0]) for child in children]
    expected = [[i, s] for i, s in built.bm25.top_k({"prazo": 1.0, "sanger": 1.0}, 3)]
    assert outputs == [{"n": len(entries), "top": expected}] * 2
