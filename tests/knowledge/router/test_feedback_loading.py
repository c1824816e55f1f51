"""The feedback snapshot: loaded incrementally (rows changed since), vectors of the current model only."""

from datetime import timedelta

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from common.text import embeddings as e5
from common.text import retrieval_embeddings
from knowledge import feedback
from knowledge.feedback import fetch_feedback_rows_record, related_feedback_weights
from knowledge.models import FeedbackState, FetchFeedback

pytestmark = pytest.mark.django_db


def _write(django_capture_on_commit_callbacks, keys, package_id="PRICING_RULES", **kwargs):
    with django_capture_on_commit_callbacks(execute=True):
        return fetch_feedback_rows_record(keys=keys, package_id=package_id, **kwargs)


@pytest.fixture
def fetched(monkeypatch):
    """How many rows each snapshot read brought from the database."""
    counts: list[int] = []
    original = feedback._fetch

    def counting(queryset):
        rows, top = original(queryset)
        counts.append(len(rows))
        return rows, top

    monkeypatch.setattr(feedback, "_fetch", counting)
    return counts


def test_a_refresh_reads_only_the_rows_changed_since_the_snapshot(django_capture_on_commit_callbacks, fetched):
    _write(django_capture_on_commit_callbacks, ["prazo sanger", "prec sanger", "colet sol"])
    first = feedback._current_snapshot(1)
    assert len(first.rows) == 3 and fetched == [3]

    # one new row and one existing row fetched again
    _write(django_capture_on_commit_callbacks, ["envi amostr", "prazo sanger"])
    with CaptureQueriesContext(connection) as queries:
        second = feedback._current_snapshot(2)
    assert len(queries) == 2, [q["sql"] for q in queries]  # the table's count/last change, the changed rows
    assert fetched == [3, 2]  # not the five rows again
    assert len(second.rows) == 4
    weights = {" ".join(sorted(r.terms)): r.weight for r in second.rows}
    assert weights["prazo sanger"] == pytest.approx(2.0, abs=1e-3)

    # nothing changed: one aggregate query, no row read
    with CaptureQueriesContext(connection) as queries:
        third = feedback._current_snapshot(3)
    assert len(queries) == 1 and fetched == [3, 2]
    assert third.rows == second.rows and third.version == 3


def test_a_deleted_row_leaves_the_snapshot(django_capture_on_commit_callbacks, fetched):
    _write(django_capture_on_commit_callbacks, ["prazo sanger", "prec sanger"])
    assert len(feedback._current_snapshot(1).rows) == 2
    FetchFeedback.objects.filter(query_key="prec sanger").delete()
    snap = feedback._current_snapshot(2)
    assert [" ".join(sorted(r.terms)) for r in snap.rows] == ["prazo sanger"]
    assert fetched == [2, 1]  # the table lost a row: read again in full


def test_change_numbers_follow_the_writes(django_capture_on_commit_callbacks):
    a = _write(django_capture_on_commit_callbacks, ["prazo sanger", "prec sanger"])
    b = _write(django_capture_on_commit_callbacks, ["prazo sanger"])
    assert {r.seq for r in a} == {1} and [r.seq for r in b] == [2]
    assert FeedbackState.objects.get(pk=1).seq == 2
    assert set(FetchFeedback.objects.values_list("seq", flat=True)) == {1, 2}


def _unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(retrieval_embeddings.DIM).astype("<f4")
    return v / np.linalg.norm(v)


def _sanger_delivery_weights(version: int, vector: np.ndarray) -> dict:
    """Feedback weights for a question whose ranking overlaps the stored row's signature 1/9 (below
    the threshold): only the question vectors can relate the two."""
    return related_feedback_weights(
        key="prazo sequenc sanger",
        ranking=["DELIVERY_TIMELINES", "Y1", "Y2", "Y3", "Y4"],
        tenant_id=None,
        version=version,
        vector=vector,
    )


def test_only_question_vectors_of_the_current_model_are_compared(django_capture_on_commit_callbacks):
    vector = _unit(1)
    (row,) = _write(
        django_capture_on_commit_callbacks,
        ["temp lev sequenc sanger"],
        signatures={"temp lev sequenc sanger": ["DELIVERY_TIMELINES", "X1", "X2", "X3", "X4"]},
        vectors={"temp lev sequenc sanger": vector.tobytes()},
        package_id="DELIVERY_TIMELINES",
    )
    assert row.question_vector_model == retrieval_embeddings.MODEL_ID

    assert _sanger_delivery_weights(1, vector) == {"DELIVERY_TIMELINES": pytest.approx(1.0, abs=1e-3)}
    FetchFeedback.objects.filter(pk=row.pk).update(question_vector_model="another-model@1")
    with django_capture_on_commit_callbacks(execute=True):
        feedback.feedback_rows_deleted()  # any bump: the next read sees the table
    feedback.clear_feedback_snapshot()
    assert _sanger_delivery_weights(2, vector) == {}
    # unlabelled and not of the one model code before migration 0008 stored (its size): ignored
    FetchFeedback.objects.filter(pk=row.pk).update(question_vector_model=None, question_vector=vector[:100].tobytes())
    feedback.clear_feedback_snapshot()
    assert _sanger_delivery_weights(3, vector) == {}


def test_a_question_is_embedded_for_a_row_only_when_its_vector_alone_can_promote(monkeypatch):
    calls = []

    def vector_of():
        calls.append(1)
        return _unit(2)

    now = timezone.now()
    base = dict(package_id="DELIVERY_TIMELINES", weight=1.0, question_vector=_unit(2).tobytes())
    base["question_vector_model"] = retrieval_embeddings.MODEL_ID
    ranking = ["DELIVERY_TIMELINES", "A", "B", "C", "D"]
    # related by its signature (overlap 1.0): no embedding needed, it counts by the overlap
    FetchFeedback.objects.create(query_key="a b", signature=ranking, last_fetched_at=now, seq=1, **base)
    args = dict(key="x y", ranking=ranking, tenant_id=None, vector_of=vector_of, min_weight=0.5)
    assert related_feedback_weights(version=1, **args) == {"DELIVERY_TIMELINES": pytest.approx(1.0, abs=1e-3)}
    assert calls == []
    # only its vector could relate it, but two half-lives old it can no longer reach the promotion weight
    FetchFeedback.objects.all().delete()
    old = now - timedelta(days=28)
    FetchFeedback.objects.create(
        query_key="c d", signature=["DELIVERY_TIMELINES", "P", "Q", "R", "S"], last_fetched_at=old, seq=2, **base
    )
    feedback.clear_feedback_snapshot()
    assert related_feedback_weights(version=2, **args) == {}
    assert calls == []
    # fresh, the same row needs the vector: embedded once
    FetchFeedback.objects.update(last_fetched_at=now)
    feedback.clear_feedback_snapshot()
    assert related_feedback_weights(version=3, **args) == {"DELIVERY_TIMELINES": pytest.approx(1.0, abs=1e-3)}
    assert calls == [1]


# ------------------------------------------- processes on code before migration 0008 (a deploy)

# The columns such a process writes: everything but what migration 0008 added.
_OLD_COLUMNS = [
    f.column for f in FetchFeedback._meta.concrete_fields if f.name not in ("id", "seq", "question_vector_model")
]


def _old_code_insert(**values) -> int:
    """The INSERT the pre-0008 ORM writes: no change number, no model id."""
    table = FetchFeedback._meta.db_table
    row = {"listed_then_fetched": 1, "weight": 1.0, "signature": "[]", "question_vector": None, **values}
    row.setdefault("last_fetched_at", timezone.now())
    row.setdefault("created_at", timezone.now())
    row.setdefault("tenant_id", None)
    names = ", ".join(f'"{c}"' for c in _OLD_COLUMNS)
    with connection.cursor() as cursor:
        cursor.execute(
            f'INSERT INTO "{table}" ({names}) VALUES ({", ".join(["%s"] * len(_OLD_COLUMNS))}) RETURNING "id"',
            [row[c] for c in _OLD_COLUMNS],
        )
        return cursor.fetchone()[0]


def _old_code_update(pk: int, *, weight: float, vector: bytes | None = None) -> None:
    """The UPDATE the pre-0008 ORM writes for a fetch of an existing row: the change number stays."""
    table = FetchFeedback._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f'UPDATE "{table}" SET "weight" = %s, "listed_then_fetched" = "listed_then_fetched" + 1, '
            '"last_fetched_at" = %s, "question_vector" = COALESCE(%s, "question_vector") WHERE "id" = %s',
            [weight, timezone.now(), vector, pk],
        )


def test_a_row_inserted_by_old_code_is_stored_and_loaded(django_capture_on_commit_callbacks, fetched):
    _write(django_capture_on_commit_callbacks, ["prazo sanger"])
    assert len(feedback._current_snapshot(1).rows) == 1
    # Without a database default on seq (0008 dropped it) this INSERT failed: NOT NULL.
    pk = _old_code_insert(query_key="prec sanger", package_id="PRICING_RULES")
    assert FetchFeedback.objects.get(pk=pk).seq == 0
    snap = feedback._current_snapshot(2)
    assert sorted(" ".join(sorted(r.terms)) for r in snap.rows) == ["prazo sanger", "prec sanger"]
    assert feedback.feedback_weights(key="prec sanger", tenant_id=None, version=2) == {
        "PRICING_RULES": pytest.approx(1.0, abs=1e-3)
    }


def test_a_row_updated_by_old_code_is_seen_though_its_change_number_stays(django_capture_on_commit_callbacks, fetched):
    (row,) = _write(django_capture_on_commit_callbacks, ["prazo sanger"])
    assert feedback.feedback_weights(key="prazo sanger", tenant_id=None, version=1)["PRICING_RULES"] == (
        pytest.approx(1.0, abs=1e-3)
    )
    _old_code_update(row.pk, weight=3.0)
    assert FetchFeedback.objects.get(pk=row.pk).seq == row.seq
    assert feedback.feedback_weights(key="prazo sanger", tenant_id=None, version=2)["PRICING_RULES"] == (
        pytest.approx(3.0, abs=1e-3)
    )
    assert fetched == [1, 1]  # the fetch count no longer added up: read again in full
    # and a later write of the new code is still read incrementally on top
    _write(django_capture_on_commit_callbacks, ["envi amostr"])
    assert len(feedback._current_snapshot(3).rows) == 2 and fetched == [1, 1, 1]


def test_an_unlabelled_vector_from_old_code_counts_as_the_old_model(monkeypatch):
    # Old code stored e5's vectors; the router's are now e5 + USE, so such a row relates no question
    # by its vector (its own wording and signature still count) ...
    assert feedback.LEGACY_MODEL_ID == e5.MODEL_ID != retrieval_embeddings.MODEL_ID
    vector = np.random.default_rng(1).standard_normal(e5.DIM).astype("<f4")
    vector /= np.linalg.norm(vector)
    _old_code_insert(
        query_key="temp lev sequenc sanger",
        package_id="DELIVERY_TIMELINES",
        signature='["DELIVERY_TIMELINES", "X1", "X2", "X3", "X4"]',
        question_vector=vector.tobytes(),
    )

    assert _sanger_delivery_weights(1, vector) == {}
    # ... and it is read as e5's: were e5 the router's model, it would relate the question
    monkeypatch.setattr(feedback.retrieval_embeddings, "MODEL_ID", e5.MODEL_ID)
    monkeypatch.setattr(feedback.retrieval_embeddings, "DIM", e5.DIM)
    feedback.clear_feedback_snapshot()
    assert _sanger_delivery_weights(2, vector) == {"DELIVERY_TIMELINES": pytest.approx(1.0, abs=1e-3)}


def _version() -> int:
    from django.core.cache import cache

    from knowledge.feedback_version import FEEDBACK_VERSION_KEY

    return int(cache.get(FEEDBACK_VERSION_KEY) or 0)  # what route_context reads


def test_an_edited_signature_is_seen_on_the_next_route(django_capture_on_commit_callbacks):
    signature = ["DELIVERY_TIMELINES", "X1", "X2", "X3", "X4"]
    (row,) = _write(django_capture_on_commit_callbacks, ["prazo sanger"], signatures={"prazo sanger": signature})
    before = feedback._current_snapshot(_version())
    assert [r.signature for r in before.rows] == [tuple(signature)]
    with django_capture_on_commit_callbacks(execute=True):  # a data fix, an admin action: any ORM update
        FetchFeedback.objects.filter(pk=row.pk).update(signature=["PRICING_RULES", *signature[1:]])
    after = feedback._current_snapshot(_version())  # no snapshot reset: the version moved
    assert after is not before and after.version == before.version + 1
    assert [r.signature[0] for r in after.rows] == ["PRICING_RULES"]
    assert FetchFeedback.objects.get(pk=row.pk).seq == FeedbackState.objects.get(pk=1).seq == 2


def test_a_deleted_row_is_gone_on_the_next_route(django_capture_on_commit_callbacks):
    _write(django_capture_on_commit_callbacks, ["prazo sanger", "prec sanger"])
    before = feedback._current_snapshot(_version())
    with django_capture_on_commit_callbacks(execute=True):
        FetchFeedback.objects.filter(query_key="prec sanger").delete()
    after = feedback._current_snapshot(_version())
    assert [" ".join(sorted(r.terms)) for r in after.rows] == ["prazo sanger"] and len(before.rows) == 2
