"""Speed changes keep every delivered result identical on the labeled sets.

The snapshot (data/route_snapshot.json) was recorded from the router's code
before the speed work; see route_snapshot.py for what it holds and how to
regenerate it when a change is meant to alter results.
"""

import json

from .route_snapshot import SNAPSHOT, collect, question_sets


def test_the_snapshot_covers_every_labeled_set():
    recorded = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    names = {name for name, _, _ in question_sets()}
    assert set(recorded) == names
    assert {"queries.json", "hr/dev", "hr/test", "saas/dev", "saas/test"} <= names
    assert sum(len(rows) for rows in recorded.values()) >= 600


def test_every_labeled_question_is_delivered_exactly_as_recorded():
    recorded = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    now = json.loads(json.dumps(collect(), ensure_ascii=False))
    for name, rows in recorded.items():
        assert len(now[name]) == len(rows), name
        for before, after in zip(rows, now[name]):
            assert after == before, f"{name}: {before['query']!r} is delivered differently"
