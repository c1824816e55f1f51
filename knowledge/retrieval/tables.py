"""Frozen lookup tables as flat numpy arrays: what a shared segment stores besides the postings.

A process that maps a segment (``segments.segment_load``) gets the router's
per-entry tables as arrays backed by the page cache instead of building Python
dicts, lists and tuples from 100,000 entries (which cost ~280 MB per process):

- ``StrTable``: strings → int (term ids, slots), as one UTF-8 blob with
  offsets, and a sorted array of stable 64-bit hashes (XXH3) for lookups (a
  hash, a binary search, the key compared to be sure). Iterates in id order.
- ``Ragged``: row i → a list of ints (CSR: ``ptr`` and ``values``).
- ``Overlay`` / ``OverlaySeq``: a delta index's edits over a frozen base
  (``delta.index_with_edits``) without copying the base.

The Mapping views answer exactly what the dicts they replace answered (same
keys, values and iteration order), so routes are identical.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
import numpy as np
import xxhash

_NOT_FOUND = -1
# Keys a table remembers having looked up (hits and misses): the hot path asks the same few.
_CACHE_MAX = 65_536
_MISSING = object()


# A key's 64-bit hash: XXH3, stable across processes, platforms and versions (its output is specified).
# It was BLAKE2b (segment format 4): ~0.5 µs a key in Python where XXH3 takes ~0.1, about 0.4 s of a
# 100k build's ~1 M keys, and a fifth of a lookup's hashing.
_xxh3 = xxhash.xxh3_64_intdigest


def _hash(key: str) -> int:
    return _xxh3(key.encode("utf-8", "surrogatepass"))


def _view(values: np.ndarray, fmt: str) -> memoryview:
    """A memoryview of a (possibly memory-mapped) array for fast scalar indexing from Python."""
    return memoryview(np.ascontiguousarray(values)).cast("B").cast(fmt)


class StrTable(Mapping):
    """A frozen ``str → int`` map over arrays; ``values`` None: a key's value is its id (position)."""

    ARRAYS = ("blob", "offsets", "hashes", "order", "values")

    def __init__(self, blob, offsets, hashes, order, values=None):
        self.arrays = {"blob": blob, "offsets": offsets, "hashes": hashes, "order": order}
        if values is not None:
            self.arrays["values"] = values
        self._blob = _view(blob, "B")
        self._offsets = _view(offsets, "q")
        self._hashes = _view(hashes, "Q")
        self._order = _view(order, "i")
        self._values = _view(values, "q") if values is not None else None
        self._n = len(offsets) - 1
        self._cache: dict[str, int | None] = {}

    @classmethod
    def build(cls, keys: Sequence[str], values: Sequence[int] | np.ndarray | None = None) -> StrTable:
        encoded = [k.encode("utf-8", "surrogatepass") for k in keys]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
        blob = np.frombuffer(b"".join(encoded), dtype=np.uint8) if encoded else np.zeros(0, dtype=np.uint8)
        hashes = np.fromiter(map(_xxh3, encoded), dtype=np.uint64, count=len(encoded))
        order = np.argsort(hashes, kind="stable").astype(np.int32)
        return cls(
            blob.copy(),
            offsets,
            hashes[order],
            order,
            None if values is None else np.asarray(values, dtype=np.int64),
        )

    # ----------------------------------------------------------------- lookups

    def key(self, i: int) -> str:
        return bytes(self._blob[self._offsets[i] : self._offsets[i + 1]]).decode("utf-8", "surrogatepass")

    def find(self, key: str) -> int:
        """The id of ``key``, or -1."""
        h = _hash(key)
        hashes = self._hashes
        at = bisect_left(hashes, h)
        if at < self._n and hashes[at] == h:
            encoded = key.encode("utf-8", "surrogatepass")
            offsets, blob, order = self._offsets, self._blob, self._order
            while at < self._n and hashes[at] == h:
                i = order[at]
                if blob[offsets[i] : offsets[i + 1]] == encoded:
                    return i
                at += 1
        return _NOT_FOUND

    def _lookup(self, key) -> int | None:
        cache = self._cache
        found = cache.get(key, _MISSING)
        if found is _MISSING:
            if key.__class__ is not str:
                return None
            i = self.find(key)
            found = None if i < 0 else (i if self._values is None else self._values[i])
            if len(cache) >= _CACHE_MAX:
                cache.clear()
            cache[key] = found
        return found

    def __getitem__(self, key):
        found = self._lookup(key)
        if found is None:
            raise KeyError(key)
        return found

    def get(self, key, default=None):
        found = self._lookup(key)
        return default if found is None else found

    def __contains__(self, key) -> bool:
        return self._lookup(key) is not None

    def __iter__(self) -> Iterator[str]:
        blob = bytes(self._blob)
        offsets = self._offsets
        for i in range(self._n):
            yield blob[offsets[i] : offsets[i + 1]].decode("utf-8", "surrogatepass")

    def __len__(self) -> int:
        return self._n

    def value_at(self, i: int) -> int:
        return i if self._values is None else self._values[i]


class Ragged(Sequence):
    """Rows of ints (CSR): ``ptr`` (n + 1, int64) and ``values`` (int32 or int64)."""

    ARRAYS = ("ptr", "values")

    def __init__(self, ptr, values):
        self.arrays = {"ptr": ptr, "values": values}
        self._ptr = _view(ptr, "q")
        self._values = _view(values, "q" if np.dtype(values.dtype).itemsize == 8 else "i")
        self._n = len(ptr) - 1

    @classmethod
    def build(cls, rows: Iterable[Iterable[int]], dtype=np.int32) -> Ragged:
        flat: list[int] = []
        ptr = [0]
        for row in rows:
            flat.extend(row)
            ptr.append(len(flat))
        return cls(np.asarray(ptr, dtype=np.int64), np.asarray(flat, dtype=dtype))

    def __getitem__(self, i: int) -> list[int]:
        return self._values[self._ptr[i] : self._ptr[i + 1]].tolist()

    def array(self, i: int) -> np.ndarray:
        values = self.arrays["values"]
        return np.asarray(values[self._ptr[i] : self._ptr[i + 1]], dtype=np.int64)

    def __len__(self) -> int:
        return self._n


class RowMap(Mapping):
    """``key → row`` (a list of ints): a ``StrTable`` (key → row number) and a ``Ragged``."""

    def __init__(self, keys: StrTable, rows: Ragged):
        self.keys, self.rows = keys, rows

    def __getitem__(self, key) -> list[int]:
        r = self.keys.get(key)
        if r is None:
            raise KeyError(key)
        return self.rows[r]

    def get(self, key, default=None):
        r = self.keys.get(key)
        return default if r is None else self.rows[r]

    def __contains__(self, key) -> bool:
        return key in self.keys

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys)

    def __len__(self) -> int:
        return len(self.keys)


class SlotRows(Mapping):
    """``slot → row`` for the slots whose row is not empty (the wiki-link graph), over a ``Ragged``."""

    def __init__(self, rows: Ragged):
        self.rows = rows

    def get(self, i, default=None):
        if 0 <= i < len(self.rows):
            row = self.rows[i]
            if row:
                return row
        return default

    def __getitem__(self, i) -> list[int]:
        row = self.get(i)
        if row is None:
            raise KeyError(i)
        return row

    def __contains__(self, i) -> bool:
        return self.get(i) is not None

    def __iter__(self) -> Iterator[int]:
        ptr = np.asarray(self.rows.arrays["ptr"])
        return iter(np.flatnonzero(ptr[1:] > ptr[:-1]).tolist())

    def __len__(self) -> int:
        ptr = np.asarray(self.rows.arrays["ptr"])
        return int(np.count_nonzero(ptr[1:] > ptr[:-1]))


class Overlay(MutableMapping):
    """A mutable map over a frozen base: writes and deletions stay here, the base is never copied."""

    def __init__(self, base: Mapping):
        if isinstance(base, Overlay):  # deltas never stack, but stay correct if they did
            self._base, self._set, self._gone, self._len = base._base, dict(base._set), set(base._gone), base._len
        else:
            self._base, self._set, self._gone, self._len = base, {}, set(), len(base)

    def __getitem__(self, key):
        if key in self._set:
            return self._set[key]
        if key in self._gone:
            raise KeyError(key)
        return self._base[key]

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key) -> bool:
        return key in self._set or (key not in self._gone and key in self._base)

    def __setitem__(self, key, value) -> None:
        if key not in self:
            self._len += 1
        self._set[key] = value
        self._gone.discard(key)

    def __delitem__(self, key) -> None:
        if key not in self:
            raise KeyError(key)
        self._len -= 1
        self._set.pop(key, None)
        if key in self._base:
            self._gone.add(key)

    def __iter__(self) -> Iterator:
        for key in self._base:
            if key not in self._gone:
                yield key
        for key in self._set:
            if key not in self._base:
                yield key

    def __len__(self) -> int:
        return self._len


class OverlaySeq(Sequence):
    """A sequence over a frozen base with some items replaced and some appended."""

    def __init__(self, base: Sequence):
        self._base, self._set, self._tail = base, {}, []

    def __getitem__(self, i):
        n = len(self._base)
        if i < 0:
            i += len(self)
        if i >= n:
            return self._tail[i - n]
        found = self._set.get(i, _MISSING)
        return self._base[i] if found is _MISSING else found

    def __len__(self) -> int:
        return len(self._base) + len(self._tail)

    def __setitem__(self, i: int, value) -> None:
        n = len(self._base)
        if i >= n:
            self._tail[i - n] = value
        else:
            self._set[i] = value

    def append(self, value) -> None:
        self._tail.append(value)


class DocFreqView(Mapping):
    """``term → document frequency`` over a vocabulary (term → column) and a df array, without a copy."""

    def __init__(self, vocabulary: Mapping[str, int], doc_freq: np.ndarray):
        self._vocabulary = vocabulary
        self._doc_freq = doc_freq

    def __getitem__(self, term) -> int:
        return int(self._doc_freq[self._vocabulary[term]])

    def get(self, term, default=None):
        col = self._vocabulary.get(term)
        return default if col is None else int(self._doc_freq[col])

    def __contains__(self, term) -> bool:
        return term in self._vocabulary

    def __iter__(self) -> Iterator[str]:
        return iter(self._vocabulary)

    def __len__(self) -> int:
        return len(self._vocabulary)
