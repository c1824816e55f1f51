"""gunicorn's threaded worker, where a slow client costs a socket, never a thread.

Stock gthread keeps idle sockets in its poller, but hands a connection to a
thread on its first byte; the thread then reads the rest of the request head
with a blocking socket and no timeout. Fifty clients that stop half-way through
their headers held every thread, and /healthz waited behind them.

Here the worker's main loop (the poller) reads the request head itself, without
blocking, and hands the connection to a thread only once the head is complete
(``\\r\\n\\r\\n`` seen), giving the parser the bytes already read. A head that
does not complete within GUNICORN_READ_TIMEOUT seconds is dropped by the main
loop. Inside the thread every socket read also times out after
GUNICORN_READ_TIMEOUT, so a body shorter than its Content-Length is answered 408
(config/wsgi_body.py) instead of holding the thread.
"""

import errno
import os
import selectors
import socket
import time
from collections import deque
from functools import partial

from gunicorn.http.errors import NoMoreData
from gunicorn.workers import gthread

READ_TIMEOUT = float(os.environ.get("GUNICORN_READ_TIMEOUT", "15"))
# Larger heads go to the parser as they are (it enforces limit_request_line / _fields).
MAX_HEAD_BYTES = 64 * 1024
_HEAD_END = b"\r\n\r\n"


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
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.head = bytearray()
        self.head_deadline = 0.0

    def init(self):
        # Wrapped before the parser is built, so every read of headers and body goes through it.
        if not self.cfg.is_ssl and not isinstance(self.sock, _ReadTimeoutSocket):
            self.sock = _ReadTimeoutSocket(self.sock)
        super().init()
        if self.head:
            # The bytes the poller already read belong to the request: give them to the parser.
            self.parser.unreader.unread(bytes(self.head))
            self.head.clear()
        # handle() puts the socket back in blocking mode (no timeout) before every request.
        self.sock.settimeout(READ_TIMEOUT)


class ReadTimeoutThreadWorker(gthread.ThreadWorker):
    def init_process(self):
        self.heads_pending: deque[ReadTimeoutConn] = deque()
        super().init_process()

    def accept(self, listener):
        try:
            client_sock, client_addr = listener.accept()
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        conn = ReadTimeoutConn(self.cfg, client_sock, client_addr, listener.getsockname())
        if self.cfg.is_ssl:  # TLS needs the handshake first: the stock path
            client_sock.setblocking(True)
            self.enqueue_req(conn)
            return
        self._wait_for_head(conn)

    def on_client_socket_readable(self, conn, client):
        # A kept-alive connection starting its next request: the same rule as a new one.
        self.poller.unregister(client)
        self.keepalived_conns.remove(conn)
        if self.cfg.is_ssl or not isinstance(conn, ReadTimeoutConn):
            self.enqueue_req(conn)
            return
        self._wait_for_head(conn)
        self._read_head(conn, client)

    def _wait_for_head(self, conn: ReadTimeoutConn) -> None:
        conn.sock.setblocking(False)
        conn.head_deadline = time.monotonic() + READ_TIMEOUT
        self.heads_pending.append(conn)
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._read_head, conn))

    def _read_head(self, conn: ReadTimeoutConn, client) -> None:
        try:
            data = conn.sock.recv(8192)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # the client went away
            self._drop_head(conn)
            return
        conn.head += data
        if _HEAD_END in conn.head or len(conn.head) >= MAX_HEAD_BYTES:
            self.poller.unregister(conn.sock)
            self.heads_pending.remove(conn)
            conn.data_ready = True
            conn.sock.setblocking(True)
            self.enqueue_req(conn)

    def _drop_head(self, conn: ReadTimeoutConn) -> None:
        try:
            self.poller.unregister(conn.sock)
        except (KeyError, ValueError, OSError):
            pass
        try:
            self.heads_pending.remove(conn)
        except ValueError:
            pass
        self.nr_conns -= 1
        conn.close()

    def murder_pending(self):
        super().murder_pending()
        now = time.monotonic()
        while self.heads_pending and self.heads_pending[0].head_deadline <= now:
            self._drop_head(self.heads_pending[0])
