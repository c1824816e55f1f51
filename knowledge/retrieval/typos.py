"""Typo tolerance: edit distance 1 against the index vocabulary."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableMapping

TYPO_MIN_LENGTH = 4


def _deletes(term: str) -> set[str]:
    return {term[:i] + term[i + 1 :] for i in range(len(term))}


def _deletes_in_order(term: str) -> dict[str, None]:
    """``_deletes`` in the order of the deleted position: the table's keys are then filed in an order
    that does not depend on string hashing (``PYTHONHASHSEED``), so a segment's bytes are reproducible."""
    return dict.fromkeys(term[:i] + term[i + 1 :] for i in range(len(term)))


def _within_one_edit(a: str, b: str) -> bool:
    """Damerau-Levenshtein distance ≤ 1 (one insert, delete, substitute or swap)."""
    if a == b:
        return True
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la == lb:
        diff = [i for i in range(la) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    if la > lb:
        a, b = b, a
    # b is one longer: deleting one character of b gives a.
    return a in _deletes(b)


def typo_filing(terms: Iterable[str]) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Each term the typo table corrects, with the keys it is filed under in filing order: the term,
    then its deletion variants (``table_build`` files the vocabulary the same way, as arrays)."""
    for term in terms:
        # Codes and numbers are typed exactly (and would bloat the table).
        if len(term) < TYPO_MIN_LENGTH - 1 or not term.isalpha():
            continue
        yield term, (term, *_deletes_in_order(term))


def _add_terms(table: dict[str, list[str]], terms: Iterable[str]) -> None:
    for term, keys in typo_filing(terms):
        for key in keys:
            table.setdefault(key, []).append(term)


class TypoExpander:
    """Maps an unknown query term to known terms one edit away.

    A symmetric-delete map (SymSpell style) built lazily on the first unknown
    term, so indexes that never see a typo never pay for it. Only terms of at
    least ``TYPO_MIN_LENGTH`` characters are corrected: short stems are too
    often another real word one edit away.
    """

    def __init__(self, vocabulary: Mapping[str, int]):
        # vocabulary: term -> document frequency (used to prefer common terms)
        self._vocabulary = vocabulary
        self._deletes: MutableMapping[str, list[str]] | None = None

    def _build(self) -> dict[str, list[str]]:
        table: dict[str, list[str]] = {}
        _add_terms(table, self._vocabulary)
        return table

    def extended(self, vocabulary: Mapping[str, int], added: Iterable[str]) -> TypoExpander:
        """An expander over ``vocabulary``: this one's table plus the ``added`` terms (a delta index).

        Terms gone from ``vocabulary`` may stay in the table: ``expand`` only
        returns terms the vocabulary holds.
        """
        other = TypoExpander(vocabulary)
        if self._deletes is not None:
            from .tables import Overlay

            table = Overlay(self._deletes)  # the edits over this table (a dict, or arrays mapped from a segment)
            for term in added:
                # Copy-on-write: the lists of the table are shared with this expander.
                for key in (term, *_deletes(term)):
                    if key in table:
                        table[key] = [*table[key]]
            _add_terms(table, added)
            other._deletes = table
        return other

    def prepare(self) -> None:
        if self._deletes is None:
            self._deletes = self._build()

    def expand(self, term: str, limit: int = 2) -> list[str]:
        if term in self._vocabulary or len(term) < TYPO_MIN_LENGTH or term.isdigit():
            return []
        if self._deletes is None:
            self._deletes = self._build()
        found: set[str] = set()
        for key in {term} | _deletes(term):
            for candidate in self._deletes.get(key, ()):
                if candidate not in found and candidate in self._vocabulary and _within_one_edit(term, candidate):
                    found.add(candidate)
        ranked = sorted(found, key=lambda t: (-self._vocabulary[t], t))
        return ranked[:limit]
