"""The API's JSON parser: depth-limited and refusing text the database cannot store."""

import json

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from common.input_guard import MAX_JSON_DEPTH, JsonTooDeepError, check_json_value, json_depth_exceeds


def _reject_constant(name: str):
    raise ParseError(f"JSON parse error - {name} is not a valid JSON value.")


class GuardedJSONParser(JSONParser):
    """A view may name top-level keys it validates itself (``json_guard_delegated_keys``):
    the turn endpoint's context engine answers INVALID_CONTEXT naming the context field.
    The depth limit applies to the whole document regardless."""

    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        raw = stream.read() if stream is not None else b""
        if json_depth_exceeds(raw):
            raise JsonTooDeepError(
                f"JSON nesting deeper than {MAX_JSON_DEPTH} levels is not accepted.",
                details={"max_depth": MAX_JSON_DEPTH},
            )
        try:
            data = json.loads(raw.decode(encoding), parse_constant=_reject_constant)
        except (UnicodeDecodeError, ValueError) as exc:
            # The position only: the message of a JSON error quotes the body.
            raise ParseError("JSON parse error - the body is not valid JSON.") from exc
        delegated = getattr(parser_context.get("view"), "json_guard_delegated_keys", frozenset())
        check_json_value(data, frozenset(delegated))
        return data
