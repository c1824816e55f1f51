"""The router's per-entry tables stored in the shared segment and mapped back (issue 17: memory per process).

An index over a mapped segment builds no Python table per entry (positions, ID keys, semantic IDs,
keywords, links, the typo table): it reads array views. Every route must be the one the in-memory
index gives, with or without a delta over it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from common.text import analyze
from knowledge.offline_catalog import folder_dense, load_package_folder
from knowledge.retrieval import bm25, signals, tables
from knowledge.retrieval.delta import index_with_edits
from knowledge.retrieval.entries import Entry
from knowledge.retrieval.index import RouterIndex
from knowledge.retrieval.segments import is_mapped, segment_load, segment_write
from knowledge.retrieval.tables import Overlay, OverlaySeq, Ragged, StrTable
from tests.knowledge.retrieval.test_segments_and_delta import _edited
from tests.knowledge.router import route_snapshot

ROOT = Path(__file__).resolve().parents[3]


def _dev_sets():
    """The labeled question sets other than the held-out test splits, by catalog folder."""
    by_folder: dict[Path, list[Path]] = {}
    for name, folder, path in route_snapshot.question_sets():
        if not name.endswith("/test"):
            by_folder.setdefault(folder, []).append(path)
    return by_folder


def _mapped(tmp_path: Path, entries, key: str) -> RouterIndex:
    built = RouterIndex(entries)
    segment_write(tmp_path, key, built.bm25, tables=built.shared_tables())
    bm25, tables = segment_load(tmp_path, key)
    return RouterIndex(entries, bm25=bm25, tables=tables, dense=folder_dense(entries))


def _outcomes(index: RouterIndex, paths: list[Path]) -> list[dict]:
    import json

    out = []
    for path in paths:
        for row in json.loads(path.read_text(encoding="utf-8")):
            out.append(route_snapshot.outcome(route_snapshot.route_row(index, row)))
    return out


@pytest.fixture(params=["small", "large"])
def paths(request, monkeypatch):
    if request.param == "large":
        monkeypatch.setattr(bm25, "_SMALL_CORPUS", 0)
        monkeypatch.setattr(signals, "_SMALL_KEYWORD_HITS", 0)
    return request.param


def test_an_index_over_mapped_tables_routes_every_dev_question_like_the_in_memory_index(tmp_path, paths):
    for n, (folder, question_files) in enumerate(_dev_sets().items()):
        entries = load_package_folder(folder)
        mapped = _mapped(tmp_path, entries, f"c{n}")
        # Views over the mapped arrays, not tables built from the entries.
        assert isinstance(mapped.bm25.vocabulary, StrTable) and isinstance(mapped.position, StrTable)
        assert isinstance(mapped.id_keys, StrTable) and not isinstance(mapped.entry_keywords, list)
        assert not isinstance(mapped.typos._deletes, dict) and not isinstance(mapped.links, dict)
        fresh = RouterIndex(entries, dense=folder_dense(entries))
        assert _outcomes(mapped, question_files) == _outcomes(fresh, question_files)


def test_a_delta_over_mapped_tables_routes_like_a_fresh_build(tmp_path, paths):
    folder = ROOT / "knowledge" / "catalog"
    entries = load_package_folder(folder)
    edited = _edited(entries)
    mapped = _mapped(tmp_path, entries, "base")
    merged = index_with_edits(mapped, edited, version=2, max_changes=50)
    assert merged is not None and merged.delta_base is mapped
    assert isinstance(merged.position, Overlay) and isinstance(merged.position._base, StrTable)
    fresh = RouterIndex(edited, version=2)
    questions = [p for p in _dev_sets()[folder]]
    merged.attach_dense(None)
    assert _outcomes(merged, questions) == _outcomes(fresh, questions)
    # And exactly what a delta over the in-memory index gives, on any text (titles, keywords, IDs, a focus).
    in_memory = index_with_edits(RouterIndex(entries), edited, version=2, max_changes=50)
    texts = [e.title for e in edited] + [" ".join(e.keywords) for e in edited] + ["ZZ_NEW_PACKAGE prazo"]
    for text in texts:
        for focus in (None, "novo.tela"):
            assert merged.route(text, focus=focus).as_dict() | {"timings_ms": 0} == in_memory.route(
                text, focus=focus
            ).as_dict() | {"timings_ms": 0}


def test_a_str_table_finds_every_key_even_when_hashes_collide(monkeypatch):
    keys = ["prazo", "orçamento", "PKG_000001", "", "a\u0301", "ação"]
    monkeypatch.setattr(tables, "_hash", lambda key: 7)  # every key collides
    table = StrTable.build(keys, [10, 20, 30, 40, 50, 60])
    table.arrays["hashes"][:] = 7
    table = StrTable(**table.arrays)
    assert [table.get(k) for k in keys] == [10, 20, 30, 40, 50, 60]
    assert table.get("prazos") is None and "x" not in table and list(table) == keys


def test_a_str_table_round_trips_through_a_segment_in_id_order(tmp_path):
    keys = [f"term{i}" for i in range(1000)][::-1]
    small = RouterIndex([Entry(package_id="A_ONE", title="prazo de entrega", body="texto")])
    stored = {"v": StrTable.build(keys), "r": Ragged.build([[1, 2], [], [3]]), "n": np.arange(3, dtype=np.int8)}
    segment_write(tmp_path, "t", small.bm25, tables=stored)
    _, loaded = segment_load(tmp_path, "t")
    table = loaded["v"]
    assert is_mapped(table.arrays["hashes"])
    assert list(table) == keys and all(table[k] == i for i, k in enumerate(keys)) and len(table) == 1000
    assert list(loaded["r"]) == [[1, 2], [], [3]]
    assert loaded["n"].dtype == np.int8 and loaded["n"].tolist() == [0, 1, 2]


def test_overlays_change_nothing_in_their_base():
    base = {"a": 1, "b": 2}
    over = Overlay(base)
    over["c"] = 3
    del over["a"]
    over["b"] = 5
    assert dict(over) == {"b": 5, "c": 3} and len(over) == 2 and "a" not in over
    assert base == {"a": 1, "b": 2}
    seq = OverlaySeq([(1,), (2,)])
    seq[0] = (9,)
    seq.append((3,))
    assert list(seq) == [(9,), (2,), (3,)] and len(seq) == 3


def test_entry_keywords_from_the_segment_keep_each_keyword_as_written(tmp_path):
    entries = [
        Entry(package_id="A_ONE", title="um", keywords=("de", "Prazo de Entrega", "prazo de entrega"), body="x"),
        Entry(package_id="B_TWO", title="dois", keywords=("orçamento",), body="y"),
    ]
    built = RouterIndex(entries)
    mapped = _mapped(tmp_path, entries, "kw")
    assert [mapped.entry_keywords[i] for i in range(2)] == [built.entry_keywords[i] for i in range(2)]
    edited = [entries[0], dataclasses.replace(entries[1], keywords=("Prazo de entrega",), revision=2)]
    merged = index_with_edits(mapped, edited, version=2, max_changes=5)
    terms = tuple(dict.fromkeys(analyze("prazo de entrega")))
    assert list(built.keyword_entries[terms]) == [0] and list(merged.keyword_entries[terms]) == [0, 1]


@pytest.mark.parametrize("mapped_base", [False, True])
def test_a_delta_redoes_only_the_link_lists_an_edit_touches_and_they_equal_a_full_resolution(tmp_path, mapped_base):
    from knowledge.retrieval.index import resolve_links

    def entry(i: int, links: str, **kw) -> Entry:
        return Entry(package_id=f"PKG_{i:03d}", title=f"t{i}", aliases=(f"ALIAS_{i:03d}",), body=f"x {links}", **kw)

    # A ring with chords, links by ID and by alias, repeats, a self-link and a link to an ID nobody has yet.
    entries = [
        entry(i, f"[[PKG_{(i + 1) % 40:03d}]] [[ALIAS_{(i * 7) % 40:03d}]] [[PKG_{(i + 1) % 40:03d}]] [[PKG_{i:03d}]]")
        for i in range(40)
    ]
    entries[3] = entry(3, "[[PKG_900]] [[PKG_004]]")
    base = _mapped(tmp_path, entries, "links") if mapped_base else RouterIndex(entries)
    edited = list(entries)
    edited[10] = entry(10, "[[PKG_020]] [[PKG_020]] [[ALIAS_030]]", revision=2)  # new targets
    edited[11] = dataclasses.replace(entries[11], aliases=("ALIAS_007",), revision=2)  # takes no alias: first wins
    del edited[21]  # a link target and a source gone
    edited.append(entry(900, "[[PKG_001]]"))  # resolves PKG_003's dangling link
    merged = index_with_edits(base, edited, version=2, max_changes=10)
    # The base's lists stay; only those of the entries an edit touches are redone.
    assert isinstance(merged.links, Overlay) and 0 < len(merged.links._set) + len(merged.links._gone) < 20
    live = np.flatnonzero(merged.bm25.live).tolist()
    assert dict(merged.links.items()) == resolve_links(merged.link_keys, merged.id_keys, live)
    fresh = RouterIndex(edited)
    as_ids = lambda index: {  # noqa: E731
        index.entries[i].package_id: [index.entries[j].package_id for j in js] for i, js in index.links.items()
    }
    assert as_ids(merged) == as_ids(fresh)


def test_the_tables_a_segment_must_hold_are_the_ones_the_build_exports():
    from knowledge.retrieval.index_tables import TABLE_NAMES

    index = RouterIndex(load_package_folder(ROOT / "knowledge" / "catalog"))
    assert set(index.shared_tables()) == TABLE_NAMES


_WRITE_SEGMENT = """
import hashlib, sys
from pathlib import Path
from knowledge.offline_catalog import load_package_folder
from knowledge.retrieval.index import RouterIndex
from knowledge.retrieval.segments import segment_path, segment_write
index = RouterIndex(load_package_folder(Path(sys.argv[1])))
segment_write(Path(sys.argv[2]), "k", index.bm25, tables=index.shared_tables())
print(hashlib.sha1((segment_path(Path(sys.argv[2]), "k") / "arrays.bin").read_bytes()).hexdigest())
"""


def test_a_segments_bytes_do_not_depend_on_string_hashing(tmp_path):
    """Two processes with different PYTHONHASHSEED write the same catalog's segment byte for byte
    (the typo table's keys used to be filed in set order)."""
    import os
    import subprocess
    import sys

    digests = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", _WRITE_SEGMENT, str(ROOT / "knowledge" / "catalog"), str(tmp_path / seed)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        digests.add(out.stdout.strip())
    assert len(digests) == 1
