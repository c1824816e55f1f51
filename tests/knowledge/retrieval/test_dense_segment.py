"""Entry vectors shared by processes (knowledge/retrieval/dense_segment.py) and a delta's overlay
(``DenseIndex.overlay_over``), without the database or the models: random unit vectors."""

import numpy as np
import pytest

from knowledge.retrieval import dense_segment
from knowledge.retrieval.dense import DenseIndex
from knowledge.retrieval.dense_segment import dense_segment as shared_dense
from knowledge.retrieval.dense_segment import vectors_key
from knowledge.retrieval.segments import is_mapped

DIM = 16
MODEL = "test-model"


def _vectors(n: int, seed: int = 0) -> dict[str, bytes]:
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(n):
        v = rng.standard_normal(DIM).astype("<f4")
        out[f"P{i}"] = (v / np.linalg.norm(v)).astype("<f4").tobytes()
    return out


def _fresh(ids, vectors, live=None) -> DenseIndex:
    """What a fresh build ranks by: one matrix of these vectors."""
    matrix = np.zeros((len(ids), DIM), dtype=np.float32)
    present = np.zeros(len(ids), dtype=bool)
    for i, pid in enumerate(ids):
        if pid in vectors and (live is None or live[i]):
            matrix[i] = np.frombuffer(vectors[pid], dtype="<f4")
            present[i] = True
    return DenseIndex(matrix, present, model_id=MODEL)


def _shared(tmp_path, ids, vectors, **kwargs):
    return shared_dense(tmp_path, ids, vectors, model_id=MODEL, dim=DIM, **kwargs)


def test_the_first_call_writes_the_file_and_the_next_maps_it_without_writing(tmp_path, monkeypatch):
    vectors = _vectors(50)
    del vectors["P7"]  # an entry without a vector
    ids = [f"P{i}" for i in range(50)]
    first = _shared(tmp_path, ids, vectors)
    assert is_mapped(first.matrix) and not first.present[7] and first.present.sum() == 49

    def no_write(*args, **kwargs):
        raise AssertionError("written twice")

    monkeypatch.setattr(dense_segment, "dense_segment_write", no_write)
    second = _shared(tmp_path, ids, vectors)
    assert dense_segment.mapped_file(second) == dense_segment.mapped_file(first)
    q = np.frombuffer(vectors["P3"], dtype="<f4")
    assert np.array_equal(second.similarities(q), _fresh(ids, vectors).similarities(q))
    assert second.top_k(q, 1)[0][0][0] == 3


def test_the_key_names_the_content_its_order_and_the_model():
    vectors = _vectors(5)
    ids = list(vectors)
    key = vectors_key(MODEL, DIM, ids, vectors)
    assert vectors_key(MODEL, DIM, ids, dict(vectors)) == key
    assert vectors_key(MODEL, DIM, ids[::-1], vectors) != key
    assert vectors_key("other-model", DIM, ids, vectors) != key
    changed = {**vectors, "P2": _vectors(5, seed=1)["P2"]}
    assert vectors_key(MODEL, DIM, ids, changed) != key
    missing = {k: v for k, v in vectors.items() if k != "P2"}
    assert vectors_key(MODEL, DIM, ids, missing) != key


def test_a_file_of_another_size_is_refused_and_written_anew(tmp_path):
    vectors = _vectors(10)
    ids = list(vectors)
    _shared(tmp_path, ids, vectors)
    (written,) = (tmp_path / "vectors").glob("v*/matrix.npy")
    data = written.read_bytes()
    written.unlink()
    written.write_bytes(data[: len(data) // 2])
    with pytest.raises(dense_segment.DenseSegmentError):
        dense_segment.dense_segment_load(tmp_path, written.parent.name, model_id=MODEL, dim=DIM, rows=10)
    again = _shared(tmp_path, ids, vectors)
    assert again.present.all() and written.stat().st_size == len(data)


def test_old_files_are_collected(tmp_path):
    ids = [f"P{i}" for i in range(5)]
    for seed in range(4):
        _shared(tmp_path, ids, _vectors(5, seed=seed), keep=2)
    assert len([p for p in (tmp_path / "vectors").iterdir() if (p / "meta.json").is_file()]) == 2


def test_an_overlay_ranks_like_a_fresh_matrix_of_the_edited_catalog():
    # Base: 40 entries. The edit: P3 re-embedded, P5 removed (dead slot), P9 live without a vector
    # now, two entries appended after the base's slots (one without a vector).
    base_vectors = _vectors(40)
    base_ids = list(base_vectors)
    base = _fresh(base_ids, base_vectors)
    held = {pid: row for pid, row in zip(base_ids, base.base_rows())}  # the catalog's views
    edited = {**held, "P3": _vectors(40, seed=9)["P3"], "NEW1": _vectors(1, seed=4)["P0"]}
    del edited["P9"]
    ids = [*base_ids, "NEW1", "NEW2"]
    live = [pid != "P5" for pid in ids]
    overlay = base.overlay_over(edited, ids, live)
    assert overlay.matrix is base.matrix and sorted(overlay.overlay_slots.tolist()) == [3, 40]
    fresh = _fresh(ids, edited, live)
    assert np.array_equal(overlay.present, fresh.present)
    for q in (np.frombuffer(edited["P3"], "<f4"), np.frombuffer(edited["NEW1"], "<f4"), base.vector(11)):
        assert np.allclose(overlay.similarities(q), fresh.similarities(q), rtol=0, atol=1e-6)
        assert [i for i, _ in overlay.top_k(q, 5)[0]] == [i for i, _ in fresh.top_k(q, 5)[0]]
    assert overlay.top_k(np.frombuffer(edited["P3"], "<f4"), 1)[0][0][0] == 3
    assert np.array_equal(overlay.vector(3), np.frombuffer(edited["P3"], "<f4"))


def test_an_overlay_recognises_an_unchanged_vector_held_as_other_bytes():
    # A catalog reloaded whole holds fresh bytes equal to the base's rows: nothing is overlaid.
    vectors = _vectors(8)
    ids = list(vectors)
    base = _fresh(ids, vectors)
    overlay = base.overlay_over({k: bytes(v) for k, v in vectors.items()}, ids, [True] * len(ids))
    assert len(overlay.overlay_slots) == 0 and overlay.present.all()


def test_byte_views_equal_the_stored_bytes():
    vectors = _vectors(3)
    dense = _fresh(list(vectors), vectors)
    rows = dense.base_rows()
    assert [bytes(r) for r in rows] == list(vectors.values())
    assert rows[1] == vectors["P1"] and rows[1] != vectors["P2"]


def test_a_file_prepared_from_streamed_rows_is_the_one_processes_map(tmp_path, monkeypatch):
    # The Celery task streams (package, vector) rows from the database in no particular order; the file
    # it writes must carry the key a process holding those vectors computes, or every process writes its own.
    vectors = _vectors(40)
    del vectors["P5"]
    ids = [f"P{i}" for i in range(40)]
    rows = list(vectors.items())[::-1]  # another order than the catalog's
    rows += [("GONE", vectors["P1"]), ("P5", b"\x00" * (DIM * 4 + 4))]  # not in the catalog; another size
    key, written, count = dense_segment.dense_segment_prepare(tmp_path, ids, iter(rows), model_id=MODEL, dim=DIM)
    assert written and count == 39 and key == vectors_key(MODEL, DIM, ids, vectors)

    def no_write(*args, **kwargs):
        raise AssertionError("a process wrote the file the task prepared")

    monkeypatch.setattr(dense_segment, "dense_segment_write", no_write)
    mapped = _shared(tmp_path, ids, vectors)
    assert dense_segment.mapped_file(mapped).startswith(str(tmp_path / "vectors" / key))
    q = np.frombuffer(vectors["P9"], dtype="<f4")
    assert np.array_equal(mapped.similarities(q), _fresh(ids, vectors).similarities(q))
    assert not mapped.present[5]
    again = dense_segment.dense_segment_prepare(tmp_path, ids, iter(rows), model_id=MODEL, dim=DIM)
    assert again == (key, False, 39)
    assert [p.name for p in (tmp_path / "vectors").iterdir() if p.is_dir()] == [key]  # no temporary left


def test_without_any_vector_nothing_is_prepared(tmp_path):
    ids = ["P0", "P1"]
    rows = iter([("P0", b"\x00" * 8), ("OTHER", _vectors(1)["P0"])])
    assert dense_segment.dense_segment_prepare(tmp_path, ids, rows, model_id=MODEL, dim=DIM) == (None, False, 0)
    assert not [p for p in (tmp_path / "vectors").iterdir() if p.is_dir()]


# Example questions' rows (format 2): in the shared file, mapped, and overlaid by a delta.


def _examples(ids, seed: int = 5, rows=(1, 2, 3)) -> dict[str, bytes]:
    """Some entries' example-question rows: 1–3 random unit vectors each."""
    rng = np.random.default_rng(seed)
    out = {}
    for n, pid in enumerate(ids):
        block = rng.standard_normal((rows[n % len(rows)], DIM)).astype("<f4")
        out[pid] = (block / np.linalg.norm(block, axis=1, keepdims=True)).astype("<f4").tobytes()
    return out


def _fresh_with(ids, vectors, examples, live=None) -> DenseIndex:
    """What a fresh build in memory ranks by: the vectors, and the example rows of the live entries that have one."""
    dense = _fresh(ids, vectors, live)
    dense.attach_examples({i: examples[pid] for i, pid in enumerate(ids) if pid in examples and dense.present[i]})
    return dense


def _same_ranking(a: DenseIndex, b: DenseIndex, queries, share=0.3):
    for q in queries:
        assert np.allclose(a.similarities(q, share), b.similarities(q, share), rtol=0, atol=1e-6)
        assert [i for i, _ in a.top_k(q, 5, share)[0]] == [i for i, _ in b.top_k(q, 5, share)[0]]


def test_example_rows_are_in_the_file_every_process_maps(tmp_path, monkeypatch):
    vectors = _vectors(30)
    del vectors["P7"]
    ids = [f"P{i}" for i in range(30)]
    examples = _examples(["P2", "P7", "P11", "P29"])  # P7 has no vector: its rows never count
    first = _shared(tmp_path, ids, vectors, examples=examples)
    ((rows, slots, starts, keep),) = first.example_groups
    assert is_mapped(rows) and keep is None and slots.tolist() == [2, 11, 29] and starts.tolist() == [0, 1, 4]
    assert {i: bytes(v) for i, v in first.example_rows().items()} == {
        2: examples["P2"],
        11: examples["P11"],
        29: examples["P29"],
    }

    monkeypatch.setattr(dense_segment, "dense_segment_write", lambda *a, **k: pytest.fail("written twice"))
    second = _shared(tmp_path, ids, vectors, examples=examples)
    fresh = _fresh_with(ids, vectors, examples)
    # A question worded as P11's second example question: the mixed cosine brings P11 up.
    asked = np.frombuffer(examples["P11"], "<f4").reshape(-1, DIM)[1]
    _same_ranking(second, fresh, [asked, np.frombuffer(vectors["P3"], "<f4")])
    assert second.similarities(asked, 0.3)[11] > second.similarities(asked)[11]
    assert second.top_k(asked, 1, 0.9)[0][0][0] == 11 and fresh.top_k(asked, 1)[0][0][0] != 11


def test_the_key_names_the_example_rows_too():
    vectors = _vectors(5)
    ids = list(vectors)
    examples = _examples(["P1", "P3"])
    key = vectors_key(MODEL, DIM, ids, vectors, examples)
    assert key != vectors_key(MODEL, DIM, ids, vectors)
    assert vectors_key(MODEL, DIM, ids, vectors, dict(examples)) == key
    other = np.frombuffer(examples["P3"], "<f4").copy()
    other[-1] = -other[-1]  # the same number of rows, one value changed
    assert vectors_key(MODEL, DIM, ids, vectors, {**examples, "P3": other.tobytes()}) != key
    # Rows of another width, or beside no vector, are not kept: they name nothing.
    odd = {**examples, "P4": b"\x00" * (DIM * 4 + 4)}
    assert vectors_key(MODEL, DIM, ids, vectors, odd) == key
    without_p0 = {k: v for k, v in vectors.items() if k != "P0"}
    assert vectors_key(MODEL, DIM, ids, without_p0, {**examples, "P0": examples["P1"]}) == vectors_key(
        MODEL, DIM, ids, without_p0, examples
    )


def test_a_file_prepared_with_example_rows_is_the_one_processes_map(tmp_path, monkeypatch):
    # The Celery task streams (package, vector, example rows) in no particular order: the example rows go
    # to the file as they come, and the key is still the one a process holding them computes.
    vectors = _vectors(40)
    ids = [f"P{i}" for i in range(40)]
    examples = _examples(["P3", "P9", "P20", "P39"])
    rows = [(pid, vector, examples.get(pid, b"")) for pid, vector in list(vectors.items())[::-1]]
    rows.append(("P9", vectors["P1"], examples["P3"]))  # a package's second row: skipped, as a process holds one
    key, written, count = dense_segment.dense_segment_prepare(tmp_path, ids, iter(rows), model_id=MODEL, dim=DIM)
    assert written and count == 40 and key == vectors_key(MODEL, DIM, ids, vectors, examples)

    monkeypatch.setattr(dense_segment, "dense_segment_write", lambda *a, **k: pytest.fail("a process wrote it"))
    mapped = _shared(tmp_path, ids, vectors, examples=examples)
    assert dense_segment.mapped_file(mapped).startswith(str(tmp_path / "vectors" / key))
    assert mapped.example_groups[0][1].tolist() == [39, 20, 9, 3]  # as read: the slots need no order
    queries = [np.frombuffer(examples[p], "<f4").reshape(-1, DIM)[0] for p in examples]
    _same_ranking(mapped, _fresh_with(ids, vectors, examples), queries)


def test_a_file_of_the_previous_format_is_not_read(tmp_path):
    vectors = _vectors(6)
    ids = list(vectors)
    dense = _shared(tmp_path, ids, vectors)
    (path,) = (tmp_path / "vectors").glob("v*/meta.json")
    meta = path.read_text().replace('"format": 2', '"format": 1')
    path.write_text(meta)
    with pytest.raises(dense_segment.DenseSegmentError):
        dense_segment.dense_segment_load(tmp_path, path.parent.name, model_id=MODEL, dim=DIM, rows=6)
    assert dense.present.all()


def test_an_overlay_keeps_the_base_example_rows_and_overlays_the_edited_ones(tmp_path):
    # Base (mapped): 30 entries, five with example rows. The edit: P3 re-embedded with new rows, P4's
    # rows gone (re-embedded without questions), P5 dead, P6's rows changed beside the same vector,
    # an entry appended with rows. P8 and P9 keep theirs, held as views (P8) or as equal bytes (P9).
    base_vectors = _vectors(30)
    ids_base = list(base_vectors)
    base_examples = _examples(["P3", "P4", "P5", "P6", "P8", "P9"])
    base = _shared(tmp_path, ids_base, base_vectors, examples=base_examples)
    held = dict(zip(ids_base, base.base_rows()))
    held_examples = {ids_base[i]: view for i, view in base.example_rows().items()}
    held_examples["P9"] = bytes(held_examples["P9"])
    new3 = _vectors(30, seed=9)["P3"]
    edited = {**held, "P3": new3, "P4": _vectors(30, seed=8)["P4"], "NEW": _vectors(1, seed=4)["P0"]}
    edited_examples = {
        **held_examples,
        "P3": _examples(["P3"], seed=11)["P3"],
        "P6": _examples(["P6"], seed=12)["P6"],
        "NEW": _examples(["NEW"], seed=13)["NEW"],
    }
    del edited_examples["P4"]
    ids = [*ids_base, "NEW"]
    live = [pid != "P5" for pid in ids]
    overlay = base.overlay_over(edited, ids, live, edited_examples)

    assert overlay.matrix is base.matrix and sorted(overlay.overlay_slots.tolist()) == [3, 4, 6, 30]
    (base_rows, _, _, keep), (own, own_slots, _, _) = overlay.example_groups
    assert base_rows is base.example_groups[0][0] and is_mapped(base_rows)  # the mapping is not copied
    assert own_slots.tolist() == [3, 6, 30] and len(own) == sum(
        len(edited_examples[p]) for p in ("P3", "P6", "NEW")
    ) // (DIM * 4)
    assert overlay.example_slots.tolist() == [3, 6, 8, 9, 30]
    fresh = _fresh_with(ids, edited, edited_examples, live)
    queries = [np.frombuffer(edited_examples[p], "<f4").reshape(-1, DIM)[0] for p in ("P3", "P6", "P8", "NEW")]
    queries.append(np.frombuffer(base_examples["P4"], "<f4").reshape(-1, DIM)[0])  # P4's old rows count no more
    _same_ranking(overlay, fresh, queries)
    assert overlay.top_k(queries[1], 1, 0.9)[0][0][0] == 6
    # Each slot's closest example question is the one its current rows give (the edited rows of P3 and
    # P6, none left for P4 and the dead P5), as on an index built fresh.
    for query in queries:
        closest = fresh.similarities(query, 1.0)
        for slot in range(len(ids)):
            if slot in (3, 6, 8, 9, 30):
                assert overlay.closest_example(query, slot) == pytest.approx(float(closest[slot]), abs=1e-6)
            else:
                assert overlay.closest_example(query, slot) is None
