"""Per-entry tables at one size: ``TableBuilder`` (batches) against ``_build_tables`` + ``export_tables``.

    python bench/bench_table_build.py [--size 100000] [--batch 4096] --mode {index,builder} [--trace]

Generates ``bench_router``'s synthetic catalog and builds ``RouterIndex`` over it first (its
vocabulary, document frequencies and body token counts are what ``TableBuilder.finish`` takes; the
build also warms the analyzer's caches the same way for both modes). Then, with full collections
paused as in a build (``index.full_collections_paused``):

- ``index``: drops the index's tables and measures ``index._build_tables(vocabulary_df)`` and
  ``export_tables(index)`` apart (the index's own BM25 part is not counted);
- ``builder``: measures ``TableBuilder.add`` over every batch, then ``finish``; with ``--trace`` each
  batch is a fresh copy of its entries (what the builder keeps of them is then counted; the copy's
  CPU is not measured: CPU runs feed the entries as they are).

Without ``--trace``: CPU seconds (``time.process_time``) of each phase. With ``--trace``: tracemalloc's
peak and end (MB above the start of the phase) of each phase, and of both phases together (the tables a
phase ends with are held while the next runs). Prints one JSON line. Run the two modes back to back.
"""

from __future__ import annotations

import argparse
import gc
import json
import dataclasses
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_router  # noqa: E402

MB = 1024 * 1024
_TABLE_ATTRIBUTES = (
    "position",
    "id_keys",
    "semantic",
    "keyword_ids",
    "entry_keywords",
    "entry_keyword_positions",
    "keyword_entries",
    "keywords_too_common",
    "keywords_by_rarest",
    "typos",
    "link_keys",
    "links",
)


def _fresh(text: str) -> str:
    return (text + ".")[:-1]  # equal, not the same object


def _fresh_copy(entry):
    """``entry`` with strings of its own in the fields the builder reads."""
    return dataclasses.replace(
        entry,
        package_id=_fresh(entry.package_id),
        aliases=tuple(map(_fresh, entry.aliases)),
        keywords=tuple(map(_fresh, entry.keywords)),
        semantic_ids=tuple(map(_fresh, entry.semantic_ids)),
        body=_fresh(entry.body),
    )


class _Phases:
    """CPU seconds, or tracemalloc peak/end in MB, of consecutive phases measured from one origin."""

    def __init__(self, trace: bool):
        self.trace, self.out = trace, {}
        if trace:
            tracemalloc.start()
            self.origin = tracemalloc.get_traced_memory()[0]

    def run(self, name: str, fn):
        if self.trace:
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            result = fn()
            end, peak = tracemalloc.get_traced_memory()
            self.out[f"{name}_peak_mb"] = round((peak - before) / MB, 1)
            self.out[f"{name}_end_mb"] = round((end - before) / MB, 1)
            self.out[f"{name}_peak_from_start_mb"] = round((peak - self.origin) / MB, 1)
            self.out["end_from_start_mb"] = round((end - self.origin) / MB, 1)
        else:
            started = time.process_time()
            result = fn()
            self.out[f"{name}_cpu"] = round(time.process_time() - started, 3)
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--mode", choices=("index", "builder"), required=True)
    parser.add_argument("--trace", action="store_true", help="memory (tracemalloc) instead of CPU time")
    args = parser.parse_args()
    entries, _, _ = bench_router.make_catalog(args.size)
    from knowledge.retrieval.index import RouterIndex, full_collections_paused
    from knowledge.retrieval.index_tables import export_tables
    from knowledge.retrieval.table_build import TableBuilder

    index = RouterIndex(entries)
    vocabulary_df = index.bm25.vocabulary_df()
    vocabulary, doc_freq, body_tokens = index.bm25.vocabulary, index.bm25.doc_freq, index.body_token_counts
    for name in _TABLE_ATTRIBUTES:
        delattr(index, name)
    gc.collect()
    with full_collections_paused():
        phases = _Phases(args.trace)
        if args.mode == "index":
            phases.run("build_tables", lambda: index._build_tables(vocabulary_df))
            tables = phases.run("export", lambda: export_tables(index))
        else:
            builder = TableBuilder(len(entries))

            def add_all():
                for start in range(0, len(entries), args.batch):
                    batch = entries[start : start + args.batch]
                    if args.trace:
                        # Entries of their own, gone after their batch as in the streaming build: the strings
                        # the builder keeps (package IDs, keywords, ...) are then counted as its own.
                        batch = [_fresh_copy(e) for e in batch]
                    builder.add(batch, start)

            phases.run("add", add_all)
            tables = phases.run("finish", lambda: builder.finish(vocabulary, doc_freq, body_tokens))
        out = phases.out
    tables_mb = sum(a.nbytes for t in tables.values() for a in (t.arrays.values() if hasattr(t, "arrays") else (t,)))
    out.update(mode=args.mode, size=args.size, batch=args.batch, tables_arrays_mb=round(tables_mb / MB, 1))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
