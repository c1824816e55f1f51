#!/usr/bin/env python3
"""Validate the electricity distributor catalog (Luz do Vale Energia): packages/*.md and questions.{dev,test}.json.

Uses only the standard library and PyYAML. Exit code 0 when everything passes.
"""
import json
import os
import re
import sys
import unicodedata
from collections import Counter, defaultdict

import yaml

ROOT = os.path.dirname(os.path.abspath(__file__))
PKG_DIR = os.path.join(ROOT, "packages")
PREFIX = "energia"
REQUIRED = ["id", "title", "summary", "kind", "strict", "aliases", "keywords", "source"]
ALLOWED = set(REQUIRED) | {"semantic_ids"}
KINDS = {"knowledge", "rule", "procedure"}
UPPER_SNAKE = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$")
FILE_RE = re.compile(r"^(\d{2})_([a-z0-9]+(?:_[a-z0-9]+)*)\.md$")
SEM_RE = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+){2,}$")
LINK_RE = re.compile(r"\[\[([A-Z0-9_]+)\]\]")
# Exact number of groups of each type in EACH split (dev and test).
SPLIT_TYPES = {"direct": 4, "paraphrase": 5, "alias": 2, "typo": 3, "multi": 3, "deictic": 3, "ood": 4}
MIN_TYPES = {t: 2 * n for t, n in SPLIT_TYPES.items()}
N_PACKAGES = (36, 40)
BODY_WORDS = (200, 300)
DEICTIC_WORDS = {"isso", "isto", "este", "esta", "esse", "essa", "aqui", "aqui?", "nisso", "disso", "neste", "nesse"}

# Words that would reveal a non-Portuguese keyword (heuristic).
FOREIGN = {"the", "and", "of", "for", "bill", "bills", "billing", "outage", "outages", "blackout",
           "meter", "meters", "power", "electricity", "electric", "energy", "reading", "readings",
           "reconnection", "disconnection", "payment", "payments", "late", "fee", "fees",
           "installment", "installments", "tariff", "tariffs", "flag", "flags", "credit", "credits",
           "pruning", "tree", "trees", "wire", "wires", "kite", "kites", "fraud", "theft", "damage",
           "claim", "refund", "ombudsman", "complaint", "login", "account", "due", "seal", "appliance",
           "appliances", "home", "care", "panel", "panels", "shutdown",
           "factura", "facturas", "apagon", "apagones", "medidor", "medidores", "luz", "lectura",
           "lecturas", "cuota", "cuotas", "reconexion", "suministro", "recargo", "vencimiento",
           "bandera", "banderas", "arbol", "arboles", "cable", "cables", "barrilete", "papalote",
           "enganche", "reclamo", "queja", "electrodomestico", "electrodomesticos", "corriente",
           "electricidad", "electrica", "electrico", "precinto", "deuda", "deudas", "cobro", "boleta"}

STOP = set("""
a à as ao aos o os um uma uns umas de do da dos das no na nos nas em para pra pro por pelo pela
pelos pelas com sem e ou mas se que qual quais quando quanto quanta quantos quantas como onde
eu tu ele ela nos vos eles elas me te lhe mim comigo voce voces vc meu minha meus minhas seu sua
seus suas nosso nossa este esta esse essa isso isto aquele aquela aqui ai la lo ja nao sim mais
menos muito pouco ate apos sobre entre tem ter tenho ha foi ser sou esta estou vou vai posso pode
preciso precisa fazer faz fiz dar da di algum alguma nada tudo todo toda todos todas cada outro
outra outros outras mesmo mesma depois antes entao tambem so sao e
""".split())


def strip_accents(s):
    return "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn")


def content_words(text):
    words = re.findall(r"[a-z0-9]+", strip_accents(text.lower()))
    return {w for w in words if w not in STOP and not w.isdigit() and len(w) > 1}


def overlap(q_words, ref_words):
    hits = set()
    for q in q_words:
        for r in ref_words:
            if q == r or (len(q) >= 5 and len(r) >= 5 and q[:5] == r[:5]):
                hits.add((q, r))
    return hits


def body_words(body):
    return [t for t in body.split() if re.search(r"\w", t)]


errors = []
warnings = []


def err(msg):
    errors.append(msg)


# ---------------------------------------------------------------- packages
packages = {}
files = sorted(f for f in os.listdir(PKG_DIR) if f.endswith(".md"))
numbers = []
for fn in files:
    m = FILE_RE.match(fn)
    if not m:
        err(f"{fn}: bad file name (expected NN_slug.md)")
        continue
    numbers.append(int(m.group(1)))
    text = open(os.path.join(PKG_DIR, fn), encoding="utf-8").read()
    if not text.startswith("---\n"):
        err(f"{fn}: missing front matter")
        continue
    try:
        _, fm_text, body = text.split("---\n", 2)
        fm = yaml.safe_load(fm_text)
    except Exception as e:  # noqa: BLE001
        err(f"{fn}: cannot parse front matter: {e}")
        continue
    for k in REQUIRED:
        if k not in fm:
            err(f"{fn}: missing field {k}")
    for k in fm:
        if k not in ALLOWED:
            err(f"{fn}: unexpected field {k}")
    pid = fm.get("id", "")
    if not isinstance(pid, str) or not UPPER_SNAKE.match(pid):
        err(f"{fn}: id {pid!r} is not UPPER_SNAKE")
    if pid in packages:
        err(f"{fn}: duplicate id {pid}")
    for k in ("title", "summary", "source"):
        if not isinstance(fm.get(k), str) or not fm.get(k).strip():
            err(f"{fn}: {k} must be a non-empty string")
    if fm.get("kind") not in KINDS:
        err(f"{fn}: kind {fm.get('kind')!r} invalid")
    if not isinstance(fm.get("strict"), bool):
        err(f"{fn}: strict must be boolean")
    aliases = fm.get("aliases") or []
    if not isinstance(aliases, list) or not 1 <= len(aliases) <= 3:
        err(f"{fn}: aliases must be a list of 1-3 items")
    for a in aliases:
        if not isinstance(a, str) or not UPPER_SNAKE.match(a):
            err(f"{fn}: alias {a!r} is not UPPER_SNAKE")
    kws = fm.get("keywords") or []
    if not isinstance(kws, list) or not 3 <= len(kws) <= 8:
        err(f"{fn}: keywords must be a list of 3-8 items")
    for kw in kws:
        if not isinstance(kw, str) or not kw.strip():
            err(f"{fn}: bad keyword {kw!r}")
        elif set(strip_accents(kw.lower()).split()) & FOREIGN:
            err(f"{fn}: keyword {kw!r} looks non-Portuguese")
    sems = fm.get("semantic_ids") or []
    if not isinstance(sems, list) or len(sems) > 2:
        err(f"{fn}: semantic_ids must be a list of 0-2 items")
    for s in sems:
        if not isinstance(s, str) or not SEM_RE.match(s):
            err(f"{fn}: semantic id {s!r} malformed")
    body = body.strip("\n")
    if not body.startswith("# "):
        err(f"{fn}: body must start with a '# ' heading")
    n = len(body_words(body))
    if not BODY_WORDS[0] <= n <= BODY_WORDS[1]:
        err(f"{fn}: body has {n} words (need {BODY_WORDS[0]}-{BODY_WORDS[1]})")
    links = set(LINK_RE.findall(body))
    if not 2 <= len(links) <= 4:
        err(f"{fn}: {len(links)} distinct links (need 2-4)")
    if pid in links:
        err(f"{fn}: links to itself")
    packages[pid] = dict(fm, _file=fn, _body=body, _links=links, _words=n)

if numbers != list(range(1, len(numbers) + 1)):
    err(f"package numbers are not consecutive from 01: {numbers}")
if not N_PACKAGES[0] <= len(packages) <= N_PACKAGES[1]:
    err(f"{len(packages)} packages (need {N_PACKAGES[0]}-{N_PACKAGES[1]})")

alias_owner = {}
for pid, p in packages.items():
    for a in p.get("aliases") or []:
        if a in alias_owner or a in packages:
            err(f"alias {a} of {pid} is not unique (also {alias_owner.get(a, a)})")
        alias_owner[a] = pid
sem_owner = {}
for pid, p in packages.items():
    for s in p.get("semantic_ids") or []:
        if s in sem_owner:
            err(f"semantic id {s} used by {pid} and {sem_owner[s]}")
        sem_owner[s] = pid
    for link in p["_links"]:
        if link not in packages:
            err(f"{p['_file']}: link [[{link}]] does not exist")

kinds = Counter(p.get("kind") for p in packages.values())
npk = max(1, len(packages))
# target mix: knowledge ~55 %, procedure ~22 %, rule ~20 % (tolerance +-6 points)
for kind, target in (("knowledge", 0.55), ("procedure", 0.22), ("rule", 0.20)):
    if abs(kinds[kind] / npk - target) > 0.06:
        err(f"{kind} packages: {kinds[kind]}/{npk} ({kinds[kind] / npk:.0%}), target ~{target:.0%}")
strict = [pid for pid, p in packages.items() if p.get("strict") is True]
if len(strict) != 1:
    err(f"exactly one strict package required, found {strict}")
elif packages[strict[0]]["kind"] != "rule":
    err(f"strict package {strict[0]} must be a rule")
with_sem = sum(1 for p in packages.values() if p.get("semantic_ids"))
share = with_sem / max(1, len(packages))
if not 0.2 <= share <= 0.45:
    warnings.append(f"semantic_ids on {with_sem}/{len(packages)} packages ({share:.0%}), target ~1/3")

# ---------------------------------------------------------------- questions
all_groups = {}
split_types = defaultdict(Counter)
for split in ("dev", "test"):
    path = os.path.join(ROOT, f"questions.{split}.json")
    items = json.load(open(path, encoding="utf-8"))
    if not isinstance(items, list):
        err(f"{path}: not a list")
        continue
    groups = defaultdict(list)
    for i, it in enumerate(items):
        where = f"{split}[{i}]"
        for k in ("query", "lang", "expected", "type", "group", "context"):
            if k not in it:
                err(f"{where}: missing {k}")
        if set(it) - {"query", "lang", "expected", "type", "group", "context"}:
            err(f"{where}: unexpected keys {set(it)}")
        if it.get("lang") not in ("pt", "en", "es"):
            err(f"{where}: bad lang {it.get('lang')}")
        if it.get("type") not in MIN_TYPES:
            err(f"{where}: bad type {it.get('type')}")
        if not re.match(rf"^{PREFIX}-\d{{3}}$", str(it.get("group", ""))):
            err(f"{where}: bad group {it.get('group')}")
        if not isinstance(it.get("query"), str) or not it["query"].strip():
            err(f"{where}: empty query")
        for e in it.get("expected", []):
            if e not in packages:
                err(f"{where}: expected id {e} does not exist")
        groups[it.get("group")].append(it)
    for gid, members in groups.items():
        if gid in all_groups:
            err(f"group {gid} appears in both splits")
        all_groups[gid] = (split, members)
        langs = sorted(m["lang"] for m in members)
        if langs != ["en", "es", "pt"]:
            err(f"{gid}: languages {langs} (need exactly pt, en, es)")
        ref = members[0]
        for m in members[1:]:
            for k in ("type", "expected", "context"):
                if m[k] != ref[k]:
                    err(f"{gid}: {k} differs between languages")
        queries = {m["lang"]: m["query"] for m in members}
        if len(set(queries.values())) != len(queries):
            err(f"{gid}: identical query text across languages")
        split_types[split][ref["type"]] += 1

        typ, exp, ctx = ref["type"], ref["expected"], ref["context"]
        pt = queries.get("pt", "")
        if typ == "ood":
            if exp:
                err(f"{gid}: ood must have empty expected")
        elif not exp:
            err(f"{gid}: non-ood group needs expected ids")
        if typ == "multi" and (len(exp) != 2 or len(set(exp)) != 2):
            err(f"{gid}: multi needs exactly 2 distinct expected ids")
        if typ not in ("multi", "ood") and len(exp) != 1:
            err(f"{gid}: {typ} needs exactly 1 expected id")
        if typ == "deictic":
            try:
                page = ctx["page"]["semanticId"]
                focus = ctx["focus"]["semanticId"]
                parents = ctx["focus"]["parentIds"]
                assert isinstance(page, str) and isinstance(parents, list) and parents
            except Exception:  # noqa: BLE001
                err(f"{gid}: deictic context malformed")
            else:
                if focus not in sem_owner:
                    err(f"{gid}: focus {focus} is not a package semantic id")
                elif sem_owner[focus] not in exp:
                    err(f"{gid}: focus {focus} belongs to {sem_owner[focus]}, not expected {exp}")
                if page not in parents:
                    err(f"{gid}: page {page} should be among focus parentIds")
            words = set(re.findall(r"\w+", pt.lower()))
            if not words & DEICTIC_WORDS:
                err(f"{gid}: deictic pt question lacks a deictic word")
        elif ctx != {}:
            err(f"{gid}: only deictic groups carry a context")
        if typ == "alias":
            for lang, q in queries.items():
                names = set(re.findall(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b", q))
                owners = {alias_owner.get(n, n if n in packages else None) for n in names}
                if not names or not owners & set(exp):
                    err(f"{gid}/{lang}: alias question must name an alias/ID of {exp}")
            names_pt = set(re.findall(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b", queries.get("pt", "")))
            for lang, q in queries.items():
                for n in names_pt:
                    if n not in q:
                        err(f"{gid}/{lang}: alias {n} not kept unchanged")
        if typ == "typo":
            for lang, q in queries.items():
                if strip_accents(q) != q or re.search(r"[ñÑçÇ]", q):
                    err(f"{gid}/{lang}: typo question should be written without accents")
        if typ == "paraphrase":
            p = packages.get(exp[0]) if exp else None
            if p:
                ref_words = content_words(p["title"]) | content_words(" ".join(p["keywords"]))
                hits = overlap(content_words(pt), ref_words)
                if hits:
                    err(f"{gid}: paraphrase shares words/stems with {exp[0]} title/keywords: {sorted(hits)}")
        if typ != "alias":
            for lang, q in queries.items():
                for n in re.findall(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b", q):
                    if n in alias_owner or n in packages:
                        err(f"{gid}/{lang}: non-alias question names {n}")

type_totals = Counter()
for s in split_types.values():
    type_totals.update(s)
pt_groups = len(all_groups)
if pt_groups != 2 * sum(SPLIT_TYPES.values()):
    err(f"{pt_groups} groups (need exactly {2 * sum(SPLIT_TYPES.values())})")
for t, mn in MIN_TYPES.items():
    if type_totals[t] < mn:
        err(f"type {t}: {type_totals[t]} groups (need >= {mn})")
    for split in ("dev", "test"):
        if split_types[split][t] != SPLIT_TYPES[t]:
            err(f"type {t}: {split} has {split_types[split][t]} groups (need exactly {SPLIT_TYPES[t]})")
ood_near = None  # near-miss vs unrelated balance is documented in README, not machine-checkable

# ---------------------------------------------------------------- report
print(f"packages: {len(packages)} {dict(kinds)}; strict: {strict}; with semantic_ids: {with_sem}")
print(f"words per body: min {min(p['_words'] for p in packages.values())}, "
      f"max {max(p['_words'] for p in packages.values())}")
print(f"groups: {pt_groups}; items: {3 * pt_groups}")
for split in ("dev", "test"):
    print(f"  {split}: {sum(split_types[split].values())} groups {dict(sorted(split_types[split].items()))}")
for w in warnings:
    print("WARNING:", w)
if errors:
    print(f"\n{len(errors)} error(s):")
    for e in errors:
        print("  -", e)
    sys.exit(1)
print("OK: catalog is valid")
