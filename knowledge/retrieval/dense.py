"""The dense signal: sentence-embedding similarity between a question and each entry.

Words alone miss a paraphrase ("Se eu pagar a mais, em quantos dias sai o
resultado?" shares no word with "Prazos de entrega"), a chat-style typo, or a
question in another language; multilingual sentence embeddings
(``common.text.retrieval_embeddings``: multilingual-e5-small joined with
USE-multilingual v3) place them near the entry they mean. This module holds
an (entries × 896) float32 matrix aligned with the index's entries (a shared
mapped file with an index directory, ``dense_segment``; a delta overlays its
edits on it) and ranks entries by cosine; the ranking is fused by the router's
weighted RRF like every other signal (``signals._dense_signal``).

Passage vectors are computed when a revision is written (stored with it, see
``knowledge.embeddings``) or, for a folder of packages, in memory through an
on-disk cache keyed by sha256(model id + text) (``EmbeddingCache``); never per
request. Only the question is embedded per request (cached per exact text by
``common.text.retrieval_embeddings``). An entry without a vector simply lacks the signal.

An entry whose curators accepted example questions (proposed by the LLM at curation time,
``knowledge.search_terms``) is ranked by a blend of its passage vector and the mean of its
questions' vectors (``with_examples``): a user's question is closer to other questions than
to an article's prose, so a paraphrase that shares no word with the article still lands near
the questions it answers (document expansion by predicted queries, as doc2query does for
words, here in the embedding). The blend is computed when the vector is stored. The questions'
own vectors are kept too (``DenseIndex.set_example_rows``: in the shared vectors file beside the
matrix, or ``attach_examples`` in memory): with ``closest_share`` > 0 such an entry's cosine is
mixed with its closest example question's (``similarities``), so a question worded like one of
them stands out even where the mean of nine blurs it. That costs one more matrix-vector product
per embedded part, over the example questions' rows only.

Pure module: no Django.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from common.text import retrieval_embeddings

from . import background as background_set

# What an entry is embedded as: chosen on the dev splits (docs/retrieval.md, "Dense signal").
# The whole body (1,500 chars) was worse and 3x slower: the body dilutes what the entry is about.
PASSAGE_BODY_CHARS = 300
# Share of the example questions' mean vector in an entry's blended vector (leave-one-catalog-out
# over the ten dev splits, every fold: 0.5 of 0.3 / 0.5 / 0.7; docs/retrieval.md, "Example questions").
EXAMPLES_SHARE = 0.5
# A passage vector has unit length; a blend is shorter (about 0.92 measured: its questions' mean is about 0.9 long).
BLEND_MAX_LENGTH = 0.99
# The on-disk cache's key of a folder entry's example-question vectors: its blend's key and this.
EXAMPLE_ROWS_SUFFIX = "\n\x1fquestion vectors\x1f"
MAX_EXAMPLE_QUESTIONS = 12
MAX_EXAMPLE_QUESTION_LENGTH = 200
# A catalog's out-of-scope questions (RouterConfig.out_of_scope), per set curators keep and in all.
MAX_OUT_OF_SCOPE_QUESTIONS = 150
MAX_OUT_OF_SCOPE_TOTAL = 600


def passage_text(entry, body_chars: int = PASSAGE_BODY_CHARS) -> str:
    """'title. summary keywords. first body characters': what the entry is about, in its own words."""
    keywords = ", ".join(entry.keywords)
    head = f"{entry.title}. {entry.summary} {keywords}".strip()
    body = " ".join((entry.body or "").split())[:body_chars]
    return f"{head}. {body}" if body else head


def text_digest(text: str, model_id: str = retrieval_embeddings.MODEL_ID) -> str:
    return hashlib.sha256(f"{model_id}\x00{text}".encode()).hexdigest()


def embedded_text(passage: str, questions: Sequence[str] = ()) -> str:
    """What an entry's vector stands for (its digest's text): the passage, and the example questions
    blended in, if any. Without questions it is the passage itself, so stored vectors keep their digest."""
    if not questions:
        return passage
    return passage + "\n\x1fexample questions\x1f\n" + "\n".join(questions)


def clean_questions(raw, limit: int = MAX_EXAMPLE_QUESTIONS) -> list[str]:
    """A list of questions (or one per line) → distinct trimmed questions; ValueError past the bounds
    (``limit`` questions, ``MAX_EXAMPLE_QUESTION_LENGTH`` characters each)."""
    if isinstance(raw, str):
        raw = raw.splitlines()
    if not isinstance(raw, (list, tuple)):
        raise ValueError("a list of questions, or one question per line")
    questions: list[str] = []
    seen: set[str] = set()
    for item in raw:
        if not isinstance(item, str):
            continue
        question = " ".join(item.split())
        if not question or question.lower() in seen:
            continue
        if len(question) > MAX_EXAMPLE_QUESTION_LENGTH:
            raise ValueError(f"a question has at most {MAX_EXAMPLE_QUESTION_LENGTH} characters")
        seen.add(question.lower())
        questions.append(question)
    if len(questions) > limit:
        raise ValueError(f"at most {limit} questions")
    return questions


def with_examples(passage: np.ndarray, questions: np.ndarray) -> np.ndarray:
    """The passage vector blended with the mean of its example questions' (query-side) vectors.

    Not renormalised: the blend's length (< 1) is how ``DenseIndex.has_examples`` recognises it,
    and leave-one-catalog-out preferred it to the renormalised blend (docs/retrieval.md).
    """
    passage = np.asarray(passage, dtype=np.float32)
    if not len(questions):
        return passage
    mean = np.asarray(questions, dtype=np.float32).mean(axis=0)
    return ((1.0 - EXAMPLES_SHARE) * passage + EXAMPLES_SHARE * mean).astype(np.float32)


def _model_background() -> np.ndarray | None:
    """The router's own model's background vectors (read through the module: a test may swap it)."""
    return background_set.background_matrix()


class DenseIndex:
    """Vectors of a catalog's entries: unit length, shorter when example questions are blended in
    (``with_examples``); rows of entries without one are zero and never ranked.

    ``vectors`` may be a read-only mapping of a shared file (``dense_segment``): every process then
    reads one copy in the page cache. A delta's index keeps its base's matrix and *overlays* the
    few slots an edit changed (``overlay_slots``, their rows ``overlay``), entries appended after the
    base's included, so an edit never copies the matrix.
    """

    def __init__(
        self,
        vectors: np.ndarray,
        present: np.ndarray,
        *,
        overlay_slots: np.ndarray | None = None,
        overlay: np.ndarray | None = None,
        embed_query: Callable[[str], np.ndarray] | None = None,
        model_id: str = retrieval_embeddings.MODEL_ID,
        background: Callable[[], np.ndarray | None] | None = None,
    ):
        self.matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        self.present = np.asarray(present, dtype=bool)
        if len(self.present) < len(self.matrix):
            raise ValueError("fewer presence flags than base rows")
        self.overlay_slots = np.asarray(overlay_slots if overlay_slots is not None else (), dtype=np.int64)
        self.overlay = np.ascontiguousarray(
            overlay if overlay is not None else np.zeros((0, self.matrix.shape[1]), dtype=np.float32),
            dtype=np.float32,
        )
        if len(self.overlay) != len(self.overlay_slots):
            raise ValueError("one overlay row per overlay slot")
        self.has_any = bool(self.present.any())
        self.model_id = model_id
        self._embed_query = embed_query or retrieval_embeddings.embed_query
        # The background questions' vectors in this index's space (``background``); by default the
        # router's own model's, and none when the questions are embedded by anything else.
        if background is None and embed_query is None:
            background = _model_background
        self._background = background
        # Questions embedded by a stand-in ``embed_query`` (tests) for ``closest_question``, per set.
        self._custom_embed = embed_query is not None and embed_query is not retrieval_embeddings.embed_query
        self._question_sets: dict[tuple[str, ...], np.ndarray | None] = {}
        self._rows: list[memoryview] | None = None
        # Example questions' vectors: one or two groups of (rows, their entry slots, where each slot's
        # rows start, which slots count). The base's group (``set_example_rows``; a shared mapping when
        # the vectors file holds it) and, for a delta, the edited slots' own rows (``overlay_over``),
        # the base's rows of those slots no longer counting.
        self._example_groups: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]] = []
        self._example_views: dict[int, memoryview] | None = None

    def set_example_rows(self, matrix: np.ndarray, slots: np.ndarray, starts: np.ndarray) -> None:
        """Use ``matrix`` (rows × dim float32, kept as it is: a read-only mapping stays one) as the
        example-question vectors: slot ``slots[j]``'s rows are ``starts[j]`` up to the next start (or
        the end). Slots in any order, starts increasing, no slot empty. Called before the index serves."""
        slots = np.asarray(slots, dtype=np.int64)
        starts = np.asarray(starts, dtype=np.int64)
        if (
            matrix.ndim != 2
            or matrix.shape[1] != self.matrix.shape[1]
            or len(slots) != len(starts)
            or (len(starts) and (starts[0] != 0 or np.any(np.diff(starts) <= 0) or starts[-1] >= len(matrix)))
            or (not len(starts) and len(matrix))
            or (len(slots) and (slots.min() < 0 or slots.max() >= len(self.present)))
        ):
            raise ValueError("example rows that do not fit this index")
        self._example_groups = [(matrix, slots, starts, None)] if len(slots) else []
        self._example_views = None

    def attach_examples(self, rows: Mapping[int, np.ndarray | bytes | memoryview]) -> None:
        """Keep each slot's example-question vectors (slot → (n × dim) array, or its float32 bytes),
        copied into one matrix of this process (``set_example_rows``).

        Rows of another width, and slots past the index's entries, are skipped: a model change leaves
        stored rows of the old size until they are recomputed, and they are not comparable. Called
        before the index serves (``index_store.catalog_dense``), never on one being read."""
        matrix, slots, starts = example_blocks(rows, self.matrix.shape[1], len(self.present))
        self.set_example_rows(matrix, slots, starts)

    @property
    def example_groups(self) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None], ...]:
        """(rows, slots, starts, which slots count or None for all) of each group, base's first."""
        return tuple(self._example_groups)

    @property
    def example_slots(self) -> np.ndarray:
        """The slots whose example questions count, in slot order."""
        found = [slots if keep is None else slots[keep] for _, slots, _, keep in self._example_groups]
        return np.sort(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)

    def example_rows(self) -> dict[int, memoryview]:
        """Slot → byte view (format 'B', equal to the stored bytes) of its example rows, for the slots
        that count: what a catalog keeps instead of its own copy (``index_store``), and how a delta
        recognises unchanged rows by identity (``overlay_over``)."""
        if self._example_views is None:
            views: dict[int, memoryview] = {}
            for matrix, slots, starts, keep in self._example_groups:
                data = memoryview(np.ascontiguousarray(matrix)).cast("B")
                width = matrix.shape[1] * matrix.itemsize
                ends = [*starts[1:].tolist(), len(matrix)]
                for j, (slot, start, end) in enumerate(zip(slots.tolist(), starts.tolist(), ends)):
                    if keep is None or keep[j]:
                        views[slot] = data[start * width : end * width]
            self._example_views = views
        return self._example_views

    @classmethod
    def from_rows(cls, rows: Sequence[np.ndarray | None], **kwargs) -> DenseIndex:
        """One vector (or None) per entry, in the index's entry order."""
        matrix = np.zeros((len(rows), retrieval_embeddings.DIM), dtype=np.float32)
        present = np.zeros(len(rows), dtype=bool)
        for i, row in enumerate(rows):
            if row is not None and len(row) == retrieval_embeddings.DIM:
                matrix[i] = row
                present[i] = True
        return cls(matrix, present, **kwargs)

    def __len__(self) -> int:
        return len(self.present)

    def has_examples(self, slot: int) -> bool:
        """Whether the entry's vector blends in example questions (``with_examples``): a passage's
        vector has unit length, a blend is shorter (the mean of several question vectors is)."""
        return float(np.linalg.norm(self.vector(slot))) < BLEND_MAX_LENGTH

    def vector(self, slot: int) -> np.ndarray:
        """The vector the index ranks entry ``slot`` by (an overlay row, else the base's)."""
        found = np.flatnonzero(self.overlay_slots == slot)
        if len(found):
            return self.overlay[found[-1]]
        if slot < len(self.matrix):
            return self.matrix[slot]
        return np.zeros(self.matrix.shape[1], dtype=np.float32)

    def base_rows(self) -> list[memoryview]:
        """The base matrix's rows as byte views (``memoryview``, format 'B': equal to the row's bytes).

        What a catalog keeps as its vectors once this index holds them (``index_store``): one copy of
        each vector per process (none when the matrix is a shared mapping), and a delta recognises an
        unchanged vector by identity (``overlay_over``).
        """
        if self._rows is None:
            if not self.matrix.size:
                self._rows = [memoryview(b"")] * len(self.matrix)
                return self._rows
            data = memoryview(self.matrix).cast("B")
            width = self.matrix.shape[1] * self.matrix.itemsize
            self._rows = [data[i * width : (i + 1) * width] for i in range(len(self.matrix))]
        return self._rows

    def query_vector(self, text: str) -> np.ndarray | None:
        """The question's vector, or None when the model cannot run (the router then goes without)."""
        try:
            return self._embed_query(text)
        except retrieval_embeddings.EmbeddingsUnavailable:
            return None

    def closest_background(self, vector: np.ndarray) -> float | None:
        """The cosine of the background question (background.py) closest to ``vector``; None when
        there is no background in this index's space."""
        matrix = self._background() if self._background is not None else None
        if matrix is None:
            return None
        return float((matrix @ np.asarray(vector, dtype=np.float32)).max())

    def closest_question(self, vector: np.ndarray, questions: tuple[str, ...]) -> float | None:
        """The cosine of the question of ``questions`` closest to ``vector`` (a catalog's out-of-scope
        questions, ``questions_matrix``); None without any."""
        matrix = self.questions_matrix(questions)
        if matrix is None:
            return None
        return float((matrix @ np.asarray(vector, dtype=np.float32)).max())

    def questions_matrix(self, questions: tuple[str, ...]) -> np.ndarray | None:
        """``questions`` embedded as the router embeds a message, in this index's space: the router's model
        through ``background.questions_matrix`` (once per machine), a stand-in ``embed_query`` once per
        index; None when there are none or they cannot be embedded."""
        if not questions:
            return None
        if not self._custom_embed:
            return background_set.questions_matrix(questions)
        if questions not in self._question_sets:
            rows = [self.query_vector(background_set.as_routed(q)) for q in questions]
            ok = all(r is not None for r in rows)
            self._question_sets[questions] = np.asarray(rows, dtype=np.float32) if ok else None
        return self._question_sets[questions]

    def similarities(self, vector: np.ndarray, closest_share: float = 0.0) -> np.ndarray:
        """Cosine of every entry with the question (−1 for entries without a vector).

        ``closest_share`` > 0: an entry with example questions (``attach_examples``) scores
        (1 − share) × its vector's cosine + share × the cosine of its closest example question."""
        vector = np.asarray(vector, dtype=np.float32)
        base = self.matrix @ vector
        if len(self.present) == len(base):
            sims = base
        else:
            sims = np.full(len(self.present), -1.0, dtype=np.float32)
            sims[: len(base)] = base
        if len(self.overlay_slots):
            sims[self.overlay_slots] = self.overlay @ vector
        if closest_share:
            for matrix, slots, starts, keep in self._example_groups:
                closest = np.maximum.reduceat(matrix @ vector, starts)
                if keep is not None:
                    slots, closest = slots[keep], closest[keep]
                sims[slots] = (1.0 - closest_share) * sims[slots] + closest_share * closest
        sims[~self.present] = -1.0
        return sims

    def closest_example(self, vector: np.ndarray, slot: int) -> float | None:
        """The cosine of ``slot``'s closest example question with the question (None: it has none)."""
        vector = np.asarray(vector, dtype=np.float32)
        best = None
        for matrix, slots, starts, keep in self._example_groups:
            for j in np.flatnonzero(slots == slot):
                if keep is not None and not keep[j]:
                    continue
                end = starts[j + 1] if j + 1 < len(starts) else len(matrix)
                best = float((matrix[starts[j] : end] @ vector).max())
        return best

    def top_k(self, vector: np.ndarray, k: int, closest_share: float = 0.0) -> tuple[list[tuple[int, float]], float]:
        """The k most similar entries that have a vector, best first (ties: catalog order), and the mean
        cosine (``similarities``, with ``closest_share``)."""
        return self.top_of(self.similarities(vector, closest_share), k)

    def top_of(self, sims: np.ndarray, k: int) -> tuple[list[tuple[int, float]], float]:
        """``top_k`` over cosines already computed (``similarities``): a caller that needs them all
        as well computes them once."""
        k = min(k, int(self.present.sum()))
        if k <= 0:
            return [], 0.0
        mean = float(sims[self.present].mean())
        if k < len(sims):
            cut = np.argpartition(-sims, k - 1)[:k]
        else:
            cut = np.arange(len(sims))
        order = cut[np.lexsort((cut, -sims[cut]))]
        return [(int(i), float(sims[i])) for i in order if self.present[i]], mean

    def overlay_over(
        self,
        vectors: Mapping[str, object],
        package_ids: Sequence[str],
        live: Sequence[bool],
        examples: Mapping[str, object] | None = None,
    ):
        """This (base) index's matrix under the vectors of an edited catalog: its slots' package IDs
        (``package_ids``, the base's slots first, then the appended ones), which slots are live, and
        the catalog's example-question rows (``examples``, package ID → float32 bytes).

        A slot keeps the base's row when the catalog still holds that very row (``base_rows``, by
        identity) or an equal one, and the same example rows (``example_rows``, by identity or equal
        bytes); any other slot becomes an overlay row, with its example rows in the delta's own group.
        The base's example rows are kept as they are (a shared mapping stays one). Returns a new DenseIndex.
        """
        examples = examples or {}
        rows = self.base_rows()
        base_examples = self.example_rows()
        n_base = len(self.matrix)
        present = np.zeros(len(package_ids), dtype=bool)
        slots, overlay, overlay_examples = [], [], {}
        for slot, pid in enumerate(package_ids):
            held = vectors.get(pid) if live[slot] else None
            if held is None:
                continue
            asked = examples.get(pid)
            if slot < n_base and self.present[slot]:
                if (held is rows[slot] or held == rows[slot]) and _same_rows(asked, base_examples.get(slot)):
                    present[slot] = True
                    continue
            vector = np.frombuffer(held, dtype="<f4")
            if len(vector) != self.matrix.shape[1]:
                continue
            present[slot] = True
            slots.append(slot)
            overlay.append(vector)
            if asked:
                overlay_examples[slot] = asked
        index = DenseIndex(
            self.matrix,
            present,
            overlay_slots=np.asarray(slots, dtype=np.int64),
            overlay=np.asarray(overlay, dtype=np.float32).reshape(len(slots), self.matrix.shape[1]),
            embed_query=self._embed_query,
            model_id=self.model_id,
            background=self._background,
        )
        overlaid = set(slots)
        groups = []
        if self._example_groups:
            matrix, base_slots, starts, _ = self._example_groups[0]
            keep = np.fromiter(
                (slot in base_examples and present[slot] and slot not in overlaid for slot in base_slots.tolist()),
                dtype=bool,
                count=len(base_slots),
            )
            if keep.any():
                groups.append((matrix, base_slots, starts, keep))
        if overlay_examples:
            own, own_slots, own_starts = example_blocks(overlay_examples, self.matrix.shape[1], len(present))
            if len(own_slots):
                groups.append((own, own_slots, own_starts, None))
        index._example_groups = groups
        return index


def _same_rows(held, base) -> bool:
    """Whether a catalog's example rows (bytes, a view, or None) are the base's (a view, or None)."""
    if not held:
        return base is None
    return base is not None and (held is base or held == base)


def example_blocks(
    rows: Mapping[int, np.ndarray | bytes | memoryview], dim: int, slots_count: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Slot → its (n × dim) example rows (or their float32 bytes) as one matrix in slot order, the
    slots, and where each slot's rows start. Rows of another width, empty ones, and slots outside
    ``slots_count`` are skipped."""
    slots, starts, blocks, at = [], [], [], 0
    for slot in sorted(rows):
        block = rows[slot]
        if block is None:
            continue
        if not isinstance(block, np.ndarray):
            block = np.frombuffer(block, dtype="<f4")
        if not 0 <= slot < slots_count or not block.size or block.size % dim:
            continue
        slots.append(slot)
        starts.append(at)
        blocks.append(block.reshape(-1, dim))
        at += len(blocks[-1])
    matrix = (
        np.ascontiguousarray(np.concatenate(blocks), dtype=np.float32)
        if blocks
        else np.zeros((0, dim), dtype=np.float32)
    )
    return matrix, np.asarray(slots, dtype=np.int64), np.asarray(starts, dtype=np.int64)


class EmbeddingCache:
    """Passage vectors on disk, one .npy per sha256(model id + text): a folder is embedded once.

    For catalogs measured from a folder (``evaluate_retrieval --catalog``, tuning,
    tests); the database catalog stores its vectors with each revision instead.
    """

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)

    def _path(self, digest: str) -> Path:
        return self.directory / digest[:2] / f"{digest}.npy"

    def get(self, text: str, rows: int | None = None) -> np.ndarray | None:
        """The vector stored for ``text`` (with ``rows``: the (rows × DIM) matrix), or None."""
        path = self._path(text_digest(text))
        try:
            vector = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            return None
        shape = (retrieval_embeddings.DIM,) if rows is None else (rows, retrieval_embeddings.DIM)
        return vector if vector.shape == shape else None

    def put(self, text: str, vector: np.ndarray) -> None:
        path = self._path(text_digest(text))
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write then rename: a concurrent reader never sees half a file.
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, np.asarray(vector, dtype=np.float32), allow_pickle=False)
        os.replace(tmp, path)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), DIM) vectors, computing (and storing) only the ones not cached yet."""
        out = np.zeros((len(texts), retrieval_embeddings.DIM), dtype=np.float32)
        missing = []
        for i, text in enumerate(texts):
            cached = self.get(text)
            if cached is None:
                missing.append(i)
            else:
                out[i] = cached
        if missing:
            fresh = retrieval_embeddings.embed_passages([texts[i] for i in missing])
            for row, i in enumerate(missing):
                out[i] = fresh[row]
                self.put(texts[i], fresh[row])
        return out


def folder_dense_index(
    entries: Sequence,
    cache: EmbeddingCache | None,
    *,
    body_chars: int | None = None,
    examples: Mapping[str, Sequence[str]] | None = None,
    **kwargs,
) -> DenseIndex | None:
    """A DenseIndex for in-memory entries (vectors from the cache, else computed); None when the model is off.

    ``examples``: package id → accepted example questions, blended into that entry's vector.
    """
    if not entries or not retrieval_embeddings.available():
        return None
    texts = [passage_text(e, PASSAGE_BODY_CHARS if body_chars is None else body_chars) for e in entries]
    embed = retrieval_embeddings.embed_passages if cache is None else cache.passages
    vectors = embed(texts)
    examples = examples or {}
    asked = [i for i, e in enumerate(entries) if examples.get(e.package_id)]
    rows: dict[int, np.ndarray] = {}
    if asked:
        vectors = np.array(vectors, dtype=np.float32)
        for i in asked:
            questions = list(examples[entries[i].package_id])
            key = embedded_text(texts[i], questions) + EXAMPLE_ROWS_SUFFIX
            rows[i] = cache.get(key, rows=len(questions)) if cache is not None else None
            if rows[i] is None:
                rows[i] = np.asarray(retrieval_embeddings.embed_queries(questions), dtype=np.float32)
                if cache is not None:
                    cache.put(key, rows[i])
            vectors[i] = with_examples(vectors[i], rows[i])
    index = DenseIndex(vectors, np.ones(len(entries), dtype=bool), **kwargs)
    index.attach_examples(rows)
    return index
