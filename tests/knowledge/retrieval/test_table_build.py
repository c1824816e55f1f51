"""The per-entry tables built batch by batch (``table_build.TableBuilder``, issue 17: build at 100k).

The streaming segment builder writes what ``TableBuilder.finish`` returns where a segment written from a
``RouterIndex`` holds ``export_tables(index)``: the two must be equal array for array (names and their
order, dtypes, bytes), whatever the batch size.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from knowledge.offline_catalog import load_package_folder
from knowledge.retrieval.entries import DEFAULT_FIELD_WEIGHTS, Entry, RouterConfig
from knowledge.retrieval.index import RouterIndex
from knowledge.retrieval.index_tables import TABLE_NAMES, TABLE_ORDER, export_tables
from knowledge.retrieval.segments import segment_path, segment_write
from knowledge.retrieval.table_build import TableBuilder
from knowledge.retrieval.tables import Ragged, StrTable
from tests.knowledge.router import route_snapshot

ROOT = Path(__file__).resolve().parents[3]


def _arrays(table) -> dict[str, np.ndarray]:
    return table.arrays if isinstance(table, (StrTable, Ragged)) else {"": table}


def _built(entries, index: RouterIndex, batch: int) -> dict[str, object]:
    builder = TableBuilder(len(entries) if batch > 1 else None)
    for start in range(0, len(entries), batch):
        builder.add(entries[start : start + batch], start)
    bm25 = index.bm25
    return builder.finish(bm25.vocabulary, bm25.doc_freq, index.body_token_counts)


def _assert_same_tables(entries, batches=(1, 7, 1_000_000), config: RouterConfig | None = None) -> None:
    index = RouterIndex(entries, config=config)
    exported = export_tables(index)
    for batch in batches:
        built = _built(entries, index, batch)
        assert list(built) == list(exported), batch
        for name, table in exported.items():
            assert type(built[name]) is type(table), (batch, name)
            want, got = _arrays(table), _arrays(built[name])
            assert list(got) == list(want), (batch, name)
            for part, array in want.items():
                other = got[part]
                assert (other.dtype, other.shape) == (array.dtype, array.shape), (batch, name, part)
                assert other.tobytes() == array.tobytes(), (batch, name, part)


def _catalog_folders() -> list[Path]:
    return sorted({folder for _, folder, _ in route_snapshot.question_sets()})


def test_tables_of_the_sample_catalogs_equal_the_exported_ones_at_any_batch_size():
    for folder in _catalog_folders():
        _assert_same_tables(load_package_folder(folder))


def test_tables_of_a_synthetic_catalog_equal_the_exported_ones():
    spec = importlib.util.spec_from_file_location("bench_router", ROOT / "bench" / "bench_router.py")
    bench_router = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_router)
    entries, _, _ = bench_router.make_catalog(3000)
    _assert_same_tables(entries, batches=(1, 333, 4096))


def _edge_catalog() -> list[Entry]:
    entries = [
        Entry(
            package_id="PRAZO_ENTREGA",
            title="Prazo de entrega",
            aliases=("prazo entrega", "PRAZOS", "---"),
            # Repeated as written, repeated once analyzed, nothing once analyzed, an empty one.
            keywords=("prazo", "prazo", "Prazos", "de a o", "", "!!!", "prazo de entrega prazo"),
            semantic_ids=("Vendas.Prazo", "vendas.prazo", "VENDAS.PRAZO", "vendas.entrega"),
            # Self, unknown, by alias, written loosely, repeated.
            body="Ver [[PRAZO_ENTREGA]], [[NAO_EXISTE]], [[prazos]], [[Frete grátis]] e [[FRETE_GRATIS]].",
        ),
        Entry(
            package_id="FRETE_GRATIS",
            title="Frete grátis",
            aliases=("PRAZOS",),  # another entry's alias: the first wins
            keywords=("frete grátis", "grátis frete", "prazo"),
            semantic_ids=("Vendas.Frete",),
            body="[[prazo_entrega]] [[FRETE_GRATIS]]",
        ),
        # The same package ID twice: the position of the last, the ID key of the first.
        Entry(package_id="PRAZO_ENTREGA", title="Prazo duplicado", keywords=("duplicado",), body="[[FRETE_GRATIS]]"),
        Entry(package_id="SEM_NADA", title="", body=""),
        # Filed under its rarest term; a term the vocabulary lacks (no keyword weight) counts 0 documents.
        Entry(package_id="FRUTAS", title="Frutas", keywords=("abacate zimbro",), body="Um abacate."),
    ]
    # A keyword carried by more entries than max(50, n // 20): too common, left to BM25.
    for i in range(60):
        entries.append(
            Entry(
                package_id=f"COMUM_{i:03d}",
                title=f"comum {i}",
                keywords=("palavra comum", "comum palavra", f"raro{i}", "zzz unica" if i % 2 else "unica zzz"),
                semantic_ids=(f"Area.Comum{i % 3}",),
                body=f"[[COMUM_{(i + 1) % 60:03d}]] [[comum_{i:03d}]] [[PRAZO_ENTREGA]]",
            )
        )
    return entries


def test_edge_cases_give_the_exported_tables():
    entries = _edge_catalog()
    index = RouterIndex(entries)
    # The edge cases are there: a keyword too common, a duplicate ID, a keyword with no terms.
    assert index.keywords_too_common and len(index.position) < len(entries)
    assert index.entry_keywords[0] != () and len(index.entry_keywords[0]) < len(entries[0].keywords)
    _assert_same_tables(entries, batches=(1, 2, 3, 50, 1000))


def test_tables_follow_the_config_the_vocabulary_was_built_with():
    # Keywords without weight: their terms are missing from the vocabulary (document frequency 0 when
    # a keyword's rarest term is chosen).
    weights = {**DEFAULT_FIELD_WEIGHTS, "keywords": 0.0, "title": 0.0}
    _assert_same_tables(_edge_catalog(), batches=(1, 64), config=RouterConfig(field_weights=weights))


def test_one_ordered_list_names_the_stored_tables():
    # The segment's meta lists the tables in export order: both writers follow TABLE_ORDER.
    exported = export_tables(RouterIndex(load_package_folder(ROOT / "knowledge" / "catalog")[:5]))
    assert list(exported) == list(TABLE_ORDER) and TABLE_NAMES == set(TABLE_ORDER)


def test_an_empty_catalog_gives_empty_tables():
    _assert_same_tables([], batches=(1,))


def test_batches_must_come_in_order_and_the_tables_are_taken_once():
    entries = _edge_catalog()
    index = RouterIndex(entries)
    builder = TableBuilder(2)  # a hint smaller than the catalog: the arrays grow
    builder.add(entries[:3], 0)
    with pytest.raises(ValueError, match="batch starts at 4, expected 3"):
        builder.add(entries[4:], 4)
    builder.add(entries[3:], 3)
    with pytest.raises(ValueError, match="body token counts"):
        builder.finish(index.bm25.vocabulary, index.bm25.doc_freq, index.body_token_counts[:-1])
    builder = TableBuilder()
    builder.add(entries, 0)
    builder.finish(index.bm25.vocabulary, index.bm25.doc_freq, index.body_token_counts)
    with pytest.raises(RuntimeError):
        builder.finish(index.bm25.vocabulary, index.bm25.doc_freq, index.body_token_counts)
    with pytest.raises(RuntimeError):
        builder.add(entries, len(entries))


_UNSTAMPED = {"key": "", "written_at": 0}


def test_a_segment_written_with_the_built_tables_is_byte_identical(tmp_path):
    entries = _edge_catalog() + load_package_folder(ROOT / "knowledge" / "catalog")
    index = RouterIndex(entries)
    segment_write(tmp_path, "exported", index.bm25, tables=export_tables(index))
    segment_write(tmp_path, "built", index.bm25, tables=_built(entries, index, 16))
    exported, built = segment_path(tmp_path, "exported"), segment_path(tmp_path, "built")
    files = sorted(p.relative_to(exported) for p in exported.rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(built) for p in built.rglob("*") if p.is_file())
    for name in files:
        if name.name == "meta.json":  # the key and the time of writing differ, and only those
            built_meta, exported_meta = (json.loads((path / name).read_text()) for path in (built, exported))
            assert built_meta | _UNSTAMPED == exported_meta | _UNSTAMPED
            assert list(built_meta["tables"]) == list(exported_meta["tables"])
        else:
            assert (built / name).read_bytes() == (exported / name).read_bytes(), name
