"""Assemble the hand-written lists in src/ into the two data files.
No text is generated here: every question and chunk is written literally in p_*.py / c*.py."""
import json, os, random, sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
OUT = os.path.dirname(HERE)
from p_diag_rec import DIAGNOSIS, RECOMMENDATION
from p_conc_comp import CONCEPT, COMPARISON
from p_mon_sim import MONITORING, SIMILAR_CASES
import c1, c2, c3, c4

pats = [("diagnosis", DIAGNOSIS), ("recommendation", RECOMMENDATION), ("concept", CONCEPT),
        ("comparison", COMPARISON), ("monitoring", MONITORING), ("similar_cases", SIMILAR_CASES)]
groups = []
for name, rows in pats:
    for pt, en, es in rows:
        g = [("pt", pt)]
        if en: g.append(("en", en))
        if es: g.append(("es", es))
        groups.append((name, g))
random.Random(7).shuffle(groups)
items, n = [], 0
for gi, (name, g) in enumerate(groups, 1):
    for lang, text in g:
        n += 1
        items.append({"id": f"t-{n:04d}", "group": f"tg-{gi:04d}", "lang": lang, "text": text, "pattern": name})
with open(os.path.join(OUT, "patterns.train.json"), "w", encoding="utf-8") as f:
    json.dump(items, f, ensure_ascii=False, indent=1)

chunks = {}
for m in (c1, c2, c3, c4):
    chunks.update(m.CHUNKS)
rows = [(cls, sub, txt) for cls, lst in chunks.items() for sub, txt in lst]
random.Random(11).shuffle(rows)
with open(os.path.join(OUT, "chunks.train.jsonl"), "w", encoding="utf-8") as f:
    for i, (cls, sub, txt) in enumerate(rows, 1):
        f.write(json.dumps({"chunk_id": f"tc-{i:04d}", "texto": txt, "classe_ontologica": cls, "subclasse": sub}, ensure_ascii=False) + "\n")
print(len(items), "questions;", len(rows), "chunks")
