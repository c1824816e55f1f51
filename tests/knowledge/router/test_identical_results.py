"""Speed changes keep every delivered result identical on the labeled sets.

The snapshot (data/route_snapshot.json) was recorded from the router's code
before the speed work; see route_snapshot.py for what it holds and how to
regenerate it when a change is meant to alter results.
"""

import json

import pytest

from knowledge.retrieval import bm25, signals

from .route_snapshot import SNAPSHOT, collect, compact, question_sets


def test_the_snapshot_covers_every_labeled_set():
    recorded = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    names = {name for name, _, _ in question_sets()}
    assert set(recorded) == names
    assert {"queries.json", "hr/dev", "hr/test", "saas/dev", "saas/test"} <= names
    assert sum(len(rows) for rows in recorded.values()) >= 600


@pytest.mark.parametrize("paths", ["small", "large"])
def test_every_labeled_question_is_delivered_exactly_as_recorded(paths, monkeypatch):
    if paths == "large":
        # The labeled catalogs are small: force the paths big catalogs take (MaxScore top-k,
        # numpy keyword sums) so they are held to the same results.
        monkeypatch.setattr(bm25, "_SMALL_CORPUS", 0)
        monkeypatch.setattr(signals, "_SMALL_KEYWORD_HITS", 0)
    recorded = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    now = compact(collect())
    for name, rows in recorded.items():
        assert len(now[name]) == len(rows), name
        for before, after in zip(rows, now[name]):
            assert after == before, f"{name}: {before['query']!r} is delivered differently"


def test_the_digest_sees_a_change_the_ids_do_not_show():
    # The file keeps ids and a digest of the whole outcome: a score, reason or ranking that moves
    # without changing which ids are delivered must still fail the comparison.
    row = {"query": "q", "full": [{"id": "A", "score": 0.5, "why": []}], "listed": [], "part_rankings": [["A"]]}
    moved = {**row, "full": [{"id": "A", "score": 0.25, "why": []}]}
    assert compact({"s": [row]})["s"][0]["full"] == compact({"s": [moved]})["s"][0]["full"]
    assert compact({"s": [row]}) != compact({"s": [moved]})


def test_a_route_result_survives_the_cache_pickle():
    # Route results are cached pickled (Redis); Delivered is a slotted dataclass now.
    import pickle

    from knowledge.offline_catalog import folder_index
    from knowledge.routing_service import ROUTE_CACHE_PREFIX, router_config

    from .route_snapshot import ROOT

    index = folder_index(ROOT / "knowledge" / "catalog", router_config())
    result = index.route("Qual o prazo do Sanger e como assino o orçamento?")
    assert result.full and result.listed
    again = pickle.loads(pickle.dumps(result))
    assert again.as_dict() == result.as_dict() and again.full[0].why == result.full[0].why
    # Results pickled by the code before slots live under the old prefix and are never read back.
    assert ROUTE_CACHE_PREFIX != "knowledge:route:"


def test_the_snapshot_is_recorded_with_a_stand_in_that_is_the_same_on_every_cpu():
    # The engine's cosines differ in the fourth decimal between CPUs (enough to swap close
    # candidates), so routes are compared with hashed-trigram vectors; the engine is restored after.
    import numpy as np

    from common.text import embeddings, retrieval_embeddings, use_embeddings

    from .route_snapshot import deterministic_embeddings, stand_in_vector

    before, before_use = dict(embeddings._state), dict(use_embeddings._state)
    with deterministic_embeddings():
        got = embeddings.embed_query("Qual o prazo do Sanger?")
        assert np.array_equal(got, stand_in_vector("Qual o prazo do Sanger?", "query"))
        assert embeddings.embed_passages(["prazo"])[0] @ got != 0.0
        # the router's vector is made of the two stand-ins (neither engine runs)
        routed = retrieval_embeddings.embed_query("Qual o prazo do Sanger?")
        use_part = stand_in_vector("Qual o prazo do Sanger?", "use", use_embeddings.DIM)
        assert np.allclose(routed[: embeddings.DIM], got * np.sqrt(retrieval_embeddings.E5_SHARE))
        assert np.allclose(routed[embeddings.DIM :], use_part * np.sqrt(1 - retrieval_embeddings.E5_SHARE))
    assert embeddings._state == before and use_embeddings._state == before_use
    # near wordings are closer than unrelated ones, so the dense code paths see real rankings
    a, b, c = (stand_in_vector(t, "query") for t in ("prazo do sanger", "prazos sanger", "estacionamento"))
    assert a @ b > a @ c
