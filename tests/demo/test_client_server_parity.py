"""contexto.js and the server agree on the limits they both enforce (no browser needed)."""

import json
import re
from pathlib import Path

from django.conf import settings

from conversations.context.redaction import DEFAULT_SENSITIVE_KEYS

CONTEXTO_JS = Path(settings.BASE_DIR) / "conversations" / "static" / "contexto" / "contexto.js"


def _js_constant(name: str) -> str:
    source = CONTEXTO_JS.read_text(encoding="utf-8")
    return re.search(rf"export const {name} = (.*?);\n", source, re.DOTALL).group(1)


def test_the_client_drops_every_key_the_server_masks_by_default():
    listed = _js_constant("SENSITIVE_KEYS").removeprefix("Object.freeze(").removesuffix(")")
    client_keys = set(json.loads(re.sub(r",\s*]", "]", listed)))
    assert set(DEFAULT_SENSITIVE_KEYS) <= client_keys, set(DEFAULT_SENSITIVE_KEYS) - client_keys


def test_the_client_size_limit_is_the_server_default():
    # CONTEXT_MAX_BYTES defaults to 5,120 (PRD §35); the client refuses the same before sending.
    assert int(_js_constant("CONTEXT_SIZE_LIMIT_BYTES")) == 5120
