"""A logging filter that keeps personal data out of every log line, error path included.

Exception messages are data, not code: a database driver's error quotes the SQL
and its parameters ("DETAIL: Failing row contains (..., 'Ana Souza CPF
123.456.789-09', ...)"), a ValueError may quote user input. On every record
passing a handler this filter keeps the traceback's frames (file, line,
function, source line) and each exception's type, and drops every exception
message; exceptions passed as log arguments become their type name; the SQL
debug log keeps only its duration and alias (never the statement or params).
"""

import logging
import traceback

REDACTED = "[message redacted]"


def redacted_traceback(exc: BaseException) -> str:
    """The exception's traceback (its chain too) with every frame and type but no message: for a log
    line that must show where a failure happened, whatever handler (with this filter or not) gets it."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    lines: list[str] = []
    for position, item in enumerate(reversed(chain)):
        if position:
            lines.append("\nThe above exception led to the following exception:\n\n")
        lines.append("Traceback (most recent call last):\n")
        lines.extend(traceback.format_tb(item.__traceback__))
        kind = type(item)
        lines.append(f"{kind.__module__}.{kind.__qualname__}: {REDACTED}\n")
    return "".join(lines).rstrip("\n")


class RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("django.db.backends") and hasattr(record, "sql"):
            duration = getattr(record, "duration", 0.0) or 0.0
            record.msg = "db.query duration_ms=%.1f alias=%s"
            record.args = (duration * 1000, getattr(record, "alias", "default"))
            record.sql = record.params = None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redacted_traceback(record.exc_info[1])
            record.exc_info = None
        elif record.exc_text and not record.exc_text.endswith(REDACTED):
            # Already formatted elsewhere (e.g. a record from another process): keep the frames only.
            head, _, _ = record.exc_text.rpartition("\n")
            record.exc_text = f"{head}\n{REDACTED}" if head else REDACTED
        if record.args:
            if isinstance(record.args, tuple):
                record.args = tuple(_safe_arg(a) for a in record.args)
            elif isinstance(record.args, dict):
                record.args = {k: _safe_arg(v) for k, v in record.args.items()}
        if isinstance(record.msg, BaseException):
            record.msg = type(record.msg).__qualname__
        return True


def _safe_arg(value):
    if isinstance(value, BaseException):
        return type(value).__qualname__
    return value


def install_on_handlers(logger: logging.Logger | None = None) -> None:
    """Add the filter to every handler of ``logger`` (root by default), e.g. after Celery set its own up."""
    target = logger or logging.getLogger()
    for handler in target.handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
