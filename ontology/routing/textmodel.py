"""A small text classifier trained at build time from labeled files in the repo.

Multinomial logistic regression (softmax, L2) over sparse binary features of the text:

* words of the normalized text (accents folded, lower case) and word bigrams, which keep
  the function words a question's *form* lives in ("o que é", "qual é melhor",
  "alguém já", "what is", "por qué");
* the shared analyzer's stems (the same terms BM25 uses), which carry the *topic*;
* character 4-grams inside words, which survive typos and inflections ("amarelando",
  "amarelano");
* optional cue features (e.g. which of a pattern's hand-written regexes matched), so the
  rules become evidence the model weighs instead of the decision.

Training is deterministic (L-BFGS from zeros on a fixed feature order), takes well under
a second for a few hundred examples, and needs no network: callers build the model once
per process from the files under ``ontology/data/`` and cache it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from scipy.optimize import minimize

from common.text.embeddings import EmbeddingsUnavailable

from .blas import single_blas_thread
from .search import analyze
from .text import normalize

_WORD_RE = re.compile(r"[a-z0-9]+")


def text_features(text: str, *, ngrams: bool = True, skip_words: int = 0) -> list[str]:  # noqa: ARG001
    """Feature names of a text (duplicates removed, order kept)."""
    norm = normalize(text)
    words = _WORD_RE.findall(norm)[skip_words:]
    feats = [f"w:{w}" for w in words]
    feats += [f"b:{a}_{b}" for a, b in zip(words, words[1:])]
    feats += [f"s:{t}" for t in analyze(" ".join(words))]
    if ngrams:
        for w in words:
            padded = f"<{w}>"
            if len(padded) >= 4:
                feats += [f"c:{padded[i : i + 4]}" for i in range(len(padded) - 3)]
    return list(dict.fromkeys(feats))


def _values(
    feats: Sequence[str], vocab: Mapping[str, int], boost: Mapping[str, float]
) -> tuple[list[int], list[float]]:
    """Column indices and values of one row: binary, scaled by 1/sqrt(n), a feature whose
    prefix (before ':') is in `boost` multiplied by its factor."""
    idx = sorted({vocab[f] for f in feats if f in vocab})
    names = {vocab[f]: f for f in feats if f in vocab}
    norm = 1.0 / np.sqrt(max(len(idx), 1))
    return idx, [norm * boost.get(names[i].split(":", 1)[0], 1.0) for i in idx]


@dataclass
class SoftmaxModel:
    labels: tuple[str, ...]
    vocabulary: dict[str, int]
    weights: np.ndarray  # (n_features + 1, n_labels), last row = bias
    featurizer: Callable[[str], list[str]]
    boost: Mapping[str, float] = field(default_factory=dict)

    def _row(self, text: str) -> sparse.csr_matrix:
        idx, data = _values(self.featurizer(text), self.vocabulary, self.boost)
        return sparse.csr_matrix((data, ([0] * len(idx), idx)), shape=(1, len(self.vocabulary)))

    def probabilities(self, text: str) -> dict[str, float]:
        logits = self._row(text) @ self.weights[:-1] + self.weights[-1]
        p = _softmax(np.asarray(logits))[0]
        return {label: float(p[i]) for i, label in enumerate(self.labels)}

    def predict(self, text: str) -> tuple[str, float]:
        probs = self.probabilities(text)
        best = max(self.labels, key=lambda lab: probs[lab])
        return best, probs[best]


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def train_softmax(
    texts: Sequence[str],
    labels: Sequence[str],
    *,
    featurizer: Callable[[str], list[str]] = text_features,
    l2: float = 1.0,
    label_order: Iterable[str] | None = None,
    min_count: int = 1,
    max_iter: int = 300,
    boost: Mapping[str, float] | None = None,
) -> SoftmaxModel:
    """Fit a softmax regression; `l2` is the penalty on the (non-bias) weights."""
    if len(texts) != len(labels) or not texts:
        raise ValueError("texts and labels must be non-empty and of equal length")
    order = tuple(label_order) if label_order is not None else tuple(sorted(set(labels)))
    label_index = {lab: i for i, lab in enumerate(order)}
    rows = [featurizer(t) for t in texts]
    counts: dict[str, int] = {}
    for feats in rows:
        for f in feats:
            counts[f] = counts.get(f, 0) + 1
    vocab = {f: i for i, f in enumerate(sorted(f for f, c in counts.items() if c >= min_count))}
    indptr, indices, data = [0], [], []
    boost = dict(boost or {})
    for feats in rows:
        idx, values = _values(feats, vocab, boost)
        indices.extend(idx)
        data.extend(values)
        indptr.append(len(indices))
    x = sparse.csr_matrix((data, indices, indptr), shape=(len(rows), len(vocab)))
    y = np.zeros((len(rows), len(order)))
    y[np.arange(len(rows)), [label_index[lab] for lab in labels]] = 1.0
    n_feat, n_lab = len(vocab), len(order)

    def loss(flat: np.ndarray) -> tuple[float, np.ndarray]:
        w = flat.reshape(n_feat + 1, n_lab)
        logits = np.asarray(x @ w[:-1]) + w[-1]
        logits -= logits.max(axis=1, keepdims=True)
        log_norm = np.log(np.exp(logits).sum(axis=1, keepdims=True))
        log_p = logits - log_norm
        value = -(y * log_p).sum() + 0.5 * l2 * (w[:-1] ** 2).sum()
        diff = np.exp(log_p) - y
        grad = np.vstack([np.asarray(x.T @ diff) + l2 * w[:-1], diff.sum(axis=0, keepdims=True)])
        return float(value), grad.ravel()

    with single_blas_thread():
        result = minimize(
            loss, np.zeros((n_feat + 1) * n_lab), jac=True, method="L-BFGS-B", options={"maxiter": max_iter}
        )
    return SoftmaxModel(order, vocab, result.x.reshape(n_feat + 1, n_lab), featurizer, boost)


def accuracy(model: SoftmaxModel, texts: Sequence[str], labels: Sequence[str]) -> float:
    if not texts:
        return 0.0
    return sum(model.predict(t)[0] == lab for t, lab in zip(texts, labels)) / len(texts)


def per_label_report(predicted: Sequence[str], gold: Sequence[str]) -> dict[str, dict[str, float]]:
    """Precision, recall and support per gold label."""
    report = {}
    for label in sorted(set(gold) | set(predicted)):
        tp = sum(p == g == label for p, g in zip(predicted, gold))
        pp = sum(p == label for p in predicted)
        gg = sum(g == label for g in gold)
        report[label] = {
            "precision": round(tp / pp, 3) if pp else 0.0,
            "recall": round(tp / gg, 3) if gg else 0.0,
            "support": gg,
        }
    return report


@dataclass
class DenseSoftmaxModel:
    """Softmax regression over dense vectors (sentence embeddings), centred on the training
    mean and scaled: e5's unit vectors share a large common direction that says nothing
    about the label."""

    labels: tuple[str, ...]
    mean: np.ndarray  # (dim,)
    scale: float
    weights: np.ndarray  # (dim + 1, n_labels), last row = bias

    def log_probabilities(self, x: np.ndarray) -> np.ndarray:
        """(n, n_labels) log-probabilities of the rows of `x` (n, dim)."""
        z = ((np.asarray(x, dtype=np.float64) - self.mean) * self.scale) @ self.weights[:-1] + self.weights[-1]
        z = z - z.max(axis=1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def train_dense_softmax(
    x: np.ndarray,
    labels: Sequence[str],
    *,
    l2: float = 1.0,
    label_order: Iterable[str] | None = None,
    max_iter: int = 500,
) -> DenseSoftmaxModel:
    """Fit a softmax regression on the rows of `x`; deterministic (L-BFGS from zeros)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] != len(labels) or not len(labels):
        raise ValueError("x must be (n, dim) with one label per row, n > 0")
    order = tuple(label_order) if label_order is not None else tuple(sorted(set(labels)))
    label_index = {lab: i for i, lab in enumerate(order)}
    mean = x.mean(axis=0)
    centred = x - mean
    # unit variance on average over the dimensions, so `l2` means the same whatever the model
    scale = 1.0 / max(float(np.sqrt((centred**2).sum(axis=1).mean() / x.shape[1])), 1e-12)
    xs = centred * scale
    n, dim = xs.shape
    k = len(order)
    y = np.zeros((n, k))
    y[np.arange(n), [label_index[lab] for lab in labels]] = 1.0

    def loss(flat: np.ndarray) -> tuple[float, np.ndarray]:
        w = flat.reshape(dim + 1, k)
        logits = xs @ w[:-1] + w[-1]
        logits -= logits.max(axis=1, keepdims=True)
        log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        value = -(y * log_p).sum() + 0.5 * l2 * (w[:-1] ** 2).sum()
        diff = np.exp(log_p) - y
        grad = np.vstack([xs.T @ diff + l2 * w[:-1], diff.sum(axis=0, keepdims=True)])
        return float(value), grad.ravel()

    with single_blas_thread():
        result = minimize(loss, np.zeros((dim + 1) * k), jac=True, method="L-BFGS-B", options={"maxiter": max_iter})
    return DenseSoftmaxModel(order, mean, scale, result.x.reshape(dim + 1, k))


@dataclass
class BlendedModel:
    """The term model and, when the sentence-embedding model is on, an embedding model,
    combined as a weighted geometric mean of their probabilities (weights chosen by
    cross-validation). Without the dense part, or when the text can't be embedded
    (CONTEXTO_EMBEDDINGS=off, the engine missing), it is the term model alone."""

    terms: SoftmaxModel
    dense: DenseSoftmaxModel | DenseMixture | None = None
    embed: Callable[[Sequence[str]], np.ndarray] | None = None
    term_weight: float = 1.0

    @property
    def labels(self) -> tuple[str, ...]:
        return self.terms.labels

    def probabilities(self, text: str, vector: np.ndarray | None = None) -> dict[str, float]:
        term_probs = self.terms.probabilities(text)
        if self.dense is None or (vector is None and self.embed is None):
            return term_probs
        if vector is None:
            try:
                vector = self.embed([text])[0]
            except EmbeddingsUnavailable:
                return term_probs
        dense_lp = self.dense.log_probabilities(np.asarray(vector).reshape(1, -1))[0]
        column = {label: i for i, label in enumerate(self.dense.labels)}
        z = np.array(
            [
                self.term_weight * np.log(max(term_probs[label], 1e-300))
                + (1.0 - self.term_weight) * dense_lp[column[label]]
                for label in self.labels
            ]
        )
        p = _softmax(z.reshape(1, -1))[0]
        return {label: float(p[i]) for i, label in enumerate(self.labels)}

    def predict(self, text: str, vector: np.ndarray | None = None) -> tuple[str, float]:
        probs = self.probabilities(text, vector)
        best = max(self.labels, key=lambda lab: probs[lab])
        return best, probs[best]


def train_shrunk_lda(
    x: np.ndarray,
    labels: Sequence[str],
    *,
    shrinkage: float = 0.3,
    label_order: Iterable[str] | None = None,
    columns: int | None = None,
) -> DenseSoftmaxModel:
    """Linear discriminant analysis with a shrunk shared covariance, written as the linear
    model it is: ``log p(c|x) ∝ x·Σ⁻¹μ_c − ½ μ_c·Σ⁻¹μ_c`` (equal priors), where
    ``Σ = (1 − shrinkage)·S + shrinkage·(tr S / d)·I``. A generative view of the same vectors
    the softmax regression reads, closed form, deterministic. Only the first `columns`
    columns are read (the others get zero weight)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] != len(labels) or not len(labels):
        raise ValueError("x must be (n, dim) with one label per row, n > 0")
    order = tuple(label_order) if label_order is not None else tuple(sorted(set(labels)))
    used = x.shape[1] if columns is None else columns
    label_index = np.array([order.index(lab) for lab in labels])
    mean = x.mean(axis=0)
    centred = x[:, :used] - mean[:used]
    means = np.vstack(
        [
            centred[label_index == k].mean(axis=0) if (label_index == k).any() else np.zeros(used)
            for k in range(len(order))
        ]
    )
    within = centred - means[label_index]
    cov = within.T @ within / len(labels)
    cov = (1.0 - shrinkage) * cov + shrinkage * (np.trace(cov) / used) * np.eye(used)
    with single_blas_thread():
        directions = np.linalg.solve(cov, means.T)  # (used, k)
    weights = np.zeros((x.shape[1] + 1, len(order)))
    weights[:used] = directions
    weights[-1] = -0.5 * np.sum(means.T * directions, axis=0)
    return DenseSoftmaxModel(order, mean, 1.0, weights)


@dataclass
class DenseMixture:
    """Several models over the same vectors, as one: a weighted sum of their log-probabilities
    (the blend above renormalises)."""

    labels: tuple[str, ...]
    members: tuple[tuple[DenseSoftmaxModel, float], ...]

    def log_probabilities(self, x: np.ndarray) -> np.ndarray:
        out = 0.0
        for model, weight in self.members:
            column = [model.labels.index(label) for label in self.labels]
            out = out + weight * model.log_probabilities(x)[:, column]
        return np.asarray(out)
