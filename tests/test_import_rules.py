"""The floors of docs/architecture.md, checked on the import graph (every import, function-local too)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = ("common", "accounts", "llm", "knowledge", "ontology", "explanations", "conversations", "actions", "mcp_server")

# importer -> apps it must never import. Floors: ground (common, accounts) < lower (llm)
# < middle (knowledge, ontology) < top (explanations, conversations).
# actions sits on the top floor above conversations' context engine, which it reads; the turn
# reaches actions through settings.TURN_ACTION_HANDLER only, so no app imports actions.
FORBIDDEN = {
    "common": {"accounts", "llm", "knowledge", "ontology", "explanations", "conversations", "actions"},
    "accounts": {"llm", "knowledge", "ontology", "explanations", "conversations", "actions"},
    "llm": {"knowledge", "ontology", "explanations", "conversations", "actions"},
    "knowledge": {"ontology", "explanations", "conversations", "actions"},
    "ontology": {"explanations", "conversations", "actions"},
    "explanations": {"conversations", "actions"},
    "conversations": {"actions"},
}
# The MCP server sits above everything (it composes the top floor's services); nothing imports it.
for _importer in ("common", "accounts", "llm", "knowledge", "ontology", "explanations", "conversations", "actions"):
    FORBIDDEN.setdefault(_importer, set()).add("mcp_server")
# Sideways across the middle floor only onto knowledge's pure retrieval core.
ALLOWED_PREFIXES = {("ontology", "knowledge"): ("knowledge.retrieval",)}


def imported_modules(tree: ast.AST, module: str) -> list[tuple[int, str]]:
    """(line, absolute module) for every import statement in the tree."""
    found = []
    package = module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.append((node.lineno, name))
    return found


def violations(app: str, module: str, source: str) -> list[str]:
    out = []
    for line, name in imported_modules(ast.parse(source), module):
        target = name.split(".")[0]
        if target in FORBIDDEN.get(app, ()):
            out.append(f"{module}:{line} imports {name}")
        elif (app, target) in ALLOWED_PREFIXES:
            allowed = ALLOWED_PREFIXES[(app, target)]
            if not any(name == p or name.startswith(p + ".") for p in allowed):
                out.append(f"{module}:{line} imports {name} (only {', '.join(allowed)} is shared)")
    return out


def _app_modules():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            relative = path.relative_to(ROOT).with_suffix("")
            module = ".".join(relative.parts)
            yield app, module, path


def test_every_app_imports_only_from_its_floor_or_below():
    found = []
    for app, module, path in _app_modules():
        found += violations(app, module, path.read_text(encoding="utf-8"))
    assert found == []


@pytest.mark.parametrize(
    ("app", "module", "source"),
    [
        ("knowledge", "knowledge.apis", "def f():\n    from ontology.services import ontology_route\n"),
        ("accounts", "accounts.services", "from knowledge.permissions import curators_group_ensure\n"),
        ("explanations", "explanations.llm_client", "import conversations.llm\n"),
        ("ontology", "ontology.routing.search", "from knowledge.selectors import package_list\n"),
        ("common", "common.text.analysis", "from ...conversations import models\n"),
        ("llm", "llm.offline", "from knowledge.retrieval import bm25\n"),
        ("conversations", "conversations.services.turns.action_step", "from actions.turn import turn_action\n"),
    ],
)
def test_the_check_sees_a_wrong_way_import_anywhere_in_a_module(app, module, source):
    assert violations(app, module, source)


def test_the_check_lets_ontology_use_the_pure_retrieval_core_and_apps_import_themselves():
    assert violations("ontology", "ontology.routing.search", "from knowledge.retrieval.bm25 import X\n") == []
    assert violations("knowledge", "knowledge.apis", "from .router import route_context\n") == []
    assert violations("conversations", "conversations.context_api", "from ontology.services import x\n") == []
