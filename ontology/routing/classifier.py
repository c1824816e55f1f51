"""Chunk classifier: proposes an ontology class and subclass for a text (ingestion stage 2).

The class comes from three linear models (``textmodel``), blended as a weighted geometric
mean of their probabilities, ``p ∝ p_terms^0.35 · p_softmax^0.45 · p_lda^0.20``: a softmax
regression over the text's words, bigrams, stems and discourse cues; a softmax regression
over its pooled sentence embeddings (``common/text/embeddings.py``, passages: the whole
text's vector, then the mean and the max over its sentences' vectors); and a shrunk-covariance
LDA over the whole text's vector. Weights and penalties chosen by 5-fold cross-validation on
the labeled sets. Unseen texts are embedded through the shared passage cache. With
CONTEXTO_EMBEDDINGS=off (or the engine missing) the term models decide alone.

Trained once per process from the curated chunks in the repo, no network:

* ``data/chunks.jsonl`` — the bundled sample chunks;
* ``data/eval/chunks.dev.jsonl`` — the dev split of an independent author's labeled set
  (``chunks.test.jsonl`` is only ever evaluated, see ``ontology/tools/evaluate.py``);
* ``data/train/chunks.train.jsonl`` — a second independent author's training set;
* ``data/agro/chunks.dev.jsonl`` — the dev split of a third independent author's set;
* ``data/vectors/chunks.npy``, ``chunk_sentences.npy`` — the embeddings of their texts and
  of their sentences (``manage.py build_ontology_vectors``).

The subclass comes from the same kind of blend per class (terms + the passage embedding),
trained on that class's chunks (the class's most common subclass when it has only one). Curators confirm or correct the
proposal in the admin; the proposal and its confidence are stored with the chunk.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from common.text import embeddings

from . import vectors as training_vectors
from .data import DATA_DIR, SAMPLE_CHUNKS_FILE, classes_file
from .text import normalize
from .textmodel import (
    BlendedModel,
    DenseMixture,
    text_features,
    train_dense_softmax,
    train_shrunk_lda,
    train_softmax,
)

DEV_FILE = DATA_DIR / "eval" / "chunks.dev.jsonl"
TRAIN_FILE = DATA_DIR / "train" / "chunks.train.jsonl"
# the dev split of a third independent author's set (agro_chunks; its test split is kept
# out of the repo and evaluated by the integrator only)
AGRO_DEV_FILE = DATA_DIR / "agro" / "chunks.dev.jsonl"
L2 = 0.02
# terms seen in fewer training chunks are dropped: same CV accuracy (0.730 / 0.735 / 0.735
# for 1 / 2 / 3), 3k features instead of 19k, a fifth of the fitting time; subclass models
# see a class's chunks only, so they keep terms seen twice
MIN_COUNT = 3
SUBCLASS_MIN_COUNT = 2
# the embedding model's penalty and the term model's share of the blend, chosen by 5-fold
# CV on train + dev (three fold assignments; docs/ontology.md). The embedding model reads
# the pooled features (passage + mean + max of the sentences, 3 × 384): penalty 3 (1 and
# 10 within 0.005); the term share 0.35 (0.25 and 0.45 within 0.005)
DENSE_L2 = 3.0
TERM_WEIGHT = 0.35
# the embedding half is itself two models over the same vectors: the softmax regression
# (pooled features) and a shrunk-covariance LDA (passage vector), weights 0.45 and 0.20 of
# the whole blend. CV over dev + train + agro, three fold assignments: 0.781 → 0.799; every
# shrinkage 0.3–0.45 × LDA scale 0.5–2 × weights 0.2–0.3 gave 0.787–0.802
LDA_WEIGHT = 0.20
LDA_SHRINKAGE = 0.3
# subclasses, inside a class: the passage embedding (the pooled features added nothing),
# penalty 1, terms 0.2 (CV subclass accuracy given the class: terms alone 0.56, blend 0.68)
SUBCLASS_DENSE_L2 = 1.0
SUBCLASS_TERM_WEIGHT = 0.2
NGRAMS = False
BOOST = {"cue": 4.0, "cue2": 4.0}


@dataclass(frozen=True)
class ClassProposal:
    class_id: str
    subclass: str
    confidence: float


@dataclass(frozen=True)
class ChunkClassifier:
    classes: BlendedModel
    subclasses: dict[str, BlendedModel | str]

    def propose(self, text: str, vector: np.ndarray | None = None) -> ClassProposal:
        """`vector` is the text's pooled features (`embed_chunks`) when the caller already
        has them; otherwise the text is embedded here once, for the class and the subclass."""
        if vector is None and self.classes.dense is not None:
            try:
                vector = embed_chunks([text])[0]
            except embeddings.EmbeddingsUnavailable:
                vector = None
        class_id, confidence = self.classes.predict(text, vector)
        sub = self.subclasses.get(class_id, "")
        if isinstance(sub, str):
            subclass = sub
        else:  # the subclass models read the passage embedding, the first DIM features
            subclass = sub.predict(text, None if vector is None else vector[: embeddings.DIM])[0]
        return ClassProposal(class_id, subclass, round(confidence, 2))


def read_labeled(path: Path) -> list[tuple[str, str, str]]:
    """(text, class, subclass) of a seed-format JSON Lines file."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out.append((row["texto"], row["classe_ontologica"], row.get("subclasse", "")))
    return out


def training_chunks(
    *, include_dev: bool = True, include_train: bool = True, include_agro: bool = True
) -> list[tuple[str, str, str]]:
    """(text, class, subclass) the model trains on, in a fixed order: bundled, dev, train, agro."""
    return [row for _, row in training_chunks_by_source(include_dev, include_train, include_agro)]


def training_chunks_by_source(
    include_dev: bool = True, include_train: bool = True, include_agro: bool = True
) -> list[tuple[str, tuple[str, str, str]]]:
    """(source, row) in training order; source is bundled, dev, train or agro."""
    chosen = [("bundled", SAMPLE_CHUNKS_FILE, True), ("dev", DEV_FILE, include_dev)]
    chosen += [("train", TRAIN_FILE, include_train), ("agro", AGRO_DEV_FILE, include_agro)]
    return [(name, row) for name, path, wanted in chosen if wanted and path.is_file() for row in read_labeled(path)]


# A sentence ends at . ! ? ; or : followed by a space; a text without one is one sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")


def sentences(text: str) -> list[str]:
    """The text's sentences (the units its per-sentence embeddings are taken over)."""
    return [s for s in (p.strip() for p in _SENTENCE_END.split(text)) if s] or [text]


def pooled_features(passage: np.ndarray, sentence_vectors: np.ndarray) -> np.ndarray:
    """A chunk's dense features: its passage embedding, then the mean and the element-wise
    max of its sentences' embeddings (3 × DIM). The mean keeps what the sentences share,
    the max a single sentence's marked trait (a measured result, a how-to step)."""
    sentence_vectors = np.asarray(sentence_vectors, dtype=np.float32).reshape(-1, embeddings.DIM)
    return np.concatenate([np.asarray(passage, dtype=np.float32), sentence_vectors.mean(0), sentence_vectors.max(0)])


def embed_chunks(texts: Sequence[str]) -> np.ndarray:
    """(len(texts), 3 × DIM) pooled features of unseen chunks, through the shared passage
    cache (a re-imported chunk is not embedded again). Raises EmbeddingsUnavailable."""
    rows = []
    for text in texts:
        parts = sentences(text)
        matrix = embeddings.embed_passages_cached([text, *parts])
        rows.append(pooled_features(matrix[0], matrix[1:]))
    return np.vstack(rows) if rows else np.empty((0, 3 * embeddings.DIM), dtype=np.float32)


VECTOR_SET = training_vectors.VectorSet(
    name="chunks",
    kind="passage",
    sources=lambda: [p for p in (SAMPLE_CHUNKS_FILE, DEV_FILE, TRAIN_FILE, AGRO_DEV_FILE) if p.is_file()],
    texts=lambda: [t for t, _, _ in training_chunks()],
)
SENTENCE_VECTOR_SET = training_vectors.VectorSet(
    name="chunk_sentences",
    kind="passage",
    sources=VECTOR_SET.sources,
    texts=lambda: [s for t, _, _ in training_chunks() for s in sentences(t)],
)


def training_features(texts: Sequence[str]) -> np.ndarray | None:
    """The pooled features of the training texts from the committed artifacts (passages and
    their sentences), or None when either is missing or stale (the term model then decides)."""
    passages = training_vectors.load(VECTOR_SET, list(texts))
    split = [sentences(t) for t in texts]
    sentence_rows = training_vectors.load(SENTENCE_VECTOR_SET, [s for parts in split for s in parts])
    if passages is None or sentence_rows is None:
        return None
    out, start = [], 0
    for k, parts in enumerate(split):
        out.append(pooled_features(passages[k], sentence_rows[start : start + len(parts)]))
        start += len(parts)
    return np.vstack(out)


def class_ids() -> tuple[str, ...]:
    return tuple(c["id"] for c in classes_file()["classes"])


# Discourse cues: what a text *does* (narrates a farm, gives a quantity, reports a trial,
# defines, warns…), read anywhere in it, not its opening formula. They are features the
# model weighs, with the words; each class's cues also count as one "any" feature.
CHUNK_CUES: dict[str, str] = {
    "caso": r"\b(eu|meu|minha|passei|troquei|faco|comecei|colhi|tive|consegui|vizinho|propriedade (familiar|de)|fazenda (de|em|no|na)|produtor(a)? (de|do|da|em)|em (dois|tres|quatro|cinco|\d+) anos|monitorad[ao]|a familia)\b",
    "dosagem": r"(\d+([.,]\d+)? ?(a \d+([.,]\d+)? ?)?(kg|t|g|l|ml|%|mil)\b ?(/|por|em cada|de (k2o|p2o5|n|semente))|\bpor (semente|hectare|planta|cova|metro)\b|\b(dose|doses|diluid\w*|parcelad\w*|no maximo|alvo minimo)\b)",
    "evidencia": r"\b(em media|ensaios?|estudos?|sinteses?|pesquisas?|experimentos?|unidades demonstrativas|meta-?analise\\w*|metanalise\\w*|revis\\w* de|rendeu|reduziu|aumentou|elevaram|elevou|segundo (leituras|dados)|comparad\w*|resultados?|evidencia|tratamentos?|safras seguidas|locais)\b",
    "indicador": r"\b(medid\w*|medir|mede|leitura\w*|lid[ao]|mostra se|revela\w*|aponta\w*|cronometr\w*|penetrometr\w*|fracionamento|razao entre|indice|contagem|conta(r|gem)|acompanh\w*|repetid[oa]|a cada ano|sonda|amostr\w*)\b",
    "contraindicacao": r"\b(nao (deve|use|usar|aplique|aplicar|misture|misturar|entre|faca)|evite|evitar|nunca|faz mais mal|proibid\w*|exige\w*|separe|incompativ\w*|com o solo (umido|molhado)|nao combina|risco de|contamina\w*|queima\w*)\b",
    "conceito": r"(^chama-se|\\b(e|sao) (a|o) (proporcao|fracao|parte|relacao)\\b|orienta que|^um \\w+ que|^\w+( \w+){0,4} (e|sao) (a|o|um|uma|as|os) (fracao|proporcao|processo|conjunto|movimento|capacidade|manejo|ideia|principio)|\b(significa|define-se|entende-se|principio|em outras palavras|ou seja)\b)",
    "causa_provavel": r"\b(tende a explicar|pode vir de|podem vir de|resultado mais comum|leva a|levam a|provoca\w*|explica\w*|por isso|imobiliza\w*|derruba\w*|deixa[m]? (o|a)|acaba[m]? (por|em)|costuma causar|origem)\b",
    "sintoma": r"\b(se ve|se nota|aparece\w*|surge\w*|plantas? (com|de)|folhas? \w+|torroes|manchas?|reboleiras?|raiz(es)? (torta|achatad\w*|curta)|amarel\w*|crosta|plantulas|emergir|ao arrancar|quando se abre)\b",
    "intervencao": r"\b(vem antes|corrigir|reconstruir|cercar|recuperar|restabelec\w*|desbloque\w*|da inicio|destravar|romper|isolar|refazer|implantar|quando .{0,60} (e preciso|vale))\b",
    "pratica": r"\b(rotina|safra apos safra|ano (inteiro|todo)|todo ano|todos os anos|manter|mantem|sempre|continu\w*|permanente\w*|ao longo|repetid\w*|a cada (safra|ciclo))\b",
    "processo": r"\b(convert\w*|liberam?|transforma\w*|decompo\w*|ciclo|fluxo|movimento|entra pel\w*|redistribu\w*|mobiliza\w*|estende\w*|alimenta\w*|acumula\w*)\b",
    "estrutura": r"\b(rede|redes|reservatorio|arquitetura|poros|porosidade|agregados|mata ciliar|terracos|faixas|sistema radicular|compoem|estoque|camada|habitat)\b",
    "agroecossistema": r"\b(relevo|altitude\w*|bioma|predomina\w*|clima|chuvas? (concentrad\w*|de verao)|latossolos|argissolos|nitossolos|regiao|oeste|sul de|terra firme|semiarido|encostas|estiagem|temperatura\w*)\b",
    "sistema_produtivo": r"\b(arranjo|rotacao|sucessao|combina\w*|consorci\w*|piquetes|rebanhos?|cafezais|plantas por hectare|sistema de producao|lavouras de|ordenha|safrinha|entressafra)\b",
    "estagio_transicao": r"\b(transicao|consolidac\w*|primeiro ano|deixou de|ainda mant\w*|ja substitu\w*|patamar|estavel|convencional|regenerativ\w*|fase|pela primeira vez)\b",
    "perfil_produtor": r"\b(produtores|pecuaristas|familias|extensionistas|consultores|gerente|assistencia|informacao chega|leem|procuram|querem|escala|porte|cooperativa|mao de obra|credito|quem pergunta)\b",
}
_CHUNK_CUES = {c: re.compile(rx) for c, rx in CHUNK_CUES.items()}


def chunk_features(text: str) -> list[str]:
    norm = normalize(text)
    cues = [f"cue:{c}" for c, rx in _CHUNK_CUES.items() if rx.search(norm)]
    counts = [f"cue2:{c}" for c, rx in _CHUNK_CUES.items() if len(rx.findall(norm)) >= 2]
    return text_features(text, ngrams=NGRAMS) + cues + counts


def train_chunk_classifier(rows: list[tuple[str, str, str]], vectors: np.ndarray | None = None) -> ChunkClassifier:
    """`vectors`: one row of pooled features per row (`training_features`); None → class and
    subclass from the term models alone."""
    known = class_ids()
    keep = [k for k, r in enumerate(rows) if r[1] in known]
    rows = [rows[k] for k in keep]
    features = None if vectors is None else np.asarray(vectors)[keep]
    labels = [c for _, c, _ in rows]
    terms = train_softmax(
        [t for t, _, _ in rows], labels, featurizer=chunk_features, l2=L2, boost=BOOST, min_count=MIN_COUNT
    )
    classes = BlendedModel(terms)
    if features is not None:
        softmax = train_dense_softmax(features, labels, l2=DENSE_L2, label_order=terms.labels)
        lda = train_shrunk_lda(
            features, labels, shrinkage=LDA_SHRINKAGE, label_order=terms.labels, columns=embeddings.DIM
        )
        dense_share = 1.0 - TERM_WEIGHT
        members = ((softmax, (dense_share - LDA_WEIGHT) / dense_share), (lda, LDA_WEIGHT / dense_share))
        classes = BlendedModel(terms, DenseMixture(terms.labels, members), None, TERM_WEIGHT)
    subclasses: dict[str, BlendedModel | str] = {}
    for class_id in sorted({c for _, c, _ in rows}):
        mine = [k for k, (_, c, s) in enumerate(rows) if c == class_id and s]
        sub_labels = [rows[k][2] for k in mine]
        counts = Counter(sub_labels)
        if len(counts) >= 2:
            sub_terms = train_softmax(
                [rows[k][0] for k in mine], sub_labels, featurizer=chunk_features, l2=L2, min_count=SUBCLASS_MIN_COUNT
            )
            subclasses[class_id] = BlendedModel(sub_terms)
            if features is not None:
                sub_dense = train_dense_softmax(
                    features[mine, : embeddings.DIM], sub_labels, l2=SUBCLASS_DENSE_L2, label_order=sub_terms.labels
                )
                subclasses[class_id] = BlendedModel(sub_terms, sub_dense, None, SUBCLASS_TERM_WEIGHT)
        elif counts:
            subclasses[class_id] = counts.most_common(1)[0][0]
    return ChunkClassifier(classes, subclasses)


@lru_cache(maxsize=1)
def chunk_classifier() -> ChunkClassifier:
    rows = training_chunks()
    vectors = training_features([t for t, _, _ in rows]) if embeddings.enabled() else None
    return train_chunk_classifier(rows, vectors)


def propose_class(text: str) -> ClassProposal:
    return chunk_classifier().propose(text)
