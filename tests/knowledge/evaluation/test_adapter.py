"""The question adapter's training (knowledge/evaluation/adapter.py): its gradient is the loss's, and
fitting moves held-out questions of a pattern it learned towards their answers."""

import json

import numpy as np
import pytest

from knowledge.evaluation import adapter, tune
from knowledge.evaluation.adapter import Fold, adapt, adapter_loss, fit_adapter, spread_ratio, vectors_hit


def unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def fold(rng, n_entries=6, n_questions=12, dim=8, phrasing=None, ood=0):
    entries = unit(rng.normal(size=(n_entries, dim)))
    answers = rng.integers(0, n_entries, n_questions)
    # A question is its answer plus a direction every question shares (its "question phrasing"), plus noise.
    offset = phrasing if phrasing is not None else np.zeros(dim)
    questions = unit(entries[answers] + offset + 0.05 * rng.normal(size=(n_questions, dim)))
    targets = np.zeros((n_questions, n_entries))
    targets[np.arange(n_questions), answers] = 1.0
    weights = np.ones(n_questions)
    if ood:
        questions = np.vstack([questions, unit(rng.normal(size=(ood, dim)))])
        targets = np.vstack([targets, np.full((ood, n_entries), 1.0 / n_entries)])
        weights = np.r_[weights, np.full(ood, 0.5)]
    return Fold(questions, entries, targets, weights)


def test_the_gradient_is_the_loss_gradient():
    rng = np.random.default_rng(3)
    folds = [fold(rng, ood=3), fold(rng)]
    dim = 8
    x = 0.1 * rng.normal(size=dim * dim)
    _, grad = adapter_loss(x, folds, lam=0.3, scale=7.0)
    eps = 1e-6
    for i in rng.choice(dim * dim, 12, replace=False):
        step = np.zeros_like(x)
        step[i] = eps
        numeric = (adapter_loss(x + step, folds, 0.3, 7.0)[0] - adapter_loss(x - step, folds, 0.3, 7.0)[0]) / (2 * eps)
        assert abs(numeric - grad[i]) < 1e-5 * max(1.0, abs(numeric))


def test_fitting_undoes_a_phrasing_shared_by_every_catalog():
    rng = np.random.default_rng(7)
    dim = 8
    # Every catalog's questions lean the same way, away from their answers.
    phrasing = 1.5 * unit(rng.normal(size=dim))
    training = [fold(rng, phrasing=phrasing, n_questions=40) for _ in range(4)]
    held_out = fold(rng, phrasing=phrasing, n_questions=40)
    adapter = fit_adapter(training, lam=0.01, scale=10.0)
    assert vectors_hit(held_out, adapter) > vectors_hit(held_out) + 3
    # Held at the identity (huge regularization) it changes nothing.
    identity = fit_adapter(training, lam=1e6, scale=10.0)
    assert vectors_hit(held_out, identity) == vectors_hit(held_out)
    assert np.allclose(adapt(held_out.questions, identity), held_out.questions, atol=1e-4)


def test_the_spread_ratio_reads_how_much_wider_the_cosines_spread():
    rng = np.random.default_rng(11)
    folds = [fold(rng) for _ in range(3)]
    assert abs(spread_ratio(np.eye(8, dtype=np.float32), folds) - 1.0) < 1e-6
    # Stretching the direction the entries differ most in widens the spread.
    stretch = np.eye(8, dtype=np.float32)
    stretch[0, 0] = 3.0
    assert spread_ratio(stretch, folds) > 1.0


def test_a_question_expecting_an_entry_the_catalog_lacks_is_refused(tmp_path, monkeypatch):
    questions = tmp_path / "questions.dev.json"
    questions.write_text(json.dumps([{"query": "Qual o prazo do laudo?", "expected": ["NO_SUCH_PACKAGE"]}]))
    packages = tune.TUNING_INPUTS["sample"][0]
    monkeypatch.setitem(tune.TUNING_INPUTS, "broken", (packages, questions))
    # Trained on, it would be read as out of domain (a uniform target) at an answerable question's weight.
    with pytest.raises(ValueError, match="NO_SUCH_PACKAGE"):
        adapter.catalog_fold("broken", ood_weight=0.0)
