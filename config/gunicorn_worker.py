"""gunicorn's threaded worker with a request-read timeout.

gthread already keeps idle and kept-alive sockets in its poller, off the thread
pool. But once a client has sent a first byte, a thread reads the rest of the
request with a blocking socket and no timeout: a client that stops half-way
through its headers (or sends a Content-Length larger than its body) held that
thread until it went away. Here every read on the client socket times out after
GUNICORN_READ_TIMEOUT seconds; the stalled connection is closed (headers) or
answered 408 (body, see config/wsgi_body.py) and the thread is free again.
"""

import os
import socket

from gunicorn.http.errors import NoMoreData
from gunicorn.workers import gthread

READ_TIMEOUT = float(os.environ.get("GUNICORN_READ_TIMEOUT", "15"))


class _ReadTimeoutSocket:
    """Delegates to the socket; a read that times out ends the request like a vanished client."""

    def __init__(self, sock: socket.socket):
        self._sock = sock

    def __getattr__(self, name):
        return getattr(self._sock, name)

    def recv(self, *args, **kwargs):
        try:
            return self._sock.recv(*args, **kwargs)
        except TimeoutError as exc:
            # gunicorn treats NoMoreData as a client gone away: logged at debug, connection closed.
            raise NoMoreData(b"") from exc


class ReadTimeoutConn(gthread.TConn):
    def init(self):
        # Wrapped before the parser is built, so every read of headers and body goes through it.
        if not self.cfg.is_ssl and not isinstance(self.sock, _ReadTimeoutSocket):
            self.sock = _ReadTimeoutSocket(self.sock)
        super().init()
        # handle() puts the socket back in blocking mode (no timeout) before every request.
        self.sock.settimeout(READ_TIMEOUT)


class ReadTimeoutThreadWorker(gthread.ThreadWorker):
    def accept(self, listener):
        # gthread.ThreadWorker.accept, creating our connection class.
        try:
            client_sock, client_addr = listener.accept()
        except OSError as exc:
            if exc.errno not in (gthread.errno.EAGAIN, gthread.errno.ECONNABORTED, gthread.errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        client_sock.setblocking(True)
        self.enqueue_req(ReadTimeoutConn(self.cfg, client_sock, client_addr, listener.getsockname()))
