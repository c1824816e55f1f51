#!/usr/bin/env python3
"""Validate patterns.train.json and chunks.train.jsonl (stdlib only). Exit 1 on any error."""
import json, os, re, sys, unicodedata
from collections import Counter, defaultdict

D = os.path.dirname(os.path.abspath(__file__))
PATTERNS = {"diagnosis", "recommendation", "concept", "comparison", "monitoring", "similar_cases"}
LANGS = {"pt", "en", "es"}
CLASSES = {
    "agroecossistema": {"bioma", "agroecorregiao", "clima", "solo_referencia"},
    "sistema_produtivo": {"graos", "pecuaria", "integracao", "perenes", "hortalicas"},
    "estagio_transicao": {"convencional", "transicao_inicial", "transicao_intermediaria", "transicao_avancada", "regenerativo"},
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
errors = []
def err(m): errors.append(m)

def norm(t):
    t = unicodedata.normalize("NFKC", t).lower()
    return re.sub(r"\s+", " ", t).strip()

def sentences(t):
    # a sentence ends at . ! ? (optionally followed by a closing quote) followed by whitespace, or at end of text
    parts = [p for p in re.split(r"(?<=[.!?])['\"”’]?\s+", t.strip()) if p.strip()]
    return len(parts)

def first_two(t):
    toks = re.findall(r"[\wÀ-ÿ]+(?:[-'][\wÀ-ÿ]+)*", unicodedata.normalize("NFKC", t).lower())
    return " ".join(toks[:2])

# ---------- patterns ----------
with open(os.path.join(D, "patterns.train.json"), encoding="utf-8") as f:
    P = json.load(f)
if not isinstance(P, list): err("patterns: not a list"); P = []
ids, texts = set(), set()
groups = defaultdict(list)
for it in P:
    if set(it) != {"id", "group", "lang", "text", "pattern"}:
        err(f"patterns: bad keys {it.get('id')}: {sorted(it)}"); continue
    if not re.fullmatch(r"t-\d{4}", it["id"]): err(f"bad id {it['id']}")
    if not re.fullmatch(r"tg-\d{4}", it["group"]): err(f"bad group {it['group']}")
    if it["id"] in ids: err(f"dup id {it['id']}")
    ids.add(it["id"])
    if it["lang"] not in LANGS: err(f"bad lang {it['id']}")
    if it["pattern"] not in PATTERNS: err(f"bad pattern {it['id']}")
    n = norm(it["text"])
    if not (3 <= len(it["text"]) <= 600): err(f"text length {it['id']}: {len(it['text'])}")
    if n in texts: err(f"dup text {it['id']}: {it['text']}")
    texts.add(n)
    groups[it["group"]].append(it)
pt_per, tri_per = Counter(), Counter()
for g, mem in groups.items():
    langs = Counter(m["lang"] for m in mem)
    if langs["pt"] != 1 or langs["en"] > 1 or langs["es"] > 1:
        err(f"group {g}: langs {dict(langs)}")
    if len({m["pattern"] for m in mem}) != 1: err(f"group {g}: mixed patterns")
    if (langs["en"] == 1) != (langs["es"] == 1): err(f"group {g}: en/es must come together")
    pat = mem[0]["pattern"]
    pt_per[pat] += langs["pt"]
    if langs["en"] and langs["es"]: tri_per[pat] += 1
lang_c = Counter(i["lang"] for i in P)
if len(P) < 360: err(f"patterns: only {len(P)} items")
for p in PATTERNS:
    if pt_per[p] < 40: err(f"pattern {p}: only {pt_per[p]} pt")
    if tri_per[p] < 20: err(f"pattern {p}: only {tri_per[p]} groups with en+es")
if lang_c["en"] < 120 or lang_c["es"] < 120: err(f"langs: {dict(lang_c)}")

# ---------- chunks ----------
C = []
with open(os.path.join(D, "chunks.train.jsonl"), encoding="utf-8") as f:
    for ln, line in enumerate(f, 1):
        if not line.strip(): continue
        try: C.append(json.loads(line))
        except json.JSONDecodeError as e: err(f"chunks line {ln}: {e}")
cids, ctexts = set(), set()
starts = defaultdict(dict)
for c in C:
    if set(c) != {"chunk_id", "texto", "classe_ontologica", "subclasse"}:
        err(f"chunk bad keys {c.get('chunk_id')}"); continue
    cid, t, cl, sc = c["chunk_id"], c["texto"], c["classe_ontologica"], c["subclasse"]
    if not re.fullmatch(r"tc-\d{4}", cid): err(f"bad chunk_id {cid}")
    if cid in cids: err(f"dup chunk_id {cid}")
    cids.add(cid)
    if cl not in CLASSES: err(f"{cid}: bad class {cl}"); continue
    if sc not in CLASSES[cl]: err(f"{cid}: bad subclass {cl}/{sc}")
    if not (150 <= len(t) <= 600): err(f"{cid} ({cl}): length {len(t)}: {t[:60]}")
    s = sentences(t)
    if not (1 <= s <= 4): err(f"{cid}: {s} sentences")
    if norm(t) in ctexts or norm(t) in texts: err(f"{cid}: duplicate text")
    ctexts.add(norm(t))
    fw = first_two(t)
    if fw in starts[cl]: err(f"{cid} ({cl}): starts with '{fw}' like {starts[cl][fw]}")
    else: starts[cl][fw] = cid
cls_c = Counter(c.get("classe_ontologica") for c in C)
sub_c = Counter((c.get("classe_ontologica"), c.get("subclasse")) for c in C)
if len(C) < 400: err(f"chunks: only {len(C)}")
for cl, subs in CLASSES.items():
    if cls_c[cl] < 25: err(f"class {cl}: only {cls_c[cl]}")
    for sc in subs:
        if sub_c[(cl, sc)] == 0: err(f"subclass {cl}/{sc} empty")

# ---------- report ----------
print(f"patterns.train.json: {len(P)} items, {len(groups)} groups; langs {dict(sorted(lang_c.items()))}")
for p in sorted(PATTERNS):
    byl = Counter(i["lang"] for i in P if i["pattern"] == p)
    print(f"  {p:15s} pt={byl['pt']:3d} en={byl['en']:3d} es={byl['es']:3d}  (groups with en+es: {tri_per[p]})")
print(f"chunks.train.jsonl: {len(C)} chunks")
for cl in CLASSES:
    subs = ", ".join(f"{sc}={sub_c[(cl, sc)]}" for sc in sorted(CLASSES[cl]))
    print(f"  {cl:18s} {cls_c[cl]:3d}  [{subs}]")
if errors:
    print(f"\n{len(errors)} ERROR(S):")
    for e in errors: print("  -", e)
    sys.exit(1)
print("\nOK: all checks passed")
