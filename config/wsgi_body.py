"""Read the request body completely, in bounded time, before Django sees the request.

- ``Transfer-Encoding: chunked``: Django reads ``CONTENT_LENGTH`` bytes, and a
  chunked request has none, so its body was read as empty (a misleading 400
  "message: This field is required"). When the server de-chunks the input
  (gunicorn says so with ``wsgi.input_terminated``) the body is read here, up
  to the size limit, and handed on with its real length; a server that cannot
  (runserver) answers 411 Length Required instead of pretending.
- A body shorter than its ``Content-Length``: the read stalls until the
  server's read timeout (config/gunicorn_worker.py) and is answered 408, not
  left hanging, and never half-parsed.
"""

import io
import json
import logging

logger = logging.getLogger(__name__)


def _error(start_response, status: str, code: str, message: str, details: dict | None = None):
    body = json.dumps({"error": {"code": code, "message": message, "details": details or {}}}).encode()
    # No "Connection: close": a hop-by-hop header is the server's to set (wsgiref refuses it).
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]


class RequestBodyMiddleware:
    def __init__(self, app, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    def __call__(self, environ, start_response):
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = -1  # Django's body-size middleware answers it
        if chunked:
            if not environ.get("wsgi.input_terminated"):
                return _error(
                    start_response,
                    "411 Length Required",
                    "LENGTH_REQUIRED",
                    "This server needs a Content-Length header (chunked request bodies are not supported here).",
                )
            try:
                body = environ["wsgi.input"].read(self.max_bytes + 1)
            except Exception:  # noqa: BLE001 - a stalled or broken upload, whatever the server raises
                return self._timeout(start_response)
            if len(body) > self.max_bytes:
                return _error(
                    start_response,
                    "413 Request Entity Too Large",
                    "REQUEST_TOO_LARGE",
                    "The request body is too large.",
                    {"limit_bytes": self.max_bytes},
                )
            environ["CONTENT_LENGTH"] = str(len(body))
            environ["wsgi.input"] = io.BytesIO(body)
        elif 0 < length <= self.max_bytes:
            try:
                body = environ["wsgi.input"].read(length)
            except Exception:  # noqa: BLE001
                return self._timeout(start_response)
            if len(body) < length:
                return self._timeout(start_response)
            environ["wsgi.input"] = io.BytesIO(body)
        return self.app(environ, start_response)

    def _timeout(self, start_response):
        logger.warning("request.body_incomplete status=408")
        return _error(
            start_response,
            "408 Request Timeout",
            "REQUEST_TIMEOUT",
            "The request body did not arrive completely in time.",
        )
