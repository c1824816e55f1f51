"""Catalog entries → BM25F triplets (term, document, weighted frequency), fast.

The index build used to analyze every field of every entry token by token in
Python and count terms in one dict per entry: at 100,000 entries that loop
was most of a ~35 s (CPU) build. Here a text is counted by whitespace-separated
chunk (split and identified by numpy over a batch's UTF-8 bytes), each distinct
chunk of the corpus is analyzed once, and the per-(document, term) counting is
done by numpy per batch of entries.

The result is the same as the per-entry loop (``RouterIndex._weighted_docs``
before this module): term ids are assigned in order of first appearance
(entry by entry, fields in ``FIELDS`` order, tokens in text order), and a
term's weighted frequency is ``Σ_f w_f·count_f`` added field by field in that
same order, so the sums are bit-identical. Document lengths are the sum of
a document's weighted frequencies; with the default (dyadic) field weights
every partial sum is exact, so the summation order does not matter.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from common.text import analyze, analyze_identifier

from .entries import EntryLike
from .sorting import sorted_distinct, sorted_unique_counts

# BM25F fields in the order their terms are first seen (the vocabulary's order).
FIELDS = ("id", "aliases", "title", "keywords", "summary", "body", "search_terms")
_IDENTIFIER_FIELDS = frozenset({"id", "aliases"})
# Entries per numpy counting pass: bounds the transient token arrays (~1M tokens).
CHUNK_ENTRIES = 4096
# Entries per tokenizer call within a batch (it changes no id: see ``batch_triplets``).
TEXT_ENTRIES = 512


def _field_text_list(entries: Sequence[EntryLike], name: str) -> list[str]:
    """One text per entry for a text field (``keywords`` and ``search_terms`` joined by a space: tokens
    never span whitespace), read by one comprehension per field rather than a call per entry."""
    if name == "title":
        return [e.title for e in entries]
    if name == "summary":
        return [e.summary for e in entries]
    if name == "body":
        return [e.body for e in entries]
    if name == "keywords":
        return [" ".join(e.keywords) for e in entries]
    if name == "search_terms":
        return [" ".join(getattr(e, "search_terms", ())) for e in entries]
    return [" ".join(_field_texts(e, name)) for e in entries]


def _field_texts(e: EntryLike, name: str) -> Sequence[str]:
    if name == "id":
        return (e.package_id,)
    if name == "aliases":
        return e.aliases
    if name == "title":
        return (e.title,)
    if name == "keywords":
        return e.keywords
    if name == "summary":
        return (e.summary,)
    if name == "body":
        return (e.body,)
    return getattr(e, "search_terms", ())


# ``str.split()`` splits on every character ``str.isspace()`` accepts. Over UTF-8 bytes: the ASCII
# whitespace bytes (class 1), and a few 2- and 3-byte characters (U+0085, U+00A0, U+1680, U+2000-U+200A,
# ...), each led by a byte of class 2: a batch without those bytes is split by class 1 alone. All of
# Unicode's whitespace is in its first plane (a test checks every plane).
_WIDE_SPACES = np.array([cp for cp in range(128, 0x10000) if chr(cp).isspace()], dtype=np.int64)
_WIDE_SPACE_LEADS = frozenset(chr(cp).encode()[0] for cp in _WIDE_SPACES.tolist())
_BYTE_CLASS = bytes(1 if b < 128 and chr(b).isspace() else 2 if b in _WIDE_SPACE_LEADS else 0 for b in range(256))
_PAD = b" " * 16  # whitespace around a batch: the 8-byte reads at a chunk's bytes 0 and 8 stay inside it
# A chunk of up to 15 UTF-8 bytes has an exact key of two little-endian words: its bytes 0-7 (zero past
# its end), and its bytes 8-14 (zero past its end) with its size in the top byte.
_SHORT_CHUNK_BYTES = 15
_LOW_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)  # low n bytes of a word
_EMPTY = np.int64(-1).astype(np.uint64)  # a free slot's id (-1) in the table's uint64 rows


def _chunk_hash(heads: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """A 64-bit hash of short chunks' keys: it only places a key, lookups always compare the whole key."""
    h = heads * np.uint64(0x9E3779B97F4A7C15) ^ tails * np.uint64(0xC2B2AE3D27D4EB4F)
    h ^= h >> np.uint64(31)
    return h * np.uint64(0xD6E8FEB86659FD93)


class _ShortChunkIds:
    """Exact key (``_SHORT_CHUNK_BYTES``) → chunk id of every known chunk of ≤ 15 bytes, in numpy.

    An open-addressing table (linear probing, at most a quarter full) looked
    up for a whole batch at once: a probe compares the whole key, so keys that
    share a hash only cost probes, they never share an id. A slot is one row
    (id, head word, tail word): a probe reads one cache line, not three arrays.
    """

    def __init__(self, bits: int = 16):
        self.count = 0
        self._allocate(bits)

    def _allocate(self, bits: int) -> None:
        self.bits = bits
        self.mask = (1 << bits) - 1
        self.rows = np.zeros((1 << bits, 3), dtype=np.uint64)  # tail 0: no chunk's key (its size is never 0)
        self.rows[:, 0] = _EMPTY

    @property
    def ids(self) -> np.ndarray:
        """Each slot's chunk id, -1 where the slot is free."""
        return self.rows[:, 0].view(np.int64)

    def _slots(self, heads: np.ndarray, tails: np.ndarray) -> np.ndarray:
        return (_chunk_hash(heads, tails) >> np.uint64(64 - self.bits)).astype(np.int64)

    def lookup(self, heads: np.ndarray, tails: np.ndarray) -> np.ndarray:
        """Chunk id of every key, -1 for a key not in the table."""
        slots = self._slots(heads, tails)
        rows = np.take(self.rows, slots, axis=0)
        found = rows[:, 0].view(np.int64)
        hit = (rows[:, 1] == heads) & (rows[:, 2] == tails)
        out = np.where(hit, found, -1)
        # Keys whose home slot holds another key probe on (a few percent at a quarter full).
        pending = np.flatnonzero((found >= 0) & ~hit)
        slots = slots[pending]
        while pending.size:
            slots = (slots + 1) & self.mask
            rows = np.take(self.rows, slots, axis=0)
            found = rows[:, 0].view(np.int64)
            hit = (rows[:, 1] == heads[pending]) & (rows[:, 2] == tails[pending])
            out[pending[hit]] = found[hit]
            more = (found >= 0) & ~hit
            pending, slots = pending[more], slots[more]
        return out

    def insert(self, heads: np.ndarray, tails: np.ndarray, ids: np.ndarray) -> None:
        """Add distinct keys that are not in the table yet."""
        if 4 * (self.count + len(ids)) > len(self.rows):
            old = self.rows[self.ids >= 0]
            bits = self.bits + 1
            while (1 << bits) < 8 * (self.count + len(ids)):
                bits += 1
            self._allocate(bits)
            self.count = 0
            self.insert(old[:, 1], old[:, 2], old[:, 0].view(np.int64))
        self.count += len(ids)
        slots = self._slots(heads, tails)
        while ids.size:
            free = self.ids[slots] < 0
            # One key per free slot this round; every other key moves on to the next slot.
            _, won = np.unique(slots[free], return_index=True)
            won = np.flatnonzero(free)[won]
            at = slots[won]
            self.rows[at, 0] = ids[won].astype(np.int64).view(np.uint64)
            self.rows[at, 1] = heads[won]
            self.rows[at, 2] = tails[won]
            rest = np.ones(len(ids), dtype=bool)
            rest[won] = False
            slots = (slots[rest] + 1) & self.mask
            heads, tails, ids = heads[rest], tails[rest], ids[rest]


class TermTable:
    """Texts → chunk ids; chunk → term ids; term → id.

    Tokens never span whitespace, so a text's tokens are those of its
    whitespace-separated chunks in order. Each distinct chunk of the corpus
    ("preço,", "[[PKG_000123]]") is analyzed once and remembered as an id
    with its term ids (CSR arrays). A batch of texts is then chunked by numpy
    over its UTF-8 bytes (``str.split()``'s boundaries) and its chunks of up to
    15 bytes are found by an exact key in ``_ShortChunkIds``: only chunks not
    seen before, and longer ones, go through Python (``chunks``, the dict that
    registers them).
    """

    def __init__(self):
        self.vocabulary: dict[str, int] = {}
        # chunk → id, in order of first appearance. A plain dict (it used to register missing chunks itself,
        # holding the table: a reference cycle that kept the whole table alive until a full collection).
        self.chunks: dict[str, int] = {}
        self.chunk_ptr = array("q", [0])
        self.chunk_terms = array("i")
        self.short_ids = _ShortChunkIds()

    def _term_id(self, term: str) -> int:
        return self.vocabulary.setdefault(term, len(self.vocabulary))

    def _register(self, chunk: str) -> int:
        chunk_id = self.chunks[chunk] = len(self.chunks)
        self.chunk_terms.extend(self._term_id(t) for t in analyze(chunk))
        self.chunk_ptr.append(len(self.chunk_terms))
        return chunk_id

    def texts_chunks(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Chunk ids of every text in order (``text.split()``'s chunks), and how many each text has."""
        encoded = [text.encode("utf-8", "surrogatepass") for text in texts]
        sizes = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        buf = _PAD + b" ".join(encoded) + _PAD
        del encoded
        starts, ends = _chunk_bounds(buf)
        lens = np.diff(np.searchsorted(starts, np.cumsum(sizes + 1) + (len(_PAD) - 1)), prepend=0)
        sizes = ends - starts
        # Little-endian words at every byte offset: a chunk's bytes 0-7 and 8-15 are one read each.
        words = np.ndarray((len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))
        heads = words[starts]
        heads &= _LOW_BYTES[np.minimum(sizes, 8)]
        tails = words[starts + 8]
        tails &= _LOW_BYTES[np.clip(sizes - 8, 0, 7)]
        tails |= sizes.astype(np.uint64) << np.uint64(56)
        ids = self.short_ids.lookup(heads, tails)
        ids[sizes > _SHORT_CHUNK_BYTES] = -1  # a longer chunk's two words are not its key
        unknown = np.flatnonzero(ids < 0)
        if unknown.size:
            self._resolve(buf, starts, ends, heads, tails, ids, unknown)
        return ids, lens

    def _resolve(self, buf, starts, ends, heads, tails, ids, unknown) -> None:
        """Ids of the chunks ``short_ids`` does not know (new or long ones): new chunks register in order."""
        is_short = ends[unknown] - starts[unknown] <= _SHORT_CHUNK_BYTES
        short = unknown[is_short]
        # One Python lookup per distinct short key (at its first occurrence); a key sharing its hash with an
        # earlier, different key is looked up on its own, and so is every long chunk.
        _, firsts, inverse = np.unique(_chunk_hash(heads[short], tails[short]), return_index=True, return_inverse=True)
        reps = short[firsts][inverse]
        same = (heads[reps] == heads[short]) & (tails[reps] == tails[short])
        looked_up = sorted_distinct(np.concatenate([short[firsts], short[~same], unknown[~is_short]]))
        # In token order: a chunk's first occurrence is always among them, so new chunks register in order.
        known, register = self.chunks.get, self._register
        ids[looked_up] = [
            chunk_id if (chunk_id := known(chunk)) is not None else register(chunk)
            for chunk in (
                buf[s:e].decode("utf-8", "surrogatepass")
                for s, e in zip(starts[looked_up].tolist(), ends[looked_up].tolist())
            )
        ]
        ids[short[same]] = ids[reps[same]]
        new = looked_up[ends[looked_up] - starts[looked_up] <= _SHORT_CHUNK_BYTES]
        _, once = np.unique(ids[new], return_index=True)  # the key is exact: one key per chunk
        new = new[once]
        self.short_ids.insert(heads[new], tails[new], ids[new])

    def identifier_term_ids(self, texts_per_entry: Iterable[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
        """Term ids of an ID or alias field (``analyze_identifier`` of each text, in order) and how many each
        entry has. One loop with its lookups bound once: 600,000 identifier terms at 100k entries."""
        ids, per_entry = array("i"), array("i")
        vocabulary, analyze_id = self.vocabulary, analyze_identifier
        term_id, append, count = vocabulary.setdefault, ids.append, per_entry.append
        for texts in texts_per_entry:
            n = 0
            for text in texts:
                terms = analyze_id(text)
                for term in terms:
                    append(term_id(term, len(vocabulary)))
                n += len(terms)
            count(n)
        return _np(ids, np.int32).astype(np.int64), _np(per_entry, np.int32)

    def expand(self, chunk_ids: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Chunk ids (with their documents) → the term ids they analyze to, in order."""
        ptr = np.frombuffer(self.chunk_ptr, dtype=np.int64)
        flat = _np(self.chunk_terms, np.int32).astype(np.int64)
        starts = ptr[chunk_ids]
        lens = ptr[chunk_ids + 1] - starts
        if lens.size == 0 or lens.max() <= 1:
            keep = lens == 1
            return flat[starts[keep]], docs[keep]
        total = int(lens.sum())
        within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
        return flat[np.repeat(starts, lens) + within], np.repeat(docs, lens)


def _np(values: array, dtype) -> np.ndarray:
    return np.frombuffer(values, dtype=dtype) if len(values) else np.zeros(0, dtype=dtype)


def weighted_parts(
    entries: Sequence[EntryLike], field_weights: Mapping[str, float], *, body_words: np.ndarray | None = None
) -> tuple[dict[str, int], list[tuple[np.ndarray, np.ndarray, np.ndarray]], np.ndarray]:
    """(vocabulary, parts, doc lengths) of a catalog: ``weighted_triplets`` per batch of entries, not joined.

    Each part is ``(term ids, doc ids, weighted frequencies)`` of one batch, in
    document order (within a document, by term id), one per (term, document)
    with a positive weighted frequency; ``SparseBM25Index.from_parts`` reads them.
    The frequencies are float32 when that holds them exactly (the default, dyadic
    field weights: a count times a weight is a short binary fraction), else float64:
    the parts are the build's largest transient (13.5 M triplets at 100k entries).

    ``body_words`` (an integer array, one slot per entry), when given, is filled with each body's
    number of whitespace-separated words (``len(body.split())``), which the body's tokenization
    counts anyway; left untouched when the body field has no weight (it is not read then).
    """
    table = TermTable()
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    lengths = np.zeros(len(entries), dtype=np.float64)
    weights = [(name, float(field_weights.get(name, 1.0))) for name in FIELDS]
    for start in range(0, len(entries), CHUNK_ENTRIES):
        chunk = entries[start : start + CHUNK_ENTRIES]
        words = None if body_words is None else body_words[start : start + len(chunk)]
        terms, docs, values = batch_triplets(table, chunk, weights, words)
        if values.size:
            lengths[start : start + len(chunk)] += np.bincount(docs, weights=values, minlength=len(chunk))
            docs += start
            parts.append((terms, docs, values))
    return table.vocabulary, parts, lengths


def weighted_triplets(
    entries: Sequence[EntryLike], field_weights: Mapping[str, float]
) -> tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(vocabulary, term ids, doc ids, weighted frequencies, doc lengths) of a catalog.

    Triplets come in document order (within a document, by term id), one per
    (term, document) with a positive weighted frequency.
    """
    vocabulary, parts, lengths = weighted_parts(entries, field_weights)
    if not parts:
        empty_i = np.zeros(0, dtype=np.int32)
        return vocabulary, empty_i, empty_i.copy(), np.zeros(0), lengths
    return (
        vocabulary,
        np.concatenate([terms for terms, _, _ in parts]).astype(np.int32, copy=False),
        np.concatenate([docs for _, docs, _ in parts]).astype(np.int32, copy=False),
        np.concatenate([values for _, _, values in parts]).astype(np.float64, copy=False),
        lengths,
    )


def batch_triplets(
    table: TermTable,
    chunk: Sequence[EntryLike],
    weights: list[tuple[str, float]],
    body_words: np.ndarray | None = None,
    *,
    by_term: bool = False,
):
    """Unique (term, local doc) pairs of a chunk with Σ_f w_f·count_f summed field by field
    (and each body's word count into ``body_words``, when given), ordered by document then term,
    or with ``by_term`` by term then document (a segment's runs: ``segment_build`` need not sort them).
    The sums are the same either way: each pair's field contributions are added in field order."""
    return field_pairs(*batch_field_terms(table, chunk, weights, body_words), by_term=by_term)


def batch_field_terms(
    table: TermTable,
    chunk: Sequence[EntryLike],
    weights: list[tuple[str, float]],
    body_words: np.ndarray | None = None,
):
    """``batch_triplets``' first half, what reads the entries and the term table: each field's
    (weight, term ids, local doc ids) in field order, and the vocabulary's size after the chunk."""
    n_docs = len(chunk)
    doc_numbers = np.arange(n_docs, dtype=np.int64)
    field_terms: list[tuple[float, np.ndarray, np.ndarray]] = []
    for name, w in weights:
        if w == 0:
            continue
        if name in _IDENTIFIER_FIELDS:
            terms, per_doc = table.identifier_term_ids(
                [(e.package_id,) for e in chunk] if name == "id" else [e.aliases for e in chunk]
            )
            docs = np.repeat(doc_numbers, per_doc)
        else:
            # A field's texts of one entry joined by a space: tokens never span whitespace.
            # By slices of the batch: a slice's texts are chunked and expanded in order, so chunk and term
            # ids are the ones the whole batch at once would get, and the tokenizer's arrays (~60 bytes a
            # token) are a slice's, not a batch's (about 60 MB fewer at the peak of a 100k build).
            term_parts, doc_parts = [], []
            for lo in range(0, n_docs, TEXT_ENTRIES):
                hi = min(lo + TEXT_ENTRIES, n_docs)
                texts = _field_text_list(chunk[lo:hi], name)
                chunk_ids, lens = table.texts_chunks(texts)
                if name == "body" and body_words is not None:
                    body_words[lo:hi] = lens
                sliced = table.expand(chunk_ids, np.repeat(doc_numbers[lo:hi], lens))
                term_parts.append(sliced[0])
                doc_parts.append(sliced[1])
                del texts, chunk_ids, lens, sliced
            terms = term_parts[0] if len(term_parts) == 1 else np.concatenate(term_parts)
            docs = doc_parts[0] if len(doc_parts) == 1 else np.concatenate(doc_parts)
            del term_parts, doc_parts
        if terms.size:
            field_terms.append((w, terms, docs))
    return field_terms, n_docs, len(table.vocabulary)


def field_pairs(field_terms: list, n_docs: int, n_terms: int, *, by_term: bool = False):
    """``batch_triplets``' second half: numpy only, it reads neither the entries nor the term table (the
    segment build runs it beside the next batch's analysis)."""
    n_terms = max(n_terms, 1)
    keys_parts: list[np.ndarray] = []
    value_parts: list[np.ndarray] = []
    for w, terms, docs in field_terms:
        unique, counts = sorted_unique_counts(terms * n_docs + docs if by_term else docs * n_terms + terms)
        keys_parts.append(unique)
        value_parts.append(w * counts.astype(np.float64))  # w·count, as the per-entry loop computed it
    if not keys_parts:
        empty = np.zeros(0, dtype=np.int32)
        return empty, empty.copy(), np.zeros(0)
    keys = np.concatenate(keys_parts)
    values = np.concatenate(value_parts)
    # A stable sort keeps each key's field contributions in field order: the
    # sums below add them in the order the per-entry loop did.
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    summed = np.add.reduceat(values, starts) if len(starts) < len(keys) else values
    unique = keys[starts]
    positive = summed > 0
    unique, summed = unique[positive], summed[positive]
    narrow = summed.astype(np.float32)
    if np.array_equal(narrow, summed):
        summed = narrow  # exact: half the bytes while the batch waits to be placed
    del narrow
    if by_term:
        return (unique // n_docs).astype(np.int32), (unique % n_docs).astype(np.int32), summed
    return (unique % n_terms).astype(np.int32), (unique // n_terms).astype(np.int32), summed


def _chunk_bounds(buf: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Start and end offsets of ``buf``'s chunks, split as ``str.split()`` splits the text it encodes.

    ``buf`` is UTF-8 (with ``surrogatepass``) with whitespace at both ends.
    """
    classes = buf.translate(_BYTE_CLASS)
    if 2 not in classes:
        space = np.frombuffer(classes, dtype=np.bool_)
    else:
        b = np.frombuffer(buf, dtype=np.uint8)
        c = np.frombuffer(classes, dtype=np.uint8)
        space = c == 1
        # Lead bytes only ever start a character in UTF-8: decode the one starting at each and test it.
        at = np.flatnonzero(c == 2)
        b0, b1, b2 = b[at].astype(np.int64), b[at + 1].astype(np.int64), b[at + 2].astype(np.int64)
        two = b0 < 0xE0
        codepoints = np.where(
            two, ((b0 & 0x1F) << 6) | (b1 & 0x3F), ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F)
        )
        wide = np.isin(codepoints, _WIDE_SPACES)
        at, two = at[wide], two[wide]
        space[at] = space[at + 1] = True
        space[at[~two] + 2] = True
    bounds = np.flatnonzero(space[1:] != space[:-1])
    bounds += 1
    return bounds[0::2], bounds[1::2]
