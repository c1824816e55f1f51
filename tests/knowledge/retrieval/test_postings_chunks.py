"""``postings.TermTable.texts_chunks`` (numpy over UTF-8 bytes) against ``str.split`` and a dict."""

import random
import sys
from itertools import chain

import numpy as np
import pytest

from knowledge.retrieval import postings

# Every character str.split() splits on, beyond ASCII.
WIDE_SPACES = [chr(cp) for cp in range(128, sys.maxunicode + 1) if chr(cp).isspace()]
# Not whitespace, but sharing lead bytes with whitespace (C2, E1, E2, E3) or a word's bytes with a size tag.
NEAR_SPACES = ["\xa1", "\xad", "\u180e", "\u200b", "\u2010", "\u2060", "\u2800", "\u3001", "\ufeff", "€", "“", "—"]


def reference_texts_chunks(table, texts):
    """What ``texts_chunks`` did before numpy: ``str.split`` and one dict lookup per chunk."""
    splits = [text.split() for text in texts]
    lens = np.fromiter(map(len, splits), dtype=np.int64, count=len(splits))
    ids = np.fromiter(
        (table.chunks[c] if c in table.chunks else table._register(c) for c in chain.from_iterable(splits)),
        dtype=np.int64,
        count=int(lens.sum()),
    )
    return ids, lens


def assert_same_chunking(batches):
    """Batch by batch: the same chunk ids and counts; after all: the same chunks, terms and vocabulary, in order."""
    fast, reference = postings.TermTable(), postings.TermTable()
    for texts in batches:
        ids, lens = fast.texts_chunks(texts)
        want_ids, want_lens = reference_texts_chunks(reference, texts)
        assert ids.dtype == want_ids.dtype and ids.tolist() == want_ids.tolist()
        assert lens.dtype == want_lens.dtype and lens.tolist() == want_lens.tolist()
    assert list(fast.chunks.items()) == list(reference.chunks.items())  # registered in order of first appearance
    assert list(fast.vocabulary.items()) == list(reference.vocabulary.items())
    assert fast.chunk_ptr == reference.chunk_ptr and fast.chunk_terms == reference.chunk_terms
    return fast


def test_every_unicode_whitespace_character_splits_chunks_and_no_other_does():
    texts = [f"antes{space}depois{space}{space}fim" for space in WIDE_SPACES]
    texts += [f"antes{near}depois {near}" for near in NEAR_SPACES]
    texts += ["a\tb\nc\x0bd\x0ce\rf\x1cg\x1dh\x1ei\x1fj k", "\xa0\u2003\u3000\x1c\x85\u2028"]
    table = assert_same_chunking([texts, texts[::-1]])
    assert len(table.chunks) > len(NEAR_SPACES)


def test_the_wide_space_list_covers_all_of_unicode():
    assert sorted(postings._WIDE_SPACES.tolist()) == [ord(c) for c in WIDE_SPACES]


def test_accents_emoji_empty_texts_long_chunks_and_chunk_sizes_around_8_and_16_bytes():
    sized = ["x" * n for n in range(1, 40)] + ["é" * n for n in range(1, 12)] + ["ab😀" * n for n in range(1, 6)]
    texts = [
        "",
        "   ",
        "\u3000",
        "Preço do sequenciamento Sanger: ação, útil; ÍNDICE — “aspas” e 😀👍🏽 emoji",
        " ".join(sized),
        "\t".join(reversed(sized)),
        "https://example.com/a/very/long/path/that/keeps/going?and=query&more=1 " * 3,
        "a" * 5000 + " " + "a" * 5000 + " " + "a" * 4999,
        "[[PKG_000123]] [[PKG_000124]]. PRICING_RULES PT-2026-004821 workPermit.components",
        "",
    ]
    assert_same_chunking([texts, texts, [], [""], texts[::-1]])


def test_nul_bytes_lone_surrogates_and_a_chunk_whose_last_bytes_look_like_a_size():
    # Keys are bytes zero-padded to 8 and 15: chunks that differ by trailing NULs differ only by their size.
    tricky = ["ABCDEFGH", "ABCDEFGH\x00", "ABCDEFGHa", "ABCDEFGHa\x00", "ABCDEFGH\x08" + "\x00" * 6, "\x00", "\x00\x00"]
    tricky += ["a", "a\x00", "a\x00\x00\x00\x00\x00\x00\x00\x00", "\ud800", "\udc00x", "\ud83d\ude00"]
    assert_same_chunking([[" ".join(tricky)], [" ".join(reversed(tricky))], tricky])


def test_chunks_keep_their_order_of_first_appearance_across_batches():
    table = assert_same_chunking([["gamma alpha", "beta gamma"], ["delta alpha", "", "epsilon beta delta"]])
    assert list(table.chunks) == ["gamma", "alpha", "beta", "delta", "epsilon"]
    assert list(table.vocabulary) == ["gamm", "alpha", "bet", "delt", "epsilon"]


def test_known_short_chunks_are_found_without_python():
    table = postings.TermTable()
    table.texts_chunks(["Prazo de entrega, prazo urgente", "x" * 40])
    table._resolve = None  # a batch of known chunks of <= 15 bytes must not need it
    ids, lens = table.texts_chunks(["prazo urgente de", "entrega, Prazo"])
    assert ids.tolist() == [3, 4, 1, 2, 0] and lens.tolist() == [3, 2]


def test_a_hash_shared_by_every_chunk_changes_nothing(monkeypatch):
    monkeypatch.setattr(postings, "_chunk_hash", lambda heads, tails: np.zeros(len(heads), dtype=np.uint64))
    words = ["prazo", "preço", "Preço", "prazos", "a", "ab", "ABCDEFGH", "ABCDEFGH\x08", "ABCDEFGH\x00"]
    words += ["x" * 8, "x" * 9, "x" * 15, "y" * 15, "y" * 16]
    rng = random.Random(7)
    batches = [[" ".join(rng.choices(words, k=rng.randrange(0, 30))) for _ in range(8)] for _ in range(4)]
    table = assert_same_chunking(batches)
    assert table.short_ids.count == sum(len(chunk.encode()) <= 15 for chunk in table.chunks)


@pytest.mark.parametrize("seed", range(6))
def test_random_texts_chunk_like_str_split(seed):
    rng = random.Random(seed)
    letters = list("aeiouçãéêõAZ09_-.,:/") + ["😀", "Ω", "日", "\x00", "\u200b", "\xa1", "\ud800"]
    spaces = [" ", " ", " ", "\n", "\t", "\xa0", "\u2003", "\u3000", "\x1c", "\x85", "\u2028"]

    def text():
        return "".join(
            "".join(rng.choices(letters, k=rng.choice([1, 2, 3, 7, 8, 9, 15, 16, 17, 25]))) + rng.choice(spaces)
            for _ in range(rng.choice([0, 1, 4, 30]))
        )

    assert_same_chunking([[text() for _ in range(rng.choice([0, 1, 7, 40]))] for _ in range(5)])


def test_every_field_of_the_shipped_catalogs_chunks_like_str_split():
    from pathlib import Path

    from knowledge.offline_catalog import load_package_folder

    root = Path(__file__).resolve().parents[3] / "knowledge"
    folders = [root / "catalog", *sorted((root / "evaluation" / "catalogs").glob("*/packages"))]
    entries = [e for folder in folders for e in load_package_folder(folder)]
    assert len(entries) > 100
    batches = [
        [" ".join(postings._field_texts(e, name)) for e in entries]
        for name in postings.FIELDS
        if name not in postings._IDENTIFIER_FIELDS
    ]
    assert any("—" in text or "“" in text for text in batches[-2])  # wide punctuation, lead bytes of wide spaces
    assert_same_chunking(batches)


def test_a_term_table_is_freed_as_soon_as_the_build_drops_it():
    import gc
    import weakref

    table = postings.TermTable()
    table.texts_chunks(["prazo de entrega", "x" * 40])
    freed = weakref.ref(table)
    gc.disable()  # no reference cycle: freed without the cyclic collector (the build pauses full collections)
    try:
        del table
        assert freed() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("shared_hash", [False, True])
def test_the_short_chunk_table_keeps_every_key_through_its_growth(monkeypatch, shared_hash):
    if shared_hash:
        monkeypatch.setattr(postings, "_chunk_hash", lambda heads, tails: np.zeros(len(heads), dtype=np.uint64))
    rng = np.random.default_rng(5)
    heads = rng.integers(0, 2**63, 3000, dtype=np.uint64)
    tails = rng.integers(1, 2**63, 3000, dtype=np.uint64)  # a key's tail is never 0 (it holds the size)
    ids = np.arange(3000, dtype=np.int64) * 7
    table = postings._ShortChunkIds(bits=2)
    for lo in range(0, 3000, 250):  # grows from 4 slots, rehashing what it holds each time
        table.insert(heads[lo : lo + 250], tails[lo : lo + 250], ids[lo : lo + 250])
    assert table.count == 3000 and len(table.rows) >= 4 * 3000
    assert table.lookup(heads, tails).tolist() == ids.tolist()
    # A key that differs in one word only is not found, nor is a free slot's all-zero row.
    assert table.lookup(heads[:5], tails[:5] ^ np.uint64(1)).tolist() == [-1] * 5
    assert table.lookup(np.zeros(1, np.uint64), np.zeros(1, np.uint64)).tolist() == [-1]
