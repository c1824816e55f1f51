#!/usr/bin/env python3
"""Sanity checks for the FaturaFácil retrieval evaluation set (stdlib + PyYAML)."""
import glob, json, os, re, sys, unicodedata, collections
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
errors = []
def err(msg): errors.append(msg)

STOP = set("""a o as os um uma uns umas de da do das dos e em no na nos nas por pelo pela pelos pelas para pra pro
com sem sua seu suas seus meu minha meus minhas ao aos à às que se como é ou mais menos via eu você voce vocês voces
isso isto aqui este esta esse essa the and of to""".split())

def norm_words(s):
    s = unicodedata.normalize("NFKD", s.lower())
    s = "".join(c for c in s if not unicodedata.combining(c))
    return [w for w in re.findall(r"[a-z0-9]+", s) if w not in STOP]

def stem(w):  # crude stem: first 5 chars (whole word if shorter)
    return w[:5]

# ---- packages
pkgs = {}
names = collections.Counter()
snake = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$")
sem_re = re.compile(r"^[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)+$")
for path in sorted(glob.glob(os.path.join(HERE, "packages", "*.md"))):
    fn = os.path.basename(path)
    if not re.match(r"^\d\d_[a-z0-9_]+\.md$", fn): err(f"{fn}: bad file name")
    text = open(path, encoding="utf-8").read()
    m = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S)
    if not m: err(f"{fn}: no front matter"); continue
    fm, body = yaml.safe_load(m.group(1)), m.group(2)
    for k in ("id", "title", "summary", "kind", "strict", "aliases", "keywords", "source"):
        if k not in fm: err(f"{fn}: missing {k}")
    pid = fm["id"]
    if not snake.match(pid): err(f"{fn}: id not UPPER_SNAKE")
    if fm["kind"] not in ("knowledge", "rule", "procedure"): err(f"{fn}: bad kind")
    if not isinstance(fm["strict"], bool): err(f"{fn}: strict not bool")
    if fm["strict"] and fm["kind"] != "rule": err(f"{fn}: strict non-rule")
    if not 1 <= len(fm["aliases"]) <= 3: err(f"{fn}: 1-3 aliases")
    for a in fm["aliases"]:
        if not snake.match(a): err(f"{fn}: alias {a} not UPPER_SNAKE")
    if not 3 <= len(fm["keywords"]) <= 8: err(f"{fn}: 3-8 keywords")
    if not all(isinstance(k, str) for k in fm["keywords"]): err(f"{fn}: non-string keyword")
    sids = fm.get("semantic_ids") or []
    if len(sids) > 2: err(f"{fn}: >2 semantic_ids")
    for s in sids:
        if not sem_re.match(s): err(f"{fn}: bad semantic id {s}")
    nwords = len(re.findall(r"\w+", body))
    if not 120 <= nwords <= 450: err(f"{fn}: body has {nwords} words")
    for n in [pid] + fm["aliases"]: names[n] += 1
    fm["_links"] = re.findall(r"\[\[([A-Z0-9_]+)\]\]", body)
    fm["_words"] = nwords
    pkgs[pid] = fm
for n, c in names.items():
    if c > 1: err(f"id/alias {n} used {c} times")
for pid, fm in pkgs.items():
    for l in fm["_links"]:
        if l not in pkgs: err(f"{pid}: broken link [[{l}]]")
        if l == pid: err(f"{pid}: self link")
kinds = collections.Counter(p["kind"] for p in pkgs.values())
strict = [p["id"] for p in pkgs.values() if p["strict"]]
if len(pkgs) < 32: err("fewer than 32 packages")
if kinds["procedure"] < 5 or kinds["rule"] < 5: err(f"kind mix {kinds}")
if len(strict) != 1: err(f"strict packages: {strict}")
sem_owner = {s: p["id"] for p in pkgs.values() for s in (p.get("semantic_ids") or [])}

# ---- questions
files = {s: json.load(open(os.path.join(HERE, f"questions.{s}.json"), encoding="utf-8")) for s in ("dev", "test")}
groups = collections.defaultdict(list)
for split, items in files.items():
    for it in items:
        for k in ("query", "lang", "expected", "type", "group"):
            if k not in it: err(f"{split}: item missing {k}: {it}")
        if it["lang"] not in ("pt", "en", "es"): err(f"bad lang {it}")
        for e in it["expected"]:
            if e not in pkgs: err(f"{it['group']}: unknown expected {e}")
        groups[it["group"]].append((split, it))
type_counts = {s: collections.Counter() for s in files}
for g, lst in groups.items():
    splits = {s for s, _ in lst}
    if len(splits) != 1: err(f"{g}: split across files")
    langs = sorted(it["lang"] for _, it in lst)
    if langs != ["en", "es", "pt"]: err(f"{g}: langs {langs}")
    ref = lst[0][1]
    for _, it in lst:
        for k in ("type", "expected"):
            if it[k] != ref[k]: err(f"{g}: {k} differs across langs")
        if it.get("context") != ref.get("context"): err(f"{g}: context differs across langs")
    t, exp = ref["type"], ref["expected"]
    type_counts[lst[0][0]][t] += 1
    pt = next(it for _, it in lst if it["lang"] == "pt")
    if t == "ood" and exp: err(f"{g}: ood with expected")
    if t != "ood" and not exp: err(f"{g}: empty expected")
    if t == "multi" and len(set(exp)) != 2: err(f"{g}: multi needs 2 ids")
    if t == "deictic":
        ctx = ref.get("context") or {}
        focus = ctx.get("focus", {})
        cands = [focus.get("semanticId")] + focus.get("parentIds", [])
        if not any(c in (pkgs[exp[0]].get("semantic_ids") or []) for c in cands):
            err(f"{g}: deictic focus/parents {cands} not in {exp[0]} semantic_ids")
    elif ref.get("context"): err(f"{g}: context on non-deictic")
    if t == "alias":
        for _, it in lst:
            valid = {exp[0]} | set(pkgs[exp[0]]["aliases"])
            if not any(v in it["query"] for v in valid): err(f"{g}/{it['lang']}: alias not in query")
    if t == "paraphrase":
        title = pkgs[exp[0]]["title"]
        tw = set(norm_words(title)); ts = {stem(w) for w in tw}
        qw = set(norm_words(pt["query"]))
        shared = sorted(w for w in qw if w in tw or stem(w) in ts)
        if shared: err(f"{g}: paraphrase shares {shared} with title '{title}'")
        kw = {stem(w) for k in pkgs[exp[0]]["keywords"] for w in norm_words(k)}
        kshared = sorted(w for w in qw if stem(w) in kw)
        if kshared: print(f"note {g}: paraphrase shares keyword stems {kshared} ({exp[0]})")

total = collections.Counter()
for s in files: total.update(type_counts[s])
print("packages:", len(pkgs), dict(kinds), "strict:", strict,
      "with semantic_ids:", sum(1 for p in pkgs.values() if p.get("semantic_ids")))
print("avg links/package: %.2f, body words min/max: %d/%d" % (
    sum(len(p["_links"]) for p in pkgs.values()) / len(pkgs),
    min(p["_words"] for p in pkgs.values()), max(p["_words"] for p in pkgs.values())))
print("groups per type (pt):", dict(total), "total groups:", sum(total.values()))
for s in files: print(f"  {s}: {dict(type_counts[s])} groups={sum(type_counts[s].values())} items={len(files[s])}")
if errors:
    print("\nERRORS:"); [print(" -", e) for e in errors]; sys.exit(1)
print("OK")
