"""The route hot path's shortcuts keep their promises (no database)."""

import re

from knowledge.retrieval import Entry, RouterIndex, signals
from knowledge.retrieval.fusion import estimate_tokens


def test_the_token_estimate_counts_words_like_the_whitespace_regex():
    # str.split() and regex \s agree on every whitespace character, Unicode ones included.
    texts = ["a\u00a0b\u2003c\u3000d", "x\x1cy\x1dz\x1e w\x1f", "linha\r\nnova\tcoluna\x0bv\x0cf", "  ", "um"]
    for text in texts:
        words = len(re.findall(r"\S+", text))
        assert estimate_tokens(text) == max(-(-len(text) // 4), -(-words * 4 // 3))


def test_the_per_term_slot_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(signals, "_SLOT_CACHE_MAX", 3)
    index = RouterIndex([Entry("PRAZO", "Prazo do Sanger", body="Prazo em dias úteis.")])
    for word in ("prazo", "xqzwa", "xqzwb", "xqzwc", "xqzwd", "xqzwe"):
        index.route(f"{word} sanger")
    assert len(index.__dict__["_slots_by_term"]) == 3
    # A cached slot answers like a fresh one.
    assert index.route("prazo sanger").full_ids == RouterIndex(index.entries).route("prazo sanger").full_ids
