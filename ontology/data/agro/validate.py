#!/usr/bin/env python3
"""Validate the agro_chunks set (stdlib only). Exit 0 if all checks pass, 1 otherwise.

Usage: python3 validate.py   (run from anywhere)
"""
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = {"dev": "chunks.dev.jsonl", "test": "chunks.test.jsonl"}
KEYS = {"chunk_id", "texto", "classe_ontologica", "subclasse"}
ALLOWED = {
    "agroecossistema": {"bioma", "agroecorregiao", "clima", "solo_referencia"},
    "sistema_produtivo": {"graos", "pecuaria", "integracao", "perenes", "hortalicas"},
    "estagio_transicao": {"convencional", "transicao_inicial", "transicao_intermediaria",
                          "transicao_avancada", "regenerativo"},
    "perfil_produtor": {"agricultura_familiar", "medio_produtor", "grande_produtor", "tecnico"},
    "sintoma": {"solo", "planta", "agua", "biologico"},
    "processo": {"biologico", "fisico", "quimico", "hidrico"},
    "estrutura": {"fisica", "biologica", "quimica", "paisagem"},
    "causa_provavel": {"manejo", "quimica", "fisica", "biologica", "climatica"},
    "intervencao": {"estrutural", "biologica", "quimica_corretiva", "manejo"},
    "pratica": {"conservacionista", "biologica", "integracao", "nutricional"},
    "indicador": {"campo", "laboratorio", "produtivo"},
    "dosagem": {"corretivo", "biologico", "nutriente"},
    "contraindicacao": {"incompatibilidade", "momento_inadequado", "risco_ambiental"},
    "conceito": {"principio", "definicao"},
    "caso": {"caso_validado", "relato_produtor"},
    "evidencia": {"pesquisa", "ensaio_campo", "sintese"},
}
MIN_TOTAL, MIN_PER_CLASS = 240, 14
MIN_WORDS, MAX_WORDS = 40, 140
TEST_SHARE_RANGE = (0.40, 0.50)        # overall
CLASS_TEST_SHARE_RANGE = (0.35, 0.55)  # per class
ID_RE = re.compile(r"^c-\d{4}$")

errors = []


def err(msg):
    errors.append(msg)


def norm(text):
    return " ".join(re.findall(r"\w+", text.lower()))


def main():
    chunks = []
    for split, name in FILES.items():
        path = os.path.join(HERE, name)
        if not os.path.exists(path):
            err(f"missing file {name}")
            continue
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    err(f"{name}:{n}: empty line")
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    err(f"{name}:{n}: invalid JSON ({e})")
                    continue
                if not isinstance(obj, dict) or set(obj) != KEYS:
                    err(f"{name}:{n}: keys must be exactly {sorted(KEYS)}")
                    continue
                if not all(isinstance(obj[k], str) for k in KEYS):
                    err(f"{name}:{n}: all values must be strings")
                    continue
                obj["_split"], obj["_where"] = split, f"{name}:{n}"
                chunks.append(obj)

    ids = collections.Counter(c["chunk_id"] for c in chunks)
    for cid, k in ids.items():
        if k > 1:
            err(f"duplicate chunk_id {cid}")
        if not ID_RE.match(cid):
            err(f"bad chunk_id format {cid!r}")
    texts = collections.defaultdict(list)
    openings = collections.defaultdict(list)
    for c in chunks:
        cls, sub, txt = c["classe_ontologica"], c["subclasse"], c["texto"]
        if cls not in ALLOWED:
            err(f"{c['_where']}: unknown class {cls!r}")
        elif sub not in ALLOWED[cls]:
            err(f"{c['_where']}: subclass {sub!r} not allowed for {cls}")
        words = len(txt.split())
        if not MIN_WORDS <= words <= MAX_WORDS:
            err(f"{c['_where']}: {words} words (allowed {MIN_WORDS}-{MAX_WORDS})")
        if txt != txt.strip() or "  " in txt or "\n" in txt:
            err(f"{c['_where']}: stray whitespace in texto")
        texts[norm(txt)].append(c["chunk_id"])
        openings[(cls, " ".join(txt.lower().split()[:2]))].append(c["chunk_id"])
    for t, cids in texts.items():
        if len(cids) > 1:
            err(f"duplicate text: {cids}")
    for (cls, op), cids in openings.items():
        if len(cids) > 1:
            err(f"class {cls}: {len(cids)} chunks open with {op!r}: {cids}")

    total = len(chunks)
    if total < MIN_TOTAL:
        err(f"only {total} chunks (need >= {MIN_TOTAL})")
    per = collections.defaultdict(lambda: collections.Counter())
    per_sub = collections.defaultdict(lambda: collections.Counter())
    for c in chunks:
        per[c["classe_ontologica"]][c["_split"]] += 1
        per_sub[c["classe_ontologica"]][(c["subclasse"], c["_split"])] += 1
    for cls in ALLOWED:
        n = per[cls]["dev"] + per[cls]["test"]
        if n < MIN_PER_CLASS:
            err(f"class {cls}: {n} chunks (need >= {MIN_PER_CLASS})")
        elif not CLASS_TEST_SHARE_RANGE[0] <= per[cls]["test"] / n <= CLASS_TEST_SHARE_RANGE[1]:
            err(f"class {cls}: test share {per[cls]['test']}/{n} out of range")
    n_test = sum(per[c]["test"] for c in per)
    if total and not TEST_SHARE_RANGE[0] <= n_test / total <= TEST_SHARE_RANGE[1]:
        err(f"overall test share {n_test}/{total} out of range")

    # Optional side file with language / hard-case marks (not part of the chunk format).
    meta_path = os.path.join(HERE, "_build", "meta.tsv")
    langs = collections.Counter()
    if os.path.exists(meta_path):
        with open(meta_path, encoding="utf-8") as fh:
            rows = [l.rstrip("\n").split("\t") for l in fh][1:]
        meta_ids = {r[0] for r in rows}
        if meta_ids != set(ids):
            err("_build/meta.tsv ids do not match the data files")
        langs = collections.Counter(r[1] for r in rows)
        for r in rows:
            if r[1] not in {"pt", "en", "es"}:
                err(f"meta.tsv: bad lang {r[1]!r} for {r[0]}")
        other = langs["en"] + langs["es"]
        if total and not 0.07 <= other / total <= 0.14:
            err(f"non-Portuguese share {other}/{total} not ~10%")

    # Report
    print(f"{'class':<20} {'dev':>4} {'test':>5} {'total':>6}  subclasses (dev/test)")
    for cls in ALLOWED:
        subs = ", ".join(f"{s} {per_sub[cls][(s, 'dev')]}/{per_sub[cls][(s, 'test')]}"
                         for s in sorted(ALLOWED[cls]) if per_sub[cls][(s, 'dev')] + per_sub[cls][(s, 'test')])
        d, t = per[cls]["dev"], per[cls]["test"]
        print(f"{cls:<20} {d:>4} {t:>5} {d + t:>6}  {subs}")
    n_dev = total - n_test
    print(f"{'TOTAL':<20} {n_dev:>4} {n_test:>5} {total:>6}  (test share {n_test / max(total, 1):.1%})")
    if langs:
        print("languages:", dict(langs))
    if errors:
        print(f"\n{len(errors)} error(s):")
        for e in errors[:100]:
            print("  -", e)
        return 1
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
