"""Two rules on a message of several parts (docs/retrieval.md, "Three full-body rules measured, not
shipped" and "The whole message decides bodies, for entries with example questions"): the whole message's
closest entry in full (``message_full_lift``, shaping._message_full), and its parts' word bodies listed
when the whole message means nothing in the catalog (``message_lift_floor``, shaping._message_floor).

A message of several parts whose whole meaning points at one entry (a context sentence and a bare "what
do I do?") may have no part that makes the entry eligible. The rule gives it a body when it is also first
in the merged ranking and its lift over the catalog's mean cosine reaches ``message_full_lift``.
For entries without example questions leave-one-catalog-out found no held-out gain: off; for entries with
them both rules are on (``*_examples``; docs/retrieval.md, "The whole message decides bodies, for entries with example questions").
"""

from dataclasses import replace

import numpy as np

from common.text import retrieval_embeddings
from knowledge.retrieval import Entry, RouterConfig, RouterIndex
from knowledge.retrieval.dense import DenseIndex

MESSAGE = "xyzzy plugh? plover frotz?"  # two parts, no word the catalog knows


def _vector(x: float, axis: int) -> np.ndarray:
    """A unit vector at cosine ``x`` with the question's (the first axis), the rest on ``axis``."""
    v = np.zeros(retrieval_embeddings.DIM, dtype=np.float32)
    v[0], v[axis] = x, (1 - x**2) ** 0.5
    return v


def _entries(second: str = "Beta", first_kind: str = "knowledge", second_ids: tuple[str, ...] = ()) -> list[Entry]:
    return [
        Entry("FIRST", "Alfa", summary="Alfa.", body="Alfa alfa.", kind=first_kind),
        Entry("SECOND", second, summary=f"{second}.", body=f"{second} {second.lower()}.", semantic_ids=second_ids),
        Entry("THIRD", "Gama", summary="Gama.", body="Gama gama."),
    ]


def _index(entries: list[Entry], rows: list[np.ndarray], config: RouterConfig | None = None) -> RouterIndex:
    """Every text (each part, the whole message) embedded as the first axis."""
    question = np.zeros(retrieval_embeddings.DIM, dtype=np.float32)
    question[0] = 1.0
    dense = DenseIndex.from_rows(rows, embed_query=lambda text: question)
    return RouterIndex(entries, config=config or RouterConfig(), dense=dense)


def _router(config: RouterConfig, first_kind: str = "knowledge") -> RouterIndex:
    """FIRST at cosine 0.5525 with every part and the whole message, the others at 0.5: lift 0.035, under
    every other full-body rule (a part's 0.04, a one-part message's 0.07)."""
    return _index(_entries(first_kind=first_kind), [_vector(0.5525, 1), _vector(0.5, 2), _vector(0.5, 3)], config)


ON = replace(RouterConfig(), message_full_lift=0.03)


def test_the_whole_messages_closest_entry_arrives_in_full_when_first():
    result = _router(ON).route(MESSAGE)
    assert len(result.parts) == 2 and result.full_ids == ["FIRST"]
    notes = [n for n in result.full[0].why if n["signal"] == "message_full"]
    assert len(notes) == 1 and "lift 0.035" in notes[0]["detail"]
    # The shipped setting (off) and a floor above the lift give none.
    assert _router(RouterConfig()).route(MESSAGE).full_ids == []
    assert _router(replace(ON, message_full_lift=0.04)).route(MESSAGE).full_ids == []


def test_never_a_procedure_nor_a_message_of_one_part():
    assert _router(ON, first_kind="procedure").route(MESSAGE).full_ids == []
    assert _router(ON).route("xyzzy plugh?").full_ids == []


def test_not_when_another_entry_is_first():
    # The part "plover" is SECOND's title word and means SECOND: SECOND comes first, FIRST (the whole
    # message's closest entry) stays listed.
    base = _router(ON)
    question, second = base.dense.query_vector("x"), base.dense.vector(1)
    dense = DenseIndex.from_rows(
        [base.dense.vector(i) for i in range(3)],
        embed_query=lambda text: second if text.strip(" ?").lower() == "plover" else question,
    )
    entries = [base.entries[0], Entry("SECOND", "Plover", summary="Plover.", body="Plover plover."), base.entries[2]]
    result = RouterIndex(entries, config=ON, dense=dense).route("xyzzy plugh? plover?")
    assert len(result.parts) == 2 and result.ranked()[0].id == "SECOND"
    assert "FIRST" in {d.id for d in result.listed} and "FIRST" not in result.full_ids


# ------------------------------------- a message whose whole meaning points nowhere (shaping._message_floor)


def _flat(config: RouterConfig) -> RouterIndex:
    """Every entry at the same cosine with every text (lift 0): only words tell them apart. SECOND is
    the only one whose title word ("plover") a part holds."""
    entries = _entries("Plover", second_ids=("app.plover",))
    return _index(entries, [_vector(0.5, 1), _vector(0.5, 2), _vector(0.5, 3)], config)


FLOOR = replace(RouterConfig(), message_lift_floor=0.02)


def test_a_part_s_word_body_is_listed_when_the_whole_message_means_nothing_in_the_catalog():
    message = "xyzzy frotz? plover?"
    assert _flat(RouterConfig()).route(message).full_ids == ["SECOND"]  # off (the shipped setting)
    result = _flat(FLOOR).route(message)
    assert len(result.parts) == 2 and result.full_ids == []
    second = next(d for d in result.listed if d.id == "SECOND")
    assert [n["detail"] for n in second.why if n["signal"] == "message_floor"] == [
        "the whole message's meaning points at no entry (lift 0.000)"
    ]
    # Fetched after being listed for that part: it keeps its body. A message of one part is not judged
    # by this rule.
    fed = _flat(FLOOR).route(message, feedback=lambda key: {"SECOND": 1.0} if "plov" in key else {})
    assert fed.full_ids == ["SECOND"]
    assert _flat(FLOOR).route("plover?").full_ids == ["SECOND"]


# ------------------------------------------------ entries with example questions: the rules are on


def _blend(x: float, axis: int) -> np.ndarray:
    """A blended entry's vector (shorter than a unit one: it has accepted example questions) at cosine ``x``."""
    v = np.zeros(retrieval_embeddings.DIM, dtype=np.float32)
    v[0], v[axis] = x, (0.92**2 - x**2) ** 0.5
    return v


def _with_rows(rows: list[np.ndarray], entries: list[Entry] | None = None) -> RouterIndex:
    return _index(entries or _entries("Plover"), rows)


def test_with_example_questions_the_whole_message_s_closest_entry_arrives_in_full_by_default():
    # The same cosines as above (lift 0.035), FIRST's vector a blend: the shipped 0.03 for such entries.
    assert RouterConfig().message_full_lift_examples == 0.03 and RouterConfig().message_full_lift > 2.0
    entries = _router(RouterConfig()).entries  # no word of the message
    blended = _with_rows([_blend(0.5525, 1), _vector(0.5, 2), _vector(0.5, 3)], entries)
    assert blended.dense.has_examples(0)
    result = blended.route(MESSAGE)
    assert result.full_ids == ["FIRST"]
    assert any(n["signal"] == "message_full" for n in result.full[0].why)
    # The same cosines on a passage vector: the passages' setting, off.
    assert _with_rows([_vector(0.5525, 1), _vector(0.5, 2), _vector(0.5, 3)], entries).route(MESSAGE).full_ids == []


def test_with_example_questions_a_message_meaning_nothing_gets_its_word_bodies_listed_by_default():
    assert RouterConfig().message_lift_floor_examples == 0.022 and RouterConfig().message_lift_floor == 0.0
    message = "xyzzy frotz? plover?"
    blended = _with_rows([_blend(0.5, 1), _blend(0.5, 2), _blend(0.5, 3)])
    result = blended.route(message)
    assert result.full_ids == [] and "SECOND" in result.listed_ids
    assert _with_rows([_vector(0.5, 1), _vector(0.5, 2), _vector(0.5, 3)]).route(message).full_ids == ["SECOND"]
