"""The words of the entries' accepted example questions, for a rank-only signal (``signals._questions_signal``).

Each entry holding accepted example questions (what a customer who has not read the article would
ask, knowledge/search_terms.py) is one document: its questions' analyzed terms. A message of one
part is scored against them with the router's BM25+ (k1, b, δ as ``RouterConfig``; IDF
``ln((N + 1) / df)`` over the documents that hold questions), and the best few entries are fused
like any other signal. The words never make an entry eligible for a full body and never count in
coverage: measured as a field of the main index, the questions' common words ("como", "posso",
"what happens") reached out-of-domain questions (docs/retrieval.md, "The example questions'
words in BM25").

Small and per process: a catalog's questions are a few terms per entry, and most entries have none.
Postings are kept per term as arrays (slots, term frequencies); an edit (``with_edits``) replaces
the postings of the terms its entries touch and shares every other array with the base.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from common.text import analyze


def question_terms(questions: Sequence[str]) -> Counter:
    """The analyzed terms of an entry's example questions, with their frequencies."""
    return Counter(t for q in questions for t in analyze(q))


class QuestionsIndex:
    """BM25+ over each entry's example-question terms, by slot (the entry's position in the router index)."""

    __slots__ = ("postings", "lengths", "n_docs", "avgdl", "k1", "b", "delta", "_weights")

    def __init__(
        self,
        postings: Mapping[str, tuple[np.ndarray, np.ndarray]],
        lengths: np.ndarray,
        *,
        k1: float,
        b: float,
        delta: float,
    ):
        # term → (slots holding it, ascending; its frequency in each).
        self.postings = postings
        # Per slot, its document's length in terms (0: the entry has no example questions).
        self.lengths = lengths
        self.n_docs = int(np.count_nonzero(lengths))
        self.avgdl = float(lengths.sum()) / self.n_docs if self.n_docs else 0.0
        self.k1, self.b, self.delta = k1, b, delta
        # term → each posting's BM25+ weight, worked out on the term's first query (N and avgdl are
        # this index's: an edit's index computes its own).
        self._weights: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        """Documents: the entries holding example questions."""
        return self.n_docs

    @classmethod
    def build(cls, entries: Sequence, *, k1: float, b: float, delta: float) -> QuestionsIndex | None:
        """The index of ``entries``' example questions (slot = position); None when none has any."""
        by_term: dict[str, tuple[list[int], list[int]]] = {}
        lengths = np.zeros(len(entries), dtype=np.float64)
        for slot, e in enumerate(entries):
            asked = getattr(e, "example_questions", ())
            if not asked:
                continue
            counts = question_terms(asked)
            lengths[slot] = sum(counts.values())
            for term, tf in counts.items():
                slots, tfs = by_term.setdefault(term, ([], []))
                slots.append(slot)
                tfs.append(tf)
        if not by_term:
            return None
        postings = {t: (np.array(s, dtype=np.int64), np.array(f, dtype=np.float64)) for t, (s, f) in by_term.items()}
        return cls(postings, lengths, k1=k1, b=b, delta=delta)

    def with_edits(
        self, changed: Sequence[tuple[int, object]], dead: Iterable[int], before: Sequence, n_slots: int
    ) -> QuestionsIndex | None:
        """This index after an edit: ``changed`` (slot, new entry) pairs, ``dead`` slots no longer live,
        ``before``: the entries it was built from (what a slot held), ``n_slots``: slots after the edit.
        Only the touched terms' postings are rebuilt; every other array is shared. None: no questions left."""
        gone = {int(s) for s in dead} | {slot for slot, _ in changed}
        touched: set[str] = set()
        for slot in gone:
            if slot < len(self.lengths) and self.lengths[slot]:
                touched.update(question_terms(getattr(before[slot], "example_questions", ())))
        added: dict[int, Counter] = {}
        for slot, e in changed:
            counts = question_terms(getattr(e, "example_questions", ()))
            if counts:
                added[slot] = counts
                touched.update(counts)
        gone_slots = np.array(sorted(gone), dtype=np.int64)
        postings = dict(self.postings)
        for term in touched:
            slots, tfs = self.postings.get(term, (np.empty(0, np.int64), np.empty(0)))
            keep = ~np.isin(slots, gone_slots)
            extra = sorted((slot, counts[term]) for slot, counts in added.items() if term in counts)
            new_slots = np.concatenate([slots[keep], np.array([s for s, _ in extra], dtype=np.int64)])
            new_tfs = np.concatenate([tfs[keep], np.array([f for _, f in extra], dtype=np.float64)])
            if len(new_slots):
                order = np.argsort(new_slots, kind="stable")
                postings[term] = (new_slots[order], new_tfs[order])
            else:
                del postings[term]
        if not postings:
            return None
        lengths = np.zeros(n_slots, dtype=np.float64)
        kept = min(n_slots, len(self.lengths))
        lengths[:kept] = self.lengths[:kept]
        lengths[gone_slots[gone_slots < n_slots]] = 0.0
        for slot, counts in added.items():
            lengths[slot] = sum(counts.values())
        return QuestionsIndex(postings, lengths, k1=self.k1, b=self.b, delta=self.delta)

    def scores(self, query: Mapping[str, float]) -> np.ndarray:
        """Per slot, the BM25+ score of the query's matched terms (each weighted by ``query``).

        The δ part counts for matched terms only: an unmatched document scores 0, so a share of the
        best score compares what the documents hold, not a constant every document gets.
        """
        totals = np.zeros(len(self.lengths), dtype=np.float64)
        for term, weight in query.items():
            found = self.postings.get(term)
            if found is None or weight <= 0:
                continue
            weights = self._weights.get(term)
            if weights is None:
                weights = self._weights[term] = self._posting_weights(*found)
            totals[found[0]] += weight * weights
        return totals

    def _posting_weights(self, slots: np.ndarray, tfs: np.ndarray) -> np.ndarray:
        k1, b = self.k1, self.b
        idf = math.log((self.n_docs + 1) / len(slots))
        norm = k1 * (1 - b + b * self.lengths[slots] / self.avgdl)
        return idf * (self.delta + tfs * (k1 + 1) / (tfs + norm))

    def top(
        self, query: Mapping[str, float], k: int, share: float, tie_key: Callable[[int], str] | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` best slots scoring at least ``share`` of the best, best first. Ties go by
        ``tie_key(slot)`` (the router passes the package ID: a delta appends a new entry's slot where a
        fresh build places it in catalog order, and both must pick the same entry), else by slot."""
        totals = self.scores(query)
        if k <= 0 or not len(totals):
            return []
        key = tie_key or int
        if k == 1:  # the shipped depth: one pass over the scores, no partition
            best = float(totals.max())
            if best <= 0:
                return []
            tied = np.flatnonzero(totals == best).tolist()
            return [(min(tied, key=key) if len(tied) > 1 else tied[0], best)]
        matched = np.flatnonzero(totals)
        if not len(matched):
            return []
        values = totals[matched]
        if len(matched) > k:
            # Every slot scoring at least the k-th best (ties included), then ordered: no full sort.
            kth = np.partition(values, len(values) - k)[len(values) - k]
            keep = values >= kth
            matched, values = matched[keep], values[keep]
        order = sorted(zip((-values).tolist(), map(key, matched.tolist()), matched.tolist()))[:k]
        floor = share * -order[0][0]
        return [(slot, -negative) for negative, _, slot in order if -negative >= floor]
