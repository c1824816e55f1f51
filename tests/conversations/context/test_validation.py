import datetime as dt

import pytest

from conversations.context import (
    ContextFromFuture,
    ContextSizeLimitExceeded,
    ContextValidationError,
    StaleContextAge,
    canonical_json,
    validate_context,
)

from .samples import NOW, make_context


def _validate(context, **kwargs):
    return validate_context(context, now=NOW, **kwargs)


def test_typical_context_is_under_5_kb_and_in_the_ideal_1_to_3_kb_range():
    validated = _validate(make_context())
    assert validated.size < 5120
    assert 1024 <= validated.size <= 3072


def test_size_counts_canonical_utf8_bytes_not_characters():
    context = make_context()
    assert len(canonical_json({"t": "ção"})) == len('{"t":"ção"}'.encode())
    validated = _validate(context)
    assert validated.size == len(canonical_json(context))
    assert validated.size > len(canonical_json(context).decode())  # accents are two bytes


def _padded(target_size):
    context = make_context()
    context["page"]["metadata"] = {"note": ""}
    base = len(canonical_json(context))
    context["page"]["metadata"]["note"] = "x" * (target_size - base)
    assert len(canonical_json(context)) == target_size
    return context


def test_exactly_5120_bytes_is_accepted():
    assert _validate(_padded(5120)).size == 5120


def test_one_byte_over_5120_is_413_context_size_limit_exceeded():
    with pytest.raises(ContextSizeLimitExceeded) as excinfo:
        _validate(_padded(5121))
    assert excinfo.value.code == "CONTEXT_SIZE_LIMIT_EXCEEDED"
    assert excinfo.value.status_code == 413
    assert excinfo.value.details == {"size": 5121, "limit": 5120}


def test_context_older_than_the_ttl_is_409_stale_context_age():
    # The seed's canary: 310 s old, 10 s past the 300 s TTL.
    context = make_context(captured_at=NOW - dt.timedelta(seconds=310))
    with pytest.raises(StaleContextAge) as excinfo:
        _validate(context)
    assert (excinfo.value.code, excinfo.value.status_code) == ("STALE_CONTEXT_AGE", 409)
    assert excinfo.value.details["ttlSeconds"] == 300


def test_context_just_inside_the_ttl_is_accepted():
    _validate(make_context(captured_at=NOW - dt.timedelta(seconds=299)))


def test_ttl_is_a_parameter():
    context = make_context(captured_at=NOW - dt.timedelta(seconds=61))
    with pytest.raises(StaleContextAge):
        _validate(context, ttl_seconds=60)


def test_context_more_than_30_seconds_in_the_future_is_400():
    with pytest.raises(ContextFromFuture) as excinfo:
        _validate(make_context(captured_at=NOW + dt.timedelta(seconds=31)))
    assert excinfo.value.status_code == 400
    assert excinfo.value.code == "CONTEXT_TIMESTAMP_IN_FUTURE"
    _validate(make_context(captured_at=NOW + dt.timedelta(seconds=29)))


def test_captured_at_without_time_zone_or_unparseable_is_400_naming_the_field():
    for value in ("2026-09-05T11:59:50", "yesterday at noon"):
        with pytest.raises(ContextValidationError) as excinfo:
            _validate(make_context(capturedAt=value))
        assert excinfo.value.details["errors"][0]["field"] == "capturedAt"


def test_hash_is_sha256_of_canonical_json_and_ignores_key_order():
    context = make_context()
    reordered = dict(reversed(list(context.items())))
    first, second = _validate(context), _validate(reordered)
    assert first.sha256 == second.sha256
    assert len(first.sha256) == 64


def test_non_json_numbers_are_rejected_as_invalid():
    context = make_context()
    context["page"]["metadata"] = {"ratio": float("nan")}
    with pytest.raises(ContextValidationError):
        _validate(context)


@pytest.mark.parametrize(
    ("where", "field"),
    [
        (lambda c: c["page"].update(title="Permissão\x00"), "page.title"),
        (lambda c: c["page"].update(metadata={"notes": ["ok", "a\x00b"]}), "page.metadata.notes[1]"),
        (lambda c: c["page"].update(metadata={"k\x00": "v"}), "page.metadata.k\\u0000"),
    ],
)
def test_a_nul_character_is_400_naming_the_field(where, field):
    # PostgreSQL's jsonb cannot store U+0000: without this check the snapshot insert is a 500.
    context = make_context()
    where(context)
    with pytest.raises(ContextValidationError) as exc:
        _validate(context)
    assert exc.value.errors == [{"field": field, "message": "must not contain the NUL character (U+0000)"}]


def test_a_literal_backslash_u0000_is_ordinary_text():
    context = make_context()
    context["page"]["title"] = "C:\\u0000"
    assert _validate(context).data["page"]["title"] == "C:\\u0000"


def test_a_lone_surrogate_is_400_naming_the_field():
    # "\ud800" is legal in JSON text but not Unicode: encoding the context used to raise a 500.
    context = make_context()
    context["tabs"][2]["title"] = "Docs\ud800"
    with pytest.raises(ContextValidationError) as exc:
        _validate(context)
    assert exc.value.errors == [{"field": "tabs[2].title", "message": "is not valid Unicode text"}]
