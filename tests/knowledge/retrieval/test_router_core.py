"""The pure router on hand-made catalogs (no database)."""

import gc

import pytest

from knowledge.retrieval import Entry, RouterIndex

CATALOG = [
    Entry("SANGER_TIMES", "Prazos do Sanger", "Prazo em dias úteis", keywords=("prazo", "turnaround", "plazo")),
    Entry("SHIPPING", "Envio de amostras", "Como enviar", keywords=("envio de amostras", "sample shipping")),
    Entry("SIGNING", "Assinar orçamento", "Aceite", kind="procedure", keywords=("assinatura",)),
    Entry("NO_CLINICAL", "Sem diagnóstico clínico", "Exclusão", kind="rule", strict=True, keywords=("diagnóstico",)),
]


def test_an_empty_catalog_routes_to_nothing():
    result = RouterIndex([]).route("Qual o prazo?", focus="quote.pricing")
    assert (result.full, result.listed, result.procedures, result.rules) == ([], [], [], [])


def test_a_blank_message_with_a_focus_routes_by_the_focus():
    index = RouterIndex([Entry("FIELD_HELP", "Campo", semantic_ids=("form.field",), body="Ajuda do campo.")])
    assert index.route("", focus="form.field").full_ids == ["FIELD_HELP"]
    assert index.route("").full_ids == []


def test_shapes_on_a_small_catalog():
    index = RouterIndex(CATALOG)
    result = index.route("Qual o prazo? Preciso da assinatura e do diagnóstico")
    assert "SANGER_TIMES" in result.full_ids
    assert [p.id for p in result.procedures] == ["SIGNING"]
    assert [(r.id, r.shape) for r in result.rules] == [("NO_CLINICAL", "full")]
    assert result.as_dict()["procedures"] == [{"id": "SIGNING", "title": "Assinar orçamento", "summary": "Aceite"}]


def test_typo_in_a_question_still_finds_the_entry():
    index = RouterIndex(CATALOG)
    result = index.route("turnarround")
    assert result.full_ids == ["SANGER_TIMES"]
    assert "turnarround" not in index.bm25.vocabulary


def test_config_weights_change_the_fusion():
    from knowledge.retrieval import RouterConfig

    index = RouterIndex(CATALOG, config=RouterConfig(weights={"bm25": 1.0}))
    result = index.route("prazo")
    assert [n["signal"] for n in result.full[0].why] == ["keyword", "bm25"]
    assert result.full[0].score == 1.0 / (5 + 1)  # keyword has no weight: only bm25 counts


def test_a_result_pickles_as_plain_rows_without_the_listed_bodies():
    # The route cache pickles results: listed entries carry no body, and nothing of the index rides along.
    import pickle

    body = "Corpo longo do envio de amostras. " * 50
    index = RouterIndex([*CATALOG, Entry("SHIPPING_FAQ", "Envio de amostras: dúvidas", "Perguntas", body=body)])
    result = index.route("Como faço o envio de amostras?", max_full=0)
    assert "SHIPPING_FAQ" in result.listed_ids
    blob = pickle.dumps(result)
    assert body.encode() not in blob and b"RouterIndex" not in blob
    again = pickle.loads(blob)
    assert again.as_dict() == result.as_dict()
    assert (
        again.listed_ids
        == result.listed_ids
        == [d.id for d in result.listed] + [r.id for r in result.rules if r.shape != "full"]
    )


def test_reasons_are_formatted_when_shown_and_tagged_with_their_part():
    index = RouterIndex(CATALOG)
    result = index.route("Qual o prazo do Sanger? Como faço o envio de amostras?")
    shipping = next(d for d in result.ranked() if d.id == "SHIPPING")
    keyword = next(n for n in shipping.why if n["signal"] == "keyword")
    assert keyword == {"signal": "keyword", "rank": 1, "detail": "envio de amostras", "part": 1}
    bm25 = next(n for n in shipping.why if n["signal"] == "bm25")
    assert bm25["detail"].startswith("score ") and "coverage 1.00 (envi amostr)" in bm25["detail"]


def test_a_build_runs_without_full_collections_and_gives_the_thresholds_back(monkeypatch):
    build_tables = RouterIndex._build_tables
    seen = []

    def spy(self, *args):
        seen.append(gc.get_threshold())
        return build_tables(self, *args)

    before = gc.get_threshold()
    monkeypatch.setattr(RouterIndex, "_build_tables", spy)
    RouterIndex(CATALOG)
    assert seen == [(before[0], before[1], 1 << 30)] and gc.get_threshold() == before
    assert gc.isenabled()
    monkeypatch.setattr(RouterIndex, "_build_tables", lambda self, *args: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        RouterIndex(CATALOG)
    assert gc.get_threshold() == before


def test_overlapping_builds_share_one_pause_and_the_last_gives_the_thresholds_back(monkeypatch):
    # Thread A starts a build, thread B starts another while A runs, A ends first: B must still run
    # paused, and once B ends the thresholds are the original ones (not the paused ones B would have saved).
    import threading

    build_tables = RouterIndex._build_tables
    a_inside, b_inside, a_may_end, b_may_end = (threading.Event() for _ in range(4))
    seen = {}

    def spy(self, *args):
        name = threading.current_thread().name
        (a_inside if name == "A" else b_inside).set()
        (a_may_end if name == "A" else b_may_end).wait(10)
        seen[name] = gc.get_threshold()
        return build_tables(self, *args)

    before = gc.get_threshold()
    monkeypatch.setattr(RouterIndex, "_build_tables", spy)
    a = threading.Thread(target=RouterIndex, args=(CATALOG,), name="A")
    b = threading.Thread(target=RouterIndex, args=(CATALOG,), name="B")
    a.start()
    assert a_inside.wait(10)
    b.start()
    assert b_inside.wait(10)
    a_may_end.set()
    a.join(10)
    assert gc.get_threshold() == (before[0], before[1], 1 << 30)  # B still builds: still paused
    b_may_end.set()
    b.join(10)
    assert seen["A"] == seen["B"] == (before[0], before[1], 1 << 30)
    assert gc.get_threshold() == before


def test_an_index_over_given_postings_runs_with_the_collectors_thresholds_as_they_are(monkeypatch, tmp_path):
    # Only a build pauses full collections: mapping a segment makes few objects.
    from knowledge.retrieval.segments import segment_load, segment_write

    built = RouterIndex(CATALOG)
    segment_write(tmp_path, "k", built.bm25, tables=built.shared_tables())
    bm25, tables = segment_load(tmp_path, "k")
    map_tables, seen = RouterIndex._map_tables, []

    def spy(self, *args):
        seen.append(gc.get_threshold())
        return map_tables(self, *args)

    monkeypatch.setattr(RouterIndex, "_map_tables", spy)
    RouterIndex(CATALOG, bm25=bm25, tables=tables)
    assert seen == [gc.get_threshold()] and seen[0][2] != 1 << 30
