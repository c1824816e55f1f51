#!/usr/bin/env python3
"""Validate one evaluation catalog folder against FORMAT.md (standard library + PyYAML).

    python knowledge/evaluation/catalogs/validate_catalog.py DIR [--prefix P] [--foreign-words FILE]

It merges the checks of the per-catalog ``validate.py`` copies. Where those copies disagree
(mostly on counts), the rule kept is the one every existing catalog passes; each such choice
is commented where its constant is defined. Exit status 0 when everything passes, 1 otherwise.
"""

import argparse
import hashlib
import json
import re
import sys
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

import yaml

REQUIRED = ("id", "title", "summary", "kind", "strict", "aliases", "keywords", "source")
ALLOWED = {*REQUIRED, "semantic_ids"}
KINDS = ("knowledge", "procedure", "rule")
LANGS = ("en", "es", "pt")
TYPES = ("direct", "paraphrase", "alias", "typo", "multi", "deictic", "ood")
ITEM_KEYS = {"query", "lang", "expected", "type", "group"}  # plus optional "context"
SPLITS = ("dev", "test")

UPPER_SNAKE = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$")
FILE_RE = re.compile(r"^(\d{2})_([a-z0-9]+(?:_[a-z0-9]+)*)\.md$")
# Dotted UI path with >= 2 segments. snake_case (most catalogs) and camelCase (saas, hr) both occur.
SEM_RE = re.compile(r"^[a-z][a-zA-Z0-9_]*(\.[a-z0-9][a-zA-Z0-9_]*)+$")
LINK_RE = re.compile(r"\[\[([A-Z0-9_]+)\]\]")
# An UPPER_SNAKE token; only tokens that are a package id or alias count (aliases may be one word).
NAME_RE = re.compile(r"(?<![A-Za-z0-9_])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*(?![A-Za-z0-9_])")

# Package count: most copies ask 36-40, four ask >= 32; saas has 34, so 32-40.
N_PACKAGES = (32, 40)
# Body words (whitespace tokens holding a letter or digit): copies ask 180-300, 180-320 or 200-300;
# saas (max 319), hr (max 318) and university (min 198) need 180-320.
BODY_WORDS = (180, 320)
# Distinct [[ID]] links per body: most copies ask 2-4; hr has bodies with 1 and 5, saas with 5.
LINKS = (1, 5)
ALIASES = (1, 3)
KEYWORDS = (3, 8)
MAX_SEMANTIC_IDS = 2
SEMANTIC_SHARE = (0.20, 0.45)  # share of packages carrying semantic_ids (target about 1/3)
# Kind mix: some copies check shares (knowledge 55 % +- 6), which saas (65 %) and hr (67 %) miss;
# the absolute minimums below hold everywhere.
MIN_KINDS = {"knowledge": 20, "procedure": 5, "rule": 5}
# Groups (one pt question + en + es) per type in EACH split. Most catalogs have exactly
# 4/5/2/3/3/3/4 (24 per split); cityhall and logistics have 3 direct, saas and hr have more of
# several types, so these are minimums, plus dev/test balance within 1 per type.
MIN_PER_SPLIT = {"direct": 3, "paraphrase": 5, "alias": 2, "typo": 3, "multi": 3, "deictic": 3, "ood": 4}
MAX_SPLIT_GAP = 1

# Cue words a deictic question needs, per language (accent-stripped, lowercase).
DEICTIC_CUES = {
    "pt": set(
        "isso isto este esta esse essa estes estas esses essas aqui ali ai daqui nisso disso neste nesse nesta "
        "nessa deste desse desta dessa aquele aquela aquilo".split()
    ),
    "en": set("this that here it these those".split()),
    "es": set("esto eso este esta ese esa aqui aca estos esas".split()),
}

# Stop words for the paraphrase overlap rule: union of the copies' lists (a larger list only
# drops words from the comparison, so every catalog that passed its own list passes this one).
STOP = set(
    """
a as ao aos o os um uma uns umas de do da dos das no na nos nas em para pra pro pras pros por pelo pela pelos
pelas com sem sob sobre entre ate apos e ou mas nem se que qual quais quando quanto quanta quantos quantas quem
como onde porque pq eu tu ele ela vos eles elas me te lhe mim comigo voce voces vc vcs meu minha meus minhas
seu sua seus suas teu tua nosso nossa este esta esse essa esses essas estes estas isso isto aquilo aquele aquela
la lo los le les ai aqui ali ja nao sim mais menos muito muita pouco bem so tambem ainda entao depois antes agora
ha foi ser sou eh estar estou ter tenho tem vou vai posso pode preciso precisa fazer faco faz fiz dar di tipo
coisa algum alguma alguns algumas nada tudo todo toda todos todas cada outro outra outros outras mesmo mesma num
numa dum duma via dois duas tres sao the of and or to in on for is are my i
""".split()
)

# English/Spanish words that must not appear in keywords: union of the copies' FOREIGN/NON_PT lists,
# minus words that are also ordinary Brazilian Portuguese after accent stripping (data, luz, cita,
# matricula, turno, certificado, fuga, medidor, piscina, ...) or loanwords in use (home office);
# several of those occur in the existing catalogs' keywords. A catalog may add words with --foreign-words.
FOREIGN = set(
    """
the and of to for how what when where el los las del
account allowance appeal appliance appliances appointment bill billing bills blackout boarding booking broker
bundle cancel car card care cat cats certificate claim claims complaint condo course courses court coverage
credit credits cremation customs damage damaged daycare debris debt deductible delivery deworming
disconnection dog dogs due electric electricity elevator emergency energy enrollment euthanasia exchange
fasting fee fees fine fines flag flags flood footage fraud garage garbage glass grade grades grooming gym hail
health inspection installment installments insurance internship keys kids kite kites label late leak leaks
liability library light locker login lost meeting meter meters moving noise number ombudsman outage outages
owner package panel panels parcel parking party password payment payments period permit pet pets pharmacy phone
pickup plan plans policy pool postpaid pothole power prepaid privacy property proxy pruning quiet reading
readings reconnection record records recycling referral refund renewal renovation rental report results return
roadside router school seal shipping shutdown speed stolen street student students surgery tariff tariffs tax
tenant theft tow towing tracking transcript trash travel tree trees vaccine vet visitor visitors waiting waste
water windshield wire wires
alquiler apagon apagones arbol arboles asamblea ascensor aseguradora ayunas bandera banderas barrilete basura
cable cables cancha casillero cenizas cirugia cochera contrasena corriente cuota cuotas datos
deducible deuda deudas electrica electricidad electrico electrodomestico electrodomesticos enganche estacionamiento
estudiante factura facturas fiesta franquicia garaje gimnasio guarderia impuesto lectura lecturas licencia linea
llaves mascota mascotas morosidad mudanza ninos papalote paquete paqueteria parabrisas peluqueria perro perros
poliza precinto queja rastreo recargo reciclaje recogida reconexion remolque siniestro suministro taller
tarjeta vacuna vacunas vecino vecinos velocidad vencimiento
""".split()
)


def strip_accents(text):
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


def plain_words(text):
    return re.findall(r"[a-z0-9]+", strip_accents(text.lower()))


def content_words(text):
    return {w for w in plain_words(text) if w not in STOP and not w.isdigit() and len(w) > 1}


def shared_stems(query_words, ref_words):
    """Pairs sharing the word, or its first 5 letters when both words have at least 5."""
    return sorted(
        (q, r) for q in query_words for r in ref_words if q == r or (min(len(q), len(r)) >= 5 and q[:5] == r[:5])
    )


class Report:
    def __init__(self):
        self.errors, self.warnings = [], []

    def err(self, msg):
        self.errors.append(msg)

    def warn(self, msg):
        self.warnings.append(msg)


# ------------------------------------------------------------------ packages


def read_package(path, rep):
    """Return (front matter dict, body) or None."""
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        rep.err(f"{path.name}: missing YAML front matter (file must start with '---')")
        return None
    try:
        _, fm_text, body = text.split("---\n", 2)
        fm = yaml.safe_load(fm_text)
    except (ValueError, yaml.YAMLError) as e:
        rep.err(f"{path.name}: cannot parse front matter: {e}")
        return None
    if not isinstance(fm, dict):
        rep.err(f"{path.name}: front matter is not a mapping")
        return None
    return fm, body


def check_fields(fn, fm, rep, foreign):
    for k in REQUIRED:
        if k not in fm:
            rep.err(f"{fn}: missing field {k}")
    for k in sorted(set(fm) - ALLOWED):
        rep.err(f"{fn}: unexpected field {k}")
    if not UPPER_SNAKE.match(str(fm.get("id", ""))):
        rep.err(f"{fn}: id {fm.get('id')!r} is not UPPER_SNAKE")
    for k in ("title", "summary", "source"):
        if not isinstance(fm.get(k), str) or not fm[k].strip():
            rep.err(f"{fn}: {k} must be a non-empty string")
    if fm.get("kind") not in KINDS:
        rep.err(f"{fn}: kind {fm.get('kind')!r} is not one of {', '.join(KINDS)}")
    if not isinstance(fm.get("strict"), bool):
        rep.err(f"{fn}: strict must be true or false")
    elif fm["strict"] and fm.get("kind") != "rule":
        rep.err(f"{fn}: strict: true is only allowed on a rule")
    check_lists(fn, fm, rep, foreign)


def check_lists(fn, fm, rep, foreign):
    aliases = fm.get("aliases")
    if not isinstance(aliases, list) or not ALIASES[0] <= len(aliases) <= ALIASES[1]:
        rep.err(f"{fn}: aliases must be a list of {ALIASES[0]}-{ALIASES[1]} items")
    for a in aliases if isinstance(aliases, list) else []:
        if not isinstance(a, str) or not UPPER_SNAKE.match(a):
            rep.err(f"{fn}: alias {a!r} is not UPPER_SNAKE")
    kws = fm.get("keywords")
    if not isinstance(kws, list) or not KEYWORDS[0] <= len(kws) <= KEYWORDS[1]:
        rep.err(f"{fn}: keywords must be a list of {KEYWORDS[0]}-{KEYWORDS[1]} items")
    for kw in kws if isinstance(kws, list) else []:
        if not isinstance(kw, str) or not kw.strip():
            rep.err(f"{fn}: keyword {kw!r} is not a non-empty string")
        elif bad := sorted(set(plain_words(kw)) & foreign):
            rep.err(f"{fn}: keyword {kw!r} is not Portuguese (English/Spanish word: {', '.join(bad)})")
    sems = fm.get("semantic_ids") or []
    if not isinstance(sems, list) or len(sems) > MAX_SEMANTIC_IDS:
        rep.err(f"{fn}: semantic_ids must be a list of at most {MAX_SEMANTIC_IDS} items")
    for s in sems if isinstance(sems, list) else []:
        if not isinstance(s, str) or not SEM_RE.match(s):
            rep.err(f"{fn}: semantic id {s!r} malformed (dotted lowercase path such as app.screen.field)")


def check_body(fn, pid, body, rep):
    body = body.strip("\n")
    if not body.startswith("# "):
        rep.err(f"{fn}: body must start with a '# ' heading")
    n = sum(1 for tok in body.split() if re.search(r"\w", tok))
    if not BODY_WORDS[0] <= n <= BODY_WORDS[1]:
        rep.err(f"{fn}: body has {n} words (need {BODY_WORDS[0]}-{BODY_WORDS[1]})")
    links = set(LINK_RE.findall(body))
    if not LINKS[0] <= len(links) <= LINKS[1]:
        rep.err(f"{fn}: body links {len(links)} distinct packages (need {LINKS[0]}-{LINKS[1]} [[ID]] links)")
    if pid in links:
        rep.err(f"{fn}: body links to its own package [[{pid}]]")
    return n, links


def load_packages(folder, rep, foreign):
    pkgs, numbers = {}, []
    for path in sorted((folder / "packages").glob("*")):
        m = FILE_RE.match(path.name)
        if not m:
            rep.err(f"{path.name}: bad file name (need NN_slug.md, e.g. 07_late_returns.md)")
            continue
        numbers.append(int(m.group(1)))
        parsed = read_package(path, rep)
        if parsed is None:
            continue
        fm, body = parsed
        check_fields(path.name, fm, rep, foreign)
        pid = fm.get("id")
        if pid in pkgs:
            rep.err(f"{path.name}: duplicate id {pid} (also in {pkgs[pid]['_file']})")
        words, links = check_body(path.name, pid, body, rep)
        if not isinstance(pid, str):
            continue
        pkgs[pid] = dict(fm, _file=path.name, _words=words, _links=links)
    if numbers != list(range(1, len(numbers) + 1)):
        rep.err(f"package numbers must run 01, 02, ... without gaps or repeats: {numbers}")
    return pkgs


def check_catalog(pkgs, rep):
    if not N_PACKAGES[0] <= len(pkgs) <= N_PACKAGES[1]:
        rep.err(f"{len(pkgs)} packages (need {N_PACKAGES[0]}-{N_PACKAGES[1]})")
    names = Counter(list(pkgs))
    for p in pkgs.values():
        names.update(a for a in p.get("aliases") or [] if isinstance(a, str))
    for name, count in sorted(names.items()):
        if count > 1:
            rep.err(f"id/alias {name} is used {count} times (ids and aliases must be unique)")
    sems = Counter(s for p in pkgs.values() for s in p.get("semantic_ids") or [] if isinstance(s, str))
    for s, count in sorted(sems.items()):
        if count > 1:
            rep.err(f"semantic id {s} is used by {count} packages")
    for pid, p in pkgs.items():
        for link in sorted(p["_links"] - set(pkgs)):
            rep.err(f"{p['_file']}: link [[{link}]] names no package")
    kinds = Counter(p.get("kind") for p in pkgs.values())
    for kind, minimum in MIN_KINDS.items():
        if kinds[kind] < minimum:
            rep.err(f"{kinds[kind]} {kind} packages (need >= {minimum})")
    strict = sorted(str(pid) for pid, p in pkgs.items() if p.get("strict") is True)
    if len(strict) != 1:
        rep.err(f"exactly one strict rule required, found {len(strict)}: {strict}")
    share = sum(1 for p in pkgs.values() if p.get("semantic_ids")) / max(1, len(pkgs))
    if not SEMANTIC_SHARE[0] <= share <= SEMANTIC_SHARE[1]:
        rep.err(f"semantic_ids on {share:.0%} of packages (need {SEMANTIC_SHARE[0]:.0%}-{SEMANTIC_SHARE[1]:.0%})")
    return kinds, strict


# ------------------------------------------------------------------ questions


def check_item(where, it, pkgs, rep):
    if not isinstance(it, dict):
        rep.err(f"{where}: item is not an object")
        return False
    for k in sorted(ITEM_KEYS - set(it)):
        rep.err(f"{where}: missing field {k}")
    for k in sorted(set(it) - ITEM_KEYS - {"context"}):
        rep.err(f"{where}: unexpected field {k}")
    if it.get("lang") not in LANGS:
        rep.err(f"{where}: lang {it.get('lang')!r} is not pt, en or es")
    if it.get("type") not in TYPES:
        rep.err(f"{where}: type {it.get('type')!r} is not one of {', '.join(TYPES)}")
    if not isinstance(it.get("query"), str) or not it["query"].strip():
        rep.err(f"{where}: query must be a non-empty string")
    if not isinstance(it.get("context", {}), dict):
        rep.err(f"{where}: context must be an object")
    exp = it.get("expected")
    if not isinstance(exp, list):
        rep.err(f"{where}: expected must be a list of package ids")
        return False
    for e in exp:
        if e not in pkgs:
            rep.err(f"{where}: expected id {e} is not a package id")
    return (
        ITEM_KEYS <= set(it) and it["lang"] in LANGS and isinstance(it["query"], str) and isinstance(it["group"], str)
    )


def load_questions(folder, pkgs, prefix, rep):
    group_re = re.compile(rf"^{re.escape(prefix)}-\d{{3}}$")
    groups, group_split, seen = defaultdict(list), {}, Counter()
    for split in SPLITS:
        path = folder / f"questions.{split}.json"
        try:
            items = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            rep.err(f"{path.name}: cannot read JSON: {e}")
            continue
        if not isinstance(items, list):
            rep.err(f"{path.name}: must be a JSON list")
            continue
        groups_here = {str(it.get("group")) for it in items if isinstance(it, dict)}
        bad = sorted(g for g in groups_here if not group_re.match(g))
        if bad:
            rep.err(
                f"{path.name}: group ids {bad[:3]}{'...' if len(bad) > 3 else ''} are not {prefix}-NNN (see --prefix)"
            )
        for i, it in enumerate(items):
            if not check_item(f"{split}[{i}]", it, pkgs, rep):
                continue
            seen[it["query"].strip()] += 1
            g = it["group"]
            if group_split.setdefault(g, split) != split:
                rep.err(f"group {g} appears in both dev and test")
            groups[g].append(it)
    for q, count in seen.items():
        if count > 1:
            rep.err(f"query asked {count} times: {q!r}")
    return groups, group_split


def check_group(g, members, pkgs, rep):
    """Checks one group; returns its type, or None when the group is unusable."""
    langs = sorted(m["lang"] for m in members)
    if langs != list(LANGS):
        missing = sorted(set(LANGS) - set(langs))
        rep.err(f"{g}: languages {langs} (need exactly one pt, one en and one es; missing {missing})")
        if "pt" not in langs:
            return None
    ref = members[0]
    for m in members[1:]:
        for k in ("type", "expected"):
            if m.get(k) != ref.get(k):
                rep.err(f"{g}: {k} differs between languages")
        if (m.get("context") or {}) != (ref.get("context") or {}):
            rep.err(f"{g}: context differs between languages")
    queries = {m["lang"]: m["query"] for m in members}
    if len(set(queries.values())) != len(members):
        rep.err(f"{g}: the same query text is used for two languages")
    typ, exp = ref.get("type"), ref.get("expected")
    if typ not in TYPES or any(e not in pkgs for e in exp):
        return typ
    check_expected(g, typ, exp, rep)
    if not exp and typ != "ood":
        return typ
    check_context(g, typ, exp, ref.get("context") or {}, queries, pkgs, rep)
    check_names(g, typ, exp, queries, pkgs, rep)
    if typ == "typo":
        check_typo(g, queries, rep)
    if typ == "paraphrase":
        check_paraphrase(g, pkgs[exp[0]], exp[0], queries["pt"], rep)
    return typ


def check_typo(g, queries, rep):
    # Most copies reject accents in all three languages; hr-004/es keeps a "ñ", so only pt is an error.
    for lang, q in sorted(queries.items()):
        if strip_accents(q) == q:
            continue
        if lang == "pt":
            rep.err(f"{g}/pt: typo question must be written without accents")
        else:
            rep.warn(f"{g}/{lang}: typo question should be written without accents")


def check_expected(g, typ, exp, rep):
    if typ == "ood":
        if exp:
            rep.err(f"{g}: ood group must have expected []")
    elif typ == "multi":
        if len(exp) != 2 or len(set(exp)) != 2:
            rep.err(f"{g}: multi group needs exactly 2 distinct expected ids")
    elif len(exp) != 1:
        rep.err(f"{g}: {typ} group needs exactly 1 expected id")


def check_context(g, typ, exp, ctx, queries, pkgs, rep):
    if typ != "deictic":
        if ctx:
            rep.err(f"{g}: only deictic groups carry a context (use {{}} or leave it out)")
        return
    try:
        page, focus, parents = ctx["page"]["semanticId"], ctx["focus"]["semanticId"], ctx["focus"]["parentIds"]
        assert isinstance(page, str) and isinstance(focus, str) and isinstance(parents, list) and parents
    except (KeyError, TypeError, AssertionError):
        rep.err(
            f'{g}: deictic context must be {{"page": {{"semanticId": P}}, "focus": {{"semanticId": F, "parentIds": [P, ...]}}}}'
        )
        return
    # Most copies require the focus itself to be a semantic id of the expected package; saas-057
    # focuses an element known only through its parent, so the focus OR one of its parents must be.
    owned = {s for e in exp for s in pkgs[e].get("semantic_ids") or []}
    if not owned & {focus, *parents}:
        rep.err(f"{g}: neither focus {focus} nor its parentIds {parents} is a semantic id of {exp}")
    for lang, q in sorted(queries.items()):
        if not set(plain_words(q)) & DEICTIC_CUES[lang]:
            rep.err(f"{g}/{lang}: deictic question has no deictic word ({', '.join(sorted(DEICTIC_CUES[lang]))})")


def check_names(g, typ, exp, queries, pkgs, rep):
    """Alias groups name an id/alias of the expected package literally, the same in all languages;
    other groups name none."""
    owner = {pid: pid for pid in pkgs}
    owner.update({a: pid for pid, p in pkgs.items() for a in p.get("aliases") or [] if isinstance(a, str)})
    named = {lang: {n for n in NAME_RE.findall(q) if n in owner} for lang, q in queries.items()}
    if typ != "alias":
        for lang, names in sorted(named.items()):
            if names:
                rep.err(f"{g}/{lang}: only alias groups may name a package id or alias ({', '.join(sorted(names))})")
        return
    for lang, names in sorted(named.items()):
        if not {owner[n] for n in names} & set(exp):
            rep.err(f"{g}/{lang}: alias question must name an alias or the id of {exp[0]} literally")
        if names != named["pt"]:
            rep.err(f"{g}/{lang}: alias names {sorted(names)} differ from the pt question's {sorted(named['pt'])}")


def check_paraphrase(g, pkg, pid, pt_query, rep):
    qw = content_words(pt_query)
    hits = shared_stems(qw, content_words(str(pkg.get("title"))))
    if hits:
        rep.err(f"{g}: paraphrase shares words with the title of {pid} ({pkg.get('title')!r}): {hits}")
    # Keyword overlap is an error in most copies but only a note in saas and hr, which each keep two.
    hits = shared_stems(qw, content_words(" ".join(k for k in pkg.get("keywords") or [] if isinstance(k, str))))
    if hits:
        rep.warn(f"{g}: paraphrase shares words with the keywords of {pid}: {hits}")


def check_questions(folder, pkgs, prefix, rep):
    groups, group_split = load_questions(folder, pkgs, prefix, rep)
    counts = {s: Counter() for s in SPLITS}
    for g in sorted(groups):
        typ = check_group(g, groups[g], pkgs, rep)
        if typ in TYPES:
            counts[group_split[g]][typ] += 1
    for typ, minimum in MIN_PER_SPLIT.items():
        for split in SPLITS:
            if counts[split][typ] < minimum:
                rep.err(f"{split}: {counts[split][typ]} {typ} groups (need >= {minimum})")
        if abs(counts["dev"][typ] - counts["test"][typ]) > MAX_SPLIT_GAP:
            rep.err(f"{typ} groups unbalanced: dev {counts['dev'][typ]} vs test {counts['test'][typ]}")
    return counts


# ------------------------------------------------------------------ folder


def check_files(folder, rep):
    for name in ("README.md", "SHA256SUMS", "questions.dev.json", "questions.test.json", "packages"):
        if not (folder / name).exists():
            rep.err(f"missing {name}")
    sums = folder / "SHA256SUMS"
    if not sums.is_file():
        return
    listed = set()
    for line in sums.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        digest, _, name = line.partition("  ")
        name = name.removeprefix("*").removeprefix("./")
        listed.add(name)
        path = folder / name
        if not path.is_file():
            rep.err(f"SHA256SUMS lists missing file {name}")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != digest.strip():
            rep.err(f"SHA256SUMS: checksum mismatch for {name}")
    wanted = {f"packages/{p.name}" for p in (folder / "packages").glob("*.md")}
    wanted |= {f"questions.{s}.json" for s in SPLITS}
    for name in sorted(wanted - listed):
        rep.err(f"SHA256SUMS does not list {name}")


def validate(folder, prefix=None, extra_foreign=()):
    """Validate a catalog folder; returns a Report (errors, warnings) and a summary string."""
    folder = Path(folder)
    rep = Report()
    check_files(folder, rep)
    if not (folder / "packages").is_dir():
        return rep, ""
    foreign = FOREIGN | {strip_accents(w.lower()) for w in extra_foreign}
    pkgs = load_packages(folder, rep, foreign)
    kinds, strict = check_catalog(pkgs, rep)
    counts = check_questions(folder, pkgs, prefix or folder.resolve().name, rep)
    words = [p["_words"] for p in pkgs.values()] or [0]
    lines = [
        f"packages: {len(pkgs)} {dict(sorted(kinds.items()))}; strict: {strict}; "
        f"with semantic_ids: {sum(1 for p in pkgs.values() if p.get('semantic_ids'))}; "
        f"body words {min(words)}-{max(words)}",
        *(f"{s}: {sum(counts[s].values())} groups {dict(sorted(counts[s].items()))}" for s in SPLITS),
    ]
    return rep, "\n".join(lines)


def read_word_file(path):
    text = Path(path).read_text(encoding="utf-8")
    return [w for line in text.splitlines() for w in line.split("#", 1)[0].split()]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="catalog folder (holds packages/ and questions.*.json)")
    ap.add_argument("--prefix", help="group id prefix (default: the folder name)")
    ap.add_argument("--foreign-words", help="file of extra English/Spanish words banned from keywords")
    args = ap.parse_args(argv)
    extra = read_word_file(args.foreign_words) if args.foreign_words else ()
    rep, summary = validate(args.folder, args.prefix, extra)
    print(summary)
    for w in rep.warnings:
        print("WARNING:", w)
    if rep.errors:
        print(f"\n{len(rep.errors)} error(s):")
        for e in rep.errors:
            print("  -", e)
        return 1
    print("OK: catalog is valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
