"""Any OpenAI-compatible ``/chat/completions`` endpoint over plain HTTP.

Works with OpenAI, vLLM, Ollama and llama.cpp servers. Uses the standard
library (``http.client``) on purpose: one POST with a timeout does not justify a
client dependency. Every failure becomes ``ProviderUnavailable`` with a short
reason code; transient ones (network, timeout, 429, 5xx) are retried
``max_retries`` times with a short backoff.

Each thread keeps its connection to the endpoint open between calls (HTTP/1.1
keep-alive): a new TCP (and TLS) connection per call cost the server and the
model's host CPU on every turn. A kept connection the server has closed since
(its idle timeout) fails before any response arrives; the call is then sent
once more on a new connection, without counting as an attempt. With a proxy
configured for the endpoint (``HTTP_PROXY``/``HTTPS_PROXY``, not bypassed by
``NO_PROXY``) the call goes through ``urllib``, which honours it, one connection
per call as before.
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from .base import LLMRequest, LLMResult, ProviderUnavailable
from .config import LLMSettings

# Request options an agent may pass through to the endpoint (admin JSON).
PASS_THROUGH_OPTIONS = ("temperature", "top_p", "max_tokens", "seed", "stop", "response_format")
RETRY_BACKOFF_SECONDS = 0.25
MAX_RESPONSE_BYTES = 4 * 1024 * 1024  # a chat reply is never this large; refuse to buffer more


class _Transient(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _closed_by_peer(connection: http.client.HTTPConnection) -> bool:
    """Whether a kept, idle connection can no longer carry a request: its socket is gone or is
    readable (the peer's FIN, or bytes nobody asked for), checked without waiting."""
    sock = connection.sock
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


class OpenAICompatibleProvider:
    name = "openai"

    def __init__(self, settings: LLMSettings, *, sleep=time.sleep):
        self.settings = settings
        self.endpoint = settings.base_url.rstrip("/") + "/chat/completions"
        self._sleep = sleep
        url = urllib.parse.urlsplit(self.endpoint)
        self._https = url.scheme == "https"
        self._host, self._port = url.hostname or "", url.port
        self._path = url.path + (f"?{url.query}" if url.query else "")
        proxies = urllib.request.getproxies()
        self._proxied = bool(proxies.get(url.scheme)) and not urllib.request.proxy_bypass(url.netloc)
        self._local = threading.local()  # this thread's kept-alive connection
        self.connections_opened = 0

    def _payload(self, request: LLMRequest) -> bytes:
        body: dict[str, Any] = {
            "model": request.model or self.settings.model,
            "messages": [m.as_dict() for m in request.messages],
            "stream": False,
        }
        for key in PASS_THROUGH_OPTIONS:
            if key in request.options:
                body[key] = request.options[key]
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        return headers

    def _post_once(self, payload: bytes) -> bytes:
        if self._proxied or not self._host:
            return self._post_once_urllib(payload)
        for fresh in self._connection_attempts():
            connection = self._connection(fresh)
            try:
                connection.request("POST", self._path, body=payload, headers=self._headers())
            except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
                self._drop()
                if fresh:
                    raise _Transient("network") from None
                continue  # the kept connection was gone before the request left: send it on a new one
            except (socket.timeout, TimeoutError):
                self._drop()
                raise _Transient("timeout") from None
            except Exception:  # OSError, ...
                self._drop()
                raise _Transient("network") from None
            try:
                response = connection.getresponse()
                raw = response.read(MAX_RESPONSE_BYTES + 1)
            except (socket.timeout, TimeoutError):
                self._drop()
                raise _Transient("timeout") from None
            except Exception:  # RemoteDisconnected, IncompleteRead, BadStatusLine, OSError, ...
                # The request went out and the server may have acted on it: never sent again for
                # free, only by the retry policy (counted as an attempt).
                self._drop()
                raise _Transient("network") from None
            if response.will_close or not response.isclosed():
                self._drop()  # the server ends it, or the body was not read to its end
            if response.status == 429 or response.status >= 500:
                raise _Transient(f"http_{response.status}")
            if response.status >= 400:
                raise ProviderUnavailable(f"http_{response.status}")
            return raw
        raise AssertionError("unreachable")

    def _connection_attempts(self):
        yield getattr(self._local, "connection", None) is None
        yield True

    def _connection(self, fresh: bool) -> http.client.HTTPConnection:
        connection = getattr(self._local, "connection", None)
        if connection is not None and not fresh and _closed_by_peer(connection):
            fresh = True  # an idle timeout closed it: found before sending, not after
        if connection is None or fresh:
            self._drop()
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            connection = self._local.connection = cls(self._host, self._port, timeout=self.settings.timeout)
            self.connections_opened += 1
        return connection

    def _drop(self) -> None:
        connection = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is not None:
            connection.close()

    def _post_once_urllib(self, payload: bytes) -> bytes:
        http_request = urllib.request.Request(self.endpoint, data=payload, headers=self._headers(), method="POST")
        try:
            with urllib.request.urlopen(http_request, timeout=self.settings.timeout) as response:
                return response.read(MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as exc:
            exc.close()
            if exc.code == 429 or exc.code >= 500:
                raise _Transient(f"http_{exc.code}") from None
            raise ProviderUnavailable(f"http_{exc.code}") from None
        except (socket.timeout, TimeoutError):
            raise _Transient("timeout") from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (socket.timeout, TimeoutError)):
                raise _Transient("timeout") from None
            raise _Transient("network") from None
        except (ConnectionError, OSError):
            raise _Transient("network") from None
        except Exception:  # http.client.IncompleteRead, BadStatusLine, ...
            raise _Transient("network") from None

    @staticmethod
    def _parse(raw: bytes) -> tuple[str, str, dict]:
        if len(raw) > MAX_RESPONSE_BYTES:
            raise ProviderUnavailable("response_too_large")
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ProviderUnavailable("malformed_body") from None
        if not isinstance(data, dict):
            raise ProviderUnavailable("malformed_body")
        choices = data.get("choices")
        if choices is None:
            raise ProviderUnavailable("malformed_body")
        if not isinstance(choices, list) or not choices:
            raise ProviderUnavailable("empty_choices")
        first = choices[0]
        message = first.get("message") if isinstance(first, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise ProviderUnavailable("malformed_body")
        if not content.strip():
            raise ProviderUnavailable("empty_reply")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        model = data.get("model") if isinstance(data.get("model"), str) else ""
        return content, model, usage

    def complete(self, request: LLMRequest) -> LLMResult:
        payload = self._payload(request)
        started = time.monotonic()
        attempts = 0
        reason = "network"
        while attempts <= self.settings.max_retries:
            if attempts:
                self._sleep(RETRY_BACKOFF_SECONDS * (2 ** (attempts - 1)))
            attempts += 1
            try:
                raw = self._post_once(payload)
            except _Transient as exc:
                reason = exc.reason
                continue
            except ProviderUnavailable as exc:
                exc.attempts = attempts
                exc.duration_ms = _ms_since(started)
                raise
            try:
                content, model, usage = self._parse(raw)
            except ProviderUnavailable as exc:
                exc.attempts = attempts
                exc.duration_ms = _ms_since(started)
                raise
            return LLMResult(
                text=content,
                model=model or request.model or self.settings.model,
                duration_ms=_ms_since(started),
                attempts=attempts,
                usage=usage,
            )
        raise ProviderUnavailable(reason, attempts=attempts, duration_ms=_ms_since(started))


def _ms_since(started: float) -> int:
    return int(round((time.monotonic() - started) * 1000))
