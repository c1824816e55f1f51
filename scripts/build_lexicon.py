#!/usr/bin/env python3
"""Rebuild knowledge/retrieval/data/lexicon.tsv.gz from Debian's FreeDict dictionaries.

    apt-get install dict-freedict-eng-por dict-freedict-por-eng dict-freedict-eng-spa \
        dict-freedict-spa-eng dict-freedict-spa-por dict-freedict-por-spa
    python scripts/build_lexicon.py [--dictd /usr/share/dictd] [--out knowledge/retrieval/data/lexicon.tsv.gz]

Output: one line per source word, ``lang<TAB>word<TAB>lang:translation|lang:translation…``
(words lower-cased; single words only, since a query term is one word). Both
directions of every pair are kept, so en→pt also comes from por-eng read
backwards. Licence: see knowledge/retrieval/data/LEXICON-LICENSE.md (GPL-2+ for
eng-por, por-eng, eng-spa, spa-eng, spa-por; CC-BY-SA-3.0 for por-spa).
Deterministic: the same dictionaries give the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import re
from pathlib import Path

PAIRS = {
    "eng-por": ("en", "pt"),
    "por-eng": ("pt", "en"),
    "eng-spa": ("en", "es"),
    "spa-eng": ("es", "en"),
    "spa-por": ("es", "pt"),
    "por-spa": ("pt", "es"),
}
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
MAX_TRANSLATIONS = 8
WORD_RE = re.compile(r"^[^\W\d_]{2,}$")


def b64(value: str) -> int:
    n = 0
    for ch in value:
        n = n * 64 + B64.index(ch)
    return n


def entries(dictd: Path, pair: str):
    """(headword, [translation phrases in sense order]) for one dictd dictionary."""
    index = (dictd / f"freedict-{pair}.index").read_text(encoding="utf-8").splitlines()
    data = gzip.decompress((dictd / f"freedict-{pair}.dict.dz").read_bytes())
    for line in index:
        parts = line.split("\t")
        if len(parts) < 3 or parts[0].startswith("00database"):
            continue
        start, length = b64(parts[1]), b64(parts[2])
        text = data[start : start + length].decode("utf-8", "replace").splitlines()
        if not text:
            continue
        head = re.sub(r"\s*/[^/]*/.*$|\s*<[^>]*>.*$", "", text[0]).strip()
        phrases: list[str] = []
        for body in text[1:]:
            body = re.sub(r"^\s*\d+\.\s*", "", body)
            body = re.sub(r"\([^)]*\)|\[[^\]]*\]|<[^>]*>|\"[^\"]*\"", " ", body)
            for piece in re.split(r"[,;]", body):
                piece = piece.strip().lower()
                if piece:
                    phrases.append(piece)
        if head:
            yield head.lower(), phrases


def build(dictd: Path) -> dict[tuple[str, str], list[str]]:
    table: dict[tuple[str, str], list[str]] = {}

    def add(src_lang: str, src: str, dst_lang: str, dst: str) -> None:
        if not (WORD_RE.match(src) and WORD_RE.match(dst)) or src == dst:
            return
        row = table.setdefault((src_lang, src), [])
        item = f"{dst_lang}:{dst}"
        if item not in row and len(row) < MAX_TRANSLATIONS * 2:
            row.append(item)

    for pair, (src_lang, dst_lang) in PAIRS.items():
        if not (dictd / f"freedict-{pair}.index").exists():
            raise SystemExit(f"missing {pair}: apt-get install dict-freedict-{pair}")
        for head, phrases in entries(dictd, pair):
            for phrase in phrases:
                add(src_lang, head, dst_lang, phrase)
                add(dst_lang, phrase, src_lang, head)
    return {k: v[: MAX_TRANSLATIONS * 2] for k, v in table.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dictd", default="/usr/share/dictd", type=Path)
    root = Path(__file__).resolve().parent.parent
    parser.add_argument("--out", default=root / "knowledge" / "retrieval" / "data" / "lexicon.tsv.gz", type=Path)
    args = parser.parse_args()
    table = build(args.dictd)
    lines = [f"{lang}\t{word}\t{'|'.join(row)}\n" for (lang, word), row in sorted(table.items())]
    # mtime=0: the same input gives the same bytes (a rebuild shows no diff).
    with open(args.out, "wb") as raw:
        with gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0, compresslevel=9) as out:
            out.write("".join(lines).encode("utf-8"))
    print(f"{args.out}: {len(lines)} words")


if __name__ == "__main__":
    main()
