"""The package file format: Markdown with YAML front matter (DESIGN.md).

Parsing validates every field and names the file and field in its errors, so an
import can refuse a whole folder before writing anything.
"""

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from common.identifiers import PACKAGE_ID_RE, SEMANTIC_ID_RE

FRONT_MATTER_RE = re.compile(r"\A---\s*\n(?P<meta>.*?)\n---\s*\n?(?P<body>.*)\Z", re.DOTALL)
KINDS = ("knowledge", "rule", "procedure")
ALLOWED_KEYS = {"id", "title", "summary", "kind", "strict", "aliases", "keywords", "semantic_ids", "source"}


class PackageFileError(ValueError):
    def __init__(self, path: str, field: str, message: str):
        self.path, self.field, self.message = path, field, message
        super().__init__(f"{path}: {field}: {message}")


@dataclass(frozen=True)
class PackageFile:
    package_id: str
    data: dict  # the content fields of knowledge.models.CONTENT_FIELDS
    path: str


def _str_list(value, path: str, field: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) and str(v).strip() for v in value):
        raise PackageFileError(path, field, "must be a list of non-empty strings")
    seen: list[str] = []
    for v in value:
        s = str(v).strip()
        if s not in seen:
            seen.append(s)
    return seen


def parse_package_text(text: str, path: str = "<text>") -> PackageFile:
    match = FRONT_MATTER_RE.match(text.lstrip("\ufeff"))
    if not match:
        raise PackageFileError(path, "front matter", "missing '---' YAML front matter block")
    try:
        meta = yaml.safe_load(match.group("meta")) or {}
    except yaml.YAMLError as exc:
        raise PackageFileError(path, "front matter", f"invalid YAML ({exc.__class__.__name__})") from exc
    if not isinstance(meta, dict):
        raise PackageFileError(path, "front matter", "must be a mapping")
    unknown = sorted(set(map(str, meta)) - ALLOWED_KEYS)
    if unknown:
        raise PackageFileError(path, unknown[0], "unknown field")

    package_id = meta.get("id")
    if not isinstance(package_id, str) or not PACKAGE_ID_RE.match(package_id):
        raise PackageFileError(path, "id", "required, UPPER_SNAKE_CASE (e.g. PRICING_RULES)")
    data = clean_package_content({**meta, "body": match.group("body")}, path)
    return PackageFile(package_id=package_id, data=data, path=path)


def clean_package_content(meta: dict, path: str = "<input>") -> dict:
    """Validate and normalize the content fields; errors name the field."""
    for field in ("title", "summary"):
        value = meta.get(field)
        if not isinstance(value, str) or not value.strip():
            raise PackageFileError(path, field, "required, a non-empty string")
    if "\n" in meta["summary"].strip():
        raise PackageFileError(path, "summary", "must be one line")
    kind = meta.get("kind") or "knowledge"
    if kind not in KINDS:
        raise PackageFileError(path, "kind", f"must be one of {', '.join(KINDS)}")
    strict = meta.get("strict", False)
    if not isinstance(strict, bool):
        raise PackageFileError(path, "strict", "must be true or false")
    if strict and kind != "rule":
        raise PackageFileError(path, "strict", "only rules can be strict")
    semantic_ids = _str_list(meta.get("semantic_ids"), path, "semantic_ids")
    for sid in semantic_ids:
        if not SEMANTIC_ID_RE.match(sid):
            raise PackageFileError(path, "semantic_ids", f"'{sid}' is not a dotted semantic id")
    source = meta.get("source") or ""
    if not isinstance(source, str):
        raise PackageFileError(path, "source", "must be a string")
    body = meta.get("body")
    if not isinstance(body, str) or not body.strip():
        raise PackageFileError(path, "body", "must not be empty")
    # Browsers post textareas with CRLF and some editors save it: one body, one form,
    # or an unchanged admin save would look like an edit and write a revision.
    body = body.replace("\r\n", "\n").replace("\r", "\n")
    return {
        "title": meta["title"].strip(),
        "summary": meta["summary"].strip(),
        "kind": kind,
        "strict": strict,
        "aliases": _str_list(meta.get("aliases"), path, "aliases"),
        "keywords": _str_list(meta.get("keywords"), path, "keywords"),
        "semantic_ids": semantic_ids,
        "source": source.strip(),
        "body": body.strip(),
    }


def parse_package_file(path: Path) -> PackageFile:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise PackageFileError(str(path), "file", "not UTF-8 text") from exc
    return parse_package_text(text, str(path))


def package_files_in(directory: Path) -> list[Path]:
    """Markdown files of a folder in catalog order (file name order)."""
    return sorted(p for p in directory.glob("*.md") if p.is_file() and not p.name.startswith("."))


class _FrontMatterDumper(yaml.SafeDumper):
    """Writes YAML that reads back to the same strings.

    PyYAML folds a NEL (U+0085) inside a single-quoted scalar into spaces on load,
    so text pasted with one would change on an export/import round trip; such
    strings are written double-quoted, where the character is escaped.
    """


def _represent_str(dumper: yaml.SafeDumper, value: str):
    style = '"' if any(ch in value for ch in "\x85\u2028\u2029") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_FrontMatterDumper.add_representer(str, _represent_str)


def render_package_file(package_id: str, data: dict) -> str:
    meta = {"id": package_id}
    for field in ("title", "summary", "kind", "strict", "aliases", "keywords", "semantic_ids", "source"):
        meta[field] = data[field]
    front = yaml.dump(meta, Dumper=_FrontMatterDumper, allow_unicode=True, sort_keys=False, width=1000)
    return f"---\n{front}---\n{data['body'].strip()}\n"
