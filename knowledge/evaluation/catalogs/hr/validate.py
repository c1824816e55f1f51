#!/usr/bin/env python3
"""Validate the retrieval-hr evaluation set (packages + questions). Exit 1 on errors."""
import glob, json, os, re, sys, unicodedata
from collections import Counter, defaultdict
import yaml

ROOT = os.path.dirname(os.path.abspath(__file__))
errors, warnings = [], []
def err(m): errors.append(m)
def warn(m): warnings.append(m)

STOP = set("""a o e as os um uma uns umas de da do das dos em no na nos nas por para pra pro com sem sob
ao aos à às que se sua seu suas seus meu minha meus minhas como ou mas mais menos ja já nao não eu tu ele ela
nos vos eles elas me te lhe isso isto esse essa este esta aquele aquela qual quais quando onde quanto quantos
quanta quantas é e ser ter tem foi vai sou pelo pela pelos pelas num numa dois duas tres três""".split())

def norm(s):
    s = unicodedata.normalize("NFD", s.lower())
    return "".join(c for c in s if unicodedata.category(c) != "Mn")
def words(s):
    return [w for w in re.findall(r"[a-z0-9]+", norm(s)) if w not in STOP and len(w) > 1]
def stem(w): return w[:5] if len(w) >= 5 else w

# ---------- packages ----------
ID_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
SEM_RE = re.compile(r"^[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)+$")
pk, names = {}, Counter()
files = sorted(glob.glob(os.path.join(ROOT, "packages", "*.md")))
for f in files:
    base = os.path.basename(f)
    if not re.match(r"^\d\d_[a-z0-9_]+\.md$", base): err(f"{base}: bad file name")
    text = open(f, encoding="utf-8").read()
    m = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S)
    if not m: err(f"{base}: no front matter"); continue
    meta, body = yaml.safe_load(m.group(1)), m.group(2)
    for k in ("id", "title", "summary", "kind", "strict", "aliases", "keywords", "source"):
        if k not in meta: err(f"{base}: missing {k}")
    pid = meta["id"]
    if not ID_RE.match(pid): err(f"{base}: bad id {pid}")
    if meta["kind"] not in ("knowledge", "rule", "procedure"): err(f"{pid}: bad kind")
    if meta["strict"] and meta["kind"] != "rule": err(f"{pid}: strict but not rule")
    if not 1 <= len(meta["aliases"]) <= 3: err(f"{pid}: aliases count")
    for a in meta["aliases"]:
        if not ID_RE.match(a): err(f"{pid}: bad alias {a}")
    if not 3 <= len(meta["keywords"]) <= 8: err(f"{pid}: keywords count")
    sem = meta.get("semantic_ids") or []
    if len(sem) > 2: err(f"{pid}: >2 semantic_ids")
    for s in sem:
        if not SEM_RE.match(s): err(f"{pid}: bad semantic id {s}")
    n = len(re.findall(r"\w+", body))
    if not 120 <= n <= 450: err(f"{pid}: body {n} words")
    for x in [pid] + meta["aliases"]: names[x] += 1
    meta["_links"] = re.findall(r"\[\[([A-Z0-9_]+)\]\]", body)
    meta["_words"] = n
    pk[pid] = meta
for x, c in names.items():
    if c > 1: err(f"id/alias not unique: {x}")
for pid, m in pk.items():
    for l in m["_links"]:
        if l not in pk: err(f"{pid}: broken link [[{l}]]")
strict = [p for p, m in pk.items() if m["strict"]]
if len(strict) != 1: err(f"expected exactly one strict package, got {strict}")
kinds = Counter(m["kind"] for m in pk.values())
alias_of = {a: p for p, m in pk.items() for a in [p] + m["aliases"]}

# ---------- questions ----------
TYPES = {"direct", "paraphrase", "alias", "typo", "multi", "deictic", "ood"}
groups = defaultdict(list)
for split in ("dev", "test"):
    items = json.load(open(os.path.join(ROOT, f"questions.{split}.json"), encoding="utf-8"))
    for it in items:
        for k in ("query", "lang", "expected", "type", "group"):
            if k not in it: err(f"{split}: item missing {k}: {it}")
        if it["lang"] not in ("pt", "en", "es"): err(f"bad lang {it}")
        if it["type"] not in TYPES: err(f"bad type {it}")
        for e in it["expected"]:
            if e not in pk: err(f"{it['group']}: unknown expected id {e}")
        groups[it["group"]].append((split, it))

per_kind = {s: Counter() for s in ("dev", "test")}
for g, lst in sorted(groups.items()):
    splits = {s for s, _ in lst}
    langs = sorted(it["lang"] for _, it in lst)
    if len(splits) != 1: err(f"{g}: split across files")
    if langs != ["en", "es", "pt"]: err(f"{g}: languages {langs}")
    sig = {json.dumps([it["type"], it["expected"], it.get("context")], sort_keys=True) for _, it in lst}
    if len(sig) != 1: err(f"{g}: type/expected/context differ between languages")
    split, it = lst[0]
    t, exp, ctx = it["type"], it["expected"], it.get("context")
    per_kind[split][t] += 1
    pt = next(i for _, i in lst if i["lang"] == "pt")
    if t == "ood" and exp: err(f"{g}: ood with expected")
    if t != "ood" and not exp: err(f"{g}: empty expected")
    if t == "multi" and len(set(exp)) != 2: err(f"{g}: multi needs 2 ids")
    if t not in ("multi", "ood") and len(exp) != 1: err(f"{g}: expected should have 1 id")
    if t == "deictic":
        if not ctx or "focus" not in ctx: err(f"{g}: deictic without focus context"); continue
        cand = [ctx["focus"]["semanticId"]] + ctx["focus"].get("parentIds", [])
        if not any(c in (pk[exp[0]].get("semantic_ids") or []) for c in cand):
            err(f"{g}: focus {cand} not in semantic_ids of {exp[0]}")
    elif ctx: warn(f"{g}: context on non-deictic")
    if t == "alias":
        for _, i in lst:
            toks = re.findall(r"[A-Z][A-Z0-9_]+", i["query"])
            if not any(alias_of.get(x) == exp[0] for x in toks):
                err(f"{g}/{i['lang']}: alias query names no alias/id of {exp[0]}")
    if t == "paraphrase":
        title_w = words(pk[exp[0]]["title"])
        qw = words(pt["query"])
        shared = [w for w in qw if w in title_w or stem(w) in {stem(x) for x in title_w}]
        if shared: err(f"{g}: paraphrase shares {shared} with title '{pk[exp[0]]['title']}'")
        kw = {stem(x) for k in pk[exp[0]]["keywords"] for x in words(k)}
        kshared = [w for w in qw if stem(w) in kw]
        if kshared: warn(f"{g}: paraphrase shares keyword stems {kshared}")

# ---------- report ----------
print(f"packages: {len(pk)}  kinds: {dict(kinds)}  strict: {strict}")
print(f"packages with semantic_ids: {sum(1 for m in pk.values() if m.get('semantic_ids'))}")
print(f"avg links/package: {sum(len(m['_links']) for m in pk.values())/len(pk):.2f}  "
      f"body words: {min(m['_words'] for m in pk.values())}-{max(m['_words'] for m in pk.values())}")
print(f"groups: {len(groups)}  items: {sum(len(v) for v in groups.values())}")
for t in sorted(TYPES):
    d, te = per_kind["dev"][t], per_kind["test"][t]
    print(f"  {t:11s} dev {d:3d}  test {te:3d}  total {d+te:3d}")
print(f"  {'all':11s} dev {sum(per_kind['dev'].values()):3d}  test {sum(per_kind['test'].values()):3d}")
for w in warnings: print("WARN", w)
for e in errors: print("ERROR", e)
print("OK" if not errors else f"{len(errors)} error(s)")
sys.exit(1 if errors else 0)
