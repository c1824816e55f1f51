#!/usr/bin/env python3
"""Build chunks.dev.jsonl / chunks.test.jsonl from the hand-written src_*.txt lists.

Source line format:  subclasse|lang|hard|texto   under a header line  @classe_ontologica
Deterministic: per-class split uses random.Random("agro_chunks/split/<class>") (stratified
by subclass inside the class),
chunk ids come from a global shuffle with random.Random("agro_chunks/ids").
Also writes _build/meta.tsv (chunk_id, lang, hard, split) which is NOT part of the
data format (the reference chunk format has no lang field).
"""
import glob
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)
TEST_SHARE = 0.45


def load():
    rows = []
    for path in sorted(glob.glob(os.path.join(HERE, "src_*.txt"))):
        cls = None
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                line = line.rstrip("\n")
                if not line.strip() or line.startswith("#"):
                    continue
                if line.startswith("@"):
                    cls = line[1:].strip()
                    continue
                parts = line.split("|")
                if len(parts) != 4 or cls is None:
                    raise SystemExit(f"{path}:{n}: bad line")
                sub, lang, hard, text = parts
                rows.append({"classe": cls, "sub": sub, "lang": lang,
                             "hard": int(hard), "texto": " ".join(text.split()),
                             "src": f"{os.path.basename(path)}:{n}"})
    return rows


def main():
    rows = load()
    by_class = {}
    for r in rows:
        by_class.setdefault(r["classe"], []).append(r)
    for cls in sorted(by_class):
        items = sorted(by_class[cls], key=lambda r: r["src"])
        random.Random(f"agro_chunks/split/{cls}").shuffle(items)
        n_test = round(TEST_SHARE * len(items))
        # stratify by subclass: quota per subclass by largest remainder, then the
        # first k items of each subclass (in shuffled order) go to test
        subs = {}
        for r in items:
            subs.setdefault(r["sub"], []).append(r)
        quota = {s: int(TEST_SHARE * len(v)) for s, v in subs.items()}
        for s, v in subs.items():  # every subclass with >= 2 chunks appears in both splits
            if len(v) >= 2:
                quota[s] = min(max(quota[s], 1), len(v) - 1)
        rest = sorted(subs, key=lambda s: (-(TEST_SHARE * len(subs[s]) - quota[s]),
                                           items.index(subs[s][0])))
        i = 0
        while sum(quota.values()) < n_test:
            s = rest[i % len(rest)]
            if quota[s] < len(subs[s]) - 1:
                quota[s] += 1
            i += 1
        for s, v in subs.items():
            for j, r in enumerate(v):
                r["split"] = "test" if j < quota[s] else "dev"
    order = sorted(rows, key=lambda r: r["src"])
    random.Random("agro_chunks/ids").shuffle(order)
    for i, r in enumerate(order, 1):
        r["chunk_id"] = f"c-{i:04d}"
    for split in ("dev", "test"):
        with open(os.path.join(OUT, f"chunks.{split}.jsonl"), "w", encoding="utf-8") as fh:
            for r in order:
                if r["split"] == split:
                    obj = {"chunk_id": r["chunk_id"], "texto": r["texto"],
                           "classe_ontologica": r["classe"], "subclasse": r["sub"]}
                    fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
    with open(os.path.join(HERE, "meta.tsv"), "w", encoding="utf-8") as fh:
        fh.write("chunk_id\tlang\thard\tsplit\tsource\n")
        for r in order:
            fh.write(f"{r['chunk_id']}\t{r['lang']}\t{r['hard']}\t{r['split']}\t{r['src']}\n")
    print(f"wrote {len(rows)} chunks")


if __name__ == "__main__":
    main()
