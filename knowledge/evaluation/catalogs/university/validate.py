#!/usr/bin/env python3
"""Validate the university catalog (packages + questions). Stdlib + PyYAML only.

Usage: python3 validate.py            (run from any directory)
Exit code 0 when every check passes, 1 otherwise.
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
PREFIX = "univ"
QFILES = ["questions.dev.json", "questions.test.json"]

UPPER_SNAKE = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$")
FILE_RE = re.compile(r"^(\d{2})_([a-z0-9]+(?:_[a-z0-9]+)*)\.md$")
SEM_RE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")
LINK_RE = re.compile(r"\[\[([A-Z0-9_]+)\]\]")
GROUP_RE = re.compile(r"^" + PREFIX + r"-\d{3}$")
REQUIRED = ["id", "title", "summary", "kind", "strict", "aliases", "keywords", "source"]
KINDS = {"knowledge", "procedure", "rule"}
TYPES_MIN = {"direct": 7, "paraphrase": 9, "alias": 3, "typo": 5, "multi": 5, "deictic": 5, "ood": 8}
LANGS = {"pt", "en", "es"}

# Portuguese stop words + very common function words (accent-stripped, lowercase).
STOP = set("""
a o as os um uma uns umas de do da dos das no na nos nas em ao aos por pelo pela pelos pelas
para pra pro pras pros com sem sob sobre entre ate apos e ou mas nem que se como quando onde
qual quais quanto quanta quantos quantas quem porque pq por que eu tu ele ela nos vos eles elas
voce voces vc vcs me te lhe mim meu minha meus minhas seu sua seus suas teu tua nosso nossa
isso isto esse essa este esta esses essas estes estas aquilo aquele aquela la ai aqui ali ja
nao sim mais menos muito muita pouco bem so tambem ainda entao depois antes agora ser sou e eh
estar estou esta ter tenho tem ha foi vai vou pode posso da de do dar fazer faco faz preciso
tipo coisa algum alguma alguns algumas todo toda todos todas cada outro outra outros outras
mesmo mesma num numa dum duma lo los le les o ao the of and or to in on for is are my i
""".split())

# A few common English/Spanish words that must not appear as keywords.
NON_PT = set("""
the and of to how what when where student students course courses grade grades fee fees
password login card library exchange internship transcript diploma enrollment
el los las del estudiante curso cursos nota notas tarjeta contraseña biblioteca matricula
""".split()) - {"diploma", "biblioteca", "nota", "notas", "curso", "cursos"}

errors = []


def err(msg):
    errors.append(msg)


def strip_accents(s):
    return "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn")


def content_words(text):
    words = re.findall(r"[a-z0-9]+", strip_accents(text.lower()))
    return [w for w in words if w not in STOP and not w.isdigit() and len(w) > 1]


def stems(text):
    return {w[:5] for w in content_words(text)}


def word_count(body):
    return sum(1 for tok in body.split() if re.search(r"\w", tok))


def load_packages():
    pkgs = {}
    files = sorted(os.listdir(PKG_DIR))
    if len(files) < 32:
        err(f"only {len(files)} package files (need >= 32)")
    nums = []
    for fn in files:
        m = FILE_RE.match(fn)
        if not m:
            err(f"{fn}: bad file name (NN_slug.md)")
            continue
        nums.append(int(m.group(1)))
        text = open(os.path.join(PKG_DIR, fn), encoding="utf-8").read()
        if not text.startswith("---\n"):
            err(f"{fn}: missing front matter")
            continue
        try:
            _, fm, body = text.split("---\n", 2)
        except ValueError:
            err(f"{fn}: malformed front matter")
            continue
        meta = yaml.safe_load(fm)
        for k in REQUIRED:
            if k not in meta:
                err(f"{fn}: missing field {k}")
        pid = meta.get("id", "")
        if not UPPER_SNAKE.match(str(pid)):
            err(f"{fn}: id not UPPER_SNAKE: {pid}")
        if pid in pkgs:
            err(f"{fn}: duplicate id {pid}")
        for k in ("title", "summary", "source"):
            if not isinstance(meta.get(k), str) or not meta.get(k).strip():
                err(f"{fn}: {k} must be a non-empty string")
        if meta.get("kind") not in KINDS:
            err(f"{fn}: bad kind {meta.get('kind')}")
        if not isinstance(meta.get("strict"), bool):
            err(f"{fn}: strict must be boolean")
        al = meta.get("aliases") or []
        if not (isinstance(al, list) and 1 <= len(al) <= 3):
            err(f"{fn}: aliases must be a list of 1-3")
        for a in al:
            if not UPPER_SNAKE.match(str(a)):
                err(f"{fn}: alias not UPPER_SNAKE: {a}")
        kw = meta.get("keywords") or []
        if not (isinstance(kw, list) and 3 <= len(kw) <= 8):
            err(f"{fn}: keywords must be a list of 3-8")
        for k in kw:
            for w in re.findall(r"\w+", str(k).lower()):
                if w in NON_PT:
                    err(f"{fn}: keyword looks non-Portuguese: {k}")
        sem = meta.get("semantic_ids", []) or []
        if not (isinstance(sem, list) and len(sem) <= 2):
            err(f"{fn}: semantic_ids must be a list of 0-2")
        for s in sem:
            if not SEM_RE.match(str(s)):
                err(f"{fn}: bad semantic id {s}")
        wc = word_count(body)
        if not 180 <= wc <= 320:
            err(f"{fn}: body has {wc} words (need 180-320)")
        if not body.lstrip().startswith("# "):
            err(f"{fn}: body must start with a '# ' heading")
        meta["_file"] = fn
        meta["_body"] = body
        meta["_wc"] = wc
        meta["semantic_ids"] = sem
        pkgs[pid] = meta
    if len(set(nums)) != len(nums) or sorted(nums) != list(range(1, len(nums) + 1)):
        err("package numbers must be unique and consecutive from 01")
    return pkgs


def check_packages(pkgs):
    names = Counter()
    for pid, m in pkgs.items():
        names[pid] += 1
        for a in m.get("aliases") or []:
            names[a] += 1
    for n, c in names.items():
        if c > 1:
            err(f"id/alias used more than once: {n}")
    sems = Counter(s for m in pkgs.values() for s in m["semantic_ids"])
    for s, c in sems.items():
        if c > 1:
            err(f"semantic id used by more than one package: {s}")
    for pid, m in pkgs.items():
        links = LINK_RE.findall(m["_body"])
        distinct = set(links)
        if not 2 <= len(distinct) <= 4:
            err(f"{pid}: links {len(distinct)} distinct packages (need 2-4)")
        for l in distinct:
            if l not in pkgs:
                err(f"{pid}: link to unknown package {l}")
            if l == pid:
                err(f"{pid}: links to itself")
    kinds = Counter(m.get("kind") for m in pkgs.values())
    if kinds["knowledge"] < 20:
        err(f"knowledge packages {kinds['knowledge']} < 20")
    if kinds["procedure"] < 5:
        err(f"procedure packages {kinds['procedure']} < 5")
    if kinds["rule"] < 5:
        err(f"rule packages {kinds['rule']} < 5")
    strict = [p for p, m in pkgs.items() if m.get("strict") is True]
    if len(strict) != 1:
        err(f"exactly one strict package required, found {strict}")
    elif pkgs[strict[0]].get("kind") != "rule":
        err(f"strict package {strict[0]} is not a rule")
    with_sem = sum(1 for m in pkgs.values() if m["semantic_ids"])
    ratio = with_sem / max(1, len(pkgs))
    if not 0.2 <= ratio <= 0.45:
        err(f"semantic_ids on {with_sem}/{len(pkgs)} packages (want about 1/3)")
    return kinds


def check_questions(pkgs):
    sem_owner = {s: pid for pid, m in pkgs.items() for s in m["semantic_ids"]}
    groups = {}
    group_file = {}
    all_queries = Counter()
    per_split_type = defaultdict(Counter)
    n_items = 0
    for qf in QFILES:
        path = os.path.join(ROOT, qf)
        items = json.load(open(path, encoding="utf-8"))
        if not isinstance(items, list):
            err(f"{qf}: must be a JSON list")
            continue
        for i, it in enumerate(items):
            n_items += 1
            where = f"{qf}[{i}]"
            for k in ("query", "lang", "expected", "type", "group", "context"):
                if k not in it:
                    err(f"{where}: missing {k}")
            q, lang, exp, typ, g, ctx = (it.get(k) for k in ("query", "lang", "expected", "type", "group", "context"))
            if lang not in LANGS:
                err(f"{where}: bad lang {lang}")
            if typ not in TYPES_MIN:
                err(f"{where}: bad type {typ}")
            if not isinstance(g, str) or not GROUP_RE.match(g):
                err(f"{where}: bad group {g}")
            if not isinstance(exp, list):
                err(f"{where}: expected must be a list")
                exp = []
            for e in exp:
                if e not in pkgs:
                    err(f"{where}: unknown expected id {e}")
            if not isinstance(ctx, dict):
                err(f"{where}: context must be an object")
            all_queries[q] += 1
            if g in group_file and group_file[g] != qf:
                err(f"group {g} split across files")
            group_file[g] = qf
            groups.setdefault(g, []).append(it)
    for q, c in all_queries.items():
        if c > 1:
            err(f"duplicate query: {q}")
    if n_items < 126:
        err(f"only {n_items} question items (need >= 126)")
    type_counts = Counter()
    for g, items in sorted(groups.items()):
        langs = sorted(it.get("lang") for it in items)
        if langs != ["en", "es", "pt"]:
            err(f"{g}: languages {langs} (need exactly pt/en/es)")
            continue
        base = items[0]
        for it in items[1:]:
            for k in ("type", "expected", "context"):
                if it.get(k) != base.get(k):
                    err(f"{g}: field {k} differs between languages")
        typ, exp, ctx = base["type"], base["expected"], base["context"]
        type_counts[typ] += 1
        per_split_type[group_file[g]][typ] += 1
        by_lang = {it["lang"]: it["query"] for it in items}
        pt = by_lang["pt"]
        if typ == "ood":
            if exp:
                err(f"{g}: ood must have expected []")
        elif not exp:
            err(f"{g}: non-ood question needs expected ids")
        if typ == "multi" and len(exp) != 2:
            err(f"{g}: multi needs exactly 2 expected ids")
        if typ in ("direct", "paraphrase", "alias", "typo", "deictic") and len(exp) != 1:
            err(f"{g}: {typ} needs exactly 1 expected id")
        if typ != "deictic" and ctx:
            err(f"{g}: only deictic questions carry a context")
        if typ == "deictic":
            try:
                page = ctx["page"]["semanticId"]
                focus = ctx["focus"]["semanticId"]
                parents = ctx["focus"]["parentIds"]
            except (KeyError, TypeError):
                err(f"{g}: deictic context malformed")
            else:
                if sem_owner.get(focus) not in exp:
                    err(f"{g}: focus {focus} is not a semantic id of the expected package")
                if not focus.startswith(page + ".") or page not in parents:
                    err(f"{g}: page {page} must be the parent of focus {focus}")
            cue = re.compile(r"\b(isso|isto|esse|essa|este|esta|aqui|this|that|here|it|esto|eso|este|esta|aqui|aquí|acá)\b", re.I)
            for lang, q in by_lang.items():
                if not cue.search(q):
                    err(f"{g}/{lang}: deictic question without a deictic word")
        if typ == "alias":
            names = set()
            for e in exp:
                names.add(e)
                names.update(pkgs[e].get("aliases") or [])
            for lang, q in by_lang.items():
                if not any(re.search(r"(?<![A-Z0-9_])" + re.escape(n) + r"(?![A-Z0-9_])", q) for n in names):
                    err(f"{g}/{lang}: alias question must name an alias/ID literally")
        if typ == "typo":
            for lang, q in by_lang.items():
                if strip_accents(q) != q:
                    err(f"{g}/{lang}: typo question should have no accents")
        if typ == "paraphrase":
            m = pkgs[exp[0]]
            forbidden = stems(m["title"])
            for k in m.get("keywords") or []:
                forbidden |= stems(k)
            clash = sorted(stems(pt) & forbidden)
            if clash:
                err(f"{g}: paraphrase shares stems with title/keywords of {exp[0]}: {clash}")
    if len(groups) < 42:
        err(f"only {len(groups)} groups (need >= 42)")
    for t, mn in TYPES_MIN.items():
        if type_counts[t] < mn:
            err(f"type {t}: {type_counts[t]} groups < {mn}")
    dev, test = per_split_type[QFILES[0]], per_split_type[QFILES[1]]
    for t in TYPES_MIN:
        if abs(dev[t] - test[t]) > 1:
            err(f"type {t} unbalanced between splits: dev {dev[t]} / test {test[t]}")
    return type_counts, per_split_type, n_items, len(groups)


def main():
    pkgs = load_packages()
    kinds = check_packages(pkgs)
    tc, split, n_items, n_groups = check_questions(pkgs)
    print(f"packages: {len(pkgs)}  kinds: {dict(kinds)}")
    wcs = [m["_wc"] for m in pkgs.values()]
    print(f"body words: min {min(wcs)} max {max(wcs)} mean {sum(wcs) / len(wcs):.0f}")
    print(f"question items: {n_items}  groups: {n_groups}")
    for t in TYPES_MIN:
        print(f"  {t:<11} dev {split[QFILES[0]][t]:>2}  test {split[QFILES[1]][t]:>2}  total {tc[t]:>2}")
    if errors:
        print(f"\n{len(errors)} ERROR(S):")
        for e in errors:
            print("  -", e)
        sys.exit(1)
    print("\nOK: all checks passed")


if __name__ == "__main__":
    main()
