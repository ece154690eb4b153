"""The agents' messages on the management network: authenticated, replay-checked, size-bounded.

One message is a JSON object (:class:`Message`) followed by its HMAC-SHA256 (RFC 2104) under the pair's shared secret
(``ha.secret_env``/``ha.secret_file``). Heartbeats are single UDP datagrams (``payload || mac``; a lost one is just a
missed interval, and no connection has to be re-established after the network comes back); requests and their
replies (state replication, take-over notices, teardown) go over TCP as frames ``length (4 bytes, big endian) ||
payload || mac``. A receiver drops a message whose MAC does not verify, that is from an unknown sender or not for it,
whose ``(boot, seq)`` it has seen (each agent start draws a random ``boot`` id and numbers its messages from 1), or
whose clock is more than :data:`MAX_SKEW_S` away from its own on the first message of a boot (a replayed recording
of an earlier run). The secret never appears in a message, a log line or an exception text.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import socket
import struct
import threading
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harmless.errors import HarmlessError, InputError

#: bytes of an HMAC-SHA256 tag
MAC_LEN = 32
#: the longest frame accepted (a replicated state with its originals: configs of a few MB at most)
MAX_FRAME = 64 * 1024 * 1024
#: the largest heartbeat datagram
MAX_DATAGRAM = 8192
#: how far (s) a new boot's first message may be from the receiver's clock
MAX_SKEW_S = 60.0
#: the shortest shared secret accepted (characters)
MIN_SECRET = 16


class WireError(HarmlessError):
    """A message could not be sent, or a reply was missing, unauthenticated or malformed."""


class Message(BaseModel):
    """One message between the two agents.

    Attributes:
        kind: ``hb`` (heartbeat), ``replicate``, ``fenced``, ``teardown``, ``status``, ``reply``.
        sender / to: server names (``ha.servers[].name``).
        boot: random id of the sender's agent run; seq: its message number in that run (from 1).
        t: the sender's wall clock (s since the epoch).
        re: in a ``reply``, the ``seq`` of the request it answers.
        body: the kind's content.
    """

    model_config = ConfigDict(extra="forbid")

    kind: str
    sender: str
    to: str
    boot: str
    seq: int = Field(ge=1)
    t: float
    re: int | None = None
    body: dict[str, Any] = Field(default_factory=dict)


def key(secret: str) -> bytes:
    """The HMAC key of a shared secret.

    Raises:
        InputError: the secret is shorter than :data:`MIN_SECRET` characters.
    """
    if len(secret) < MIN_SECRET:
        raise InputError("ha.secret", f"the shared secret has fewer than {MIN_SECRET} characters",
                         "write at least 16 random characters, e.g. the output of: openssl rand -hex 32")
    return secret.encode()


def seal(msg: Message, k: bytes) -> bytes:
    """``payload || mac`` of ``msg`` under key ``k``."""
    payload = msg.model_dump_json().encode()
    return payload + hmac.new(k, payload, hashlib.sha256).digest()


def unseal(data: bytes, k: bytes) -> Message | None:
    """The message in ``payload || mac``, or None when the MAC does not verify or the payload is malformed."""
    if len(data) <= MAC_LEN:
        return None
    payload, mac = data[:-MAC_LEN], data[-MAC_LEN:]
    if not hmac.compare_digest(mac, hmac.new(k, payload, hashlib.sha256).digest()):
        return None
    try:
        return Message.model_validate_json(payload)
    except ValidationError:
        return None


class Sender:
    """Numbers and seals this agent's messages (one ``boot`` id per run, ``seq`` from 1; thread-safe)."""

    def __init__(self, me: str, peer: str, k: bytes):
        self.me, self.peer, self.k = me, peer, k
        self.boot = os.urandom(8).hex()
        self._seq = 0
        self._lock = threading.Lock()

    def make(self, kind: str, body: dict | None = None, re: int | None = None) -> Message:
        with self._lock:
            self._seq += 1
            seq = self._seq
        return Message(kind=kind, sender=self.me, to=self.peer, boot=self.boot, seq=seq, t=time.time(), re=re,
                       body=body or {})

    def seal(self, kind: str, body: dict | None = None, re: int | None = None) -> tuple[Message, bytes]:
        m = self.make(kind, body, re)
        return m, seal(m, self.k)


class Guard:
    """Accepts each authentic message of the peer once (see the module doc); thread-safe."""

    def __init__(self, me: str, peer: str, k: bytes):
        self.me, self.peer, self.k = me, peer, k
        self._last: dict[str, int] = {}
        self._lock = threading.Lock()

    def accept(self, data: bytes) -> Message | None:
        """The message in ``data`` if it is authentic, from the peer, for this server and new; else None."""
        m = unseal(data, self.k)
        if m is None or m.sender != self.peer or m.to != self.me:
            return None
        with self._lock:
            last = self._last.get(m.boot)
            if last is None and abs(m.t - time.time()) > MAX_SKEW_S:
                return None
            if last is not None and m.seq <= last:
                return None
            self._last[m.boot] = m.seq
        return m


# ----------------------------------------------------------------------------- TCP frames
def send_frame(sock: socket.socket, data: bytes) -> None:
    """Write one frame (``length || data``)."""
    sock.sendall(struct.pack("!I", len(data)) + data)


def _read_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise ConnectionError("connection closed")
        buf += chunk
    return bytes(buf)


def recv_frame(sock: socket.socket) -> bytes:
    """Read one frame's data. Raises ConnectionError (closed, or longer than :data:`MAX_FRAME`)."""
    (n,) = struct.unpack("!I", _read_exact(sock, 4))
    if n > MAX_FRAME:
        raise ConnectionError(f"frame of {n} bytes is longer than {MAX_FRAME}")
    return _read_exact(sock, n)


def request(address: tuple[str, int], sender: Sender, guard: Guard, kind: str, body: dict,
            timeout: float) -> dict:
    """Send one request to the peer's agent over TCP and return its reply's body.

    Raises:
        WireError: the agent cannot be reached in ``timeout`` s, closed the connection, or its reply is not an
            authentic reply to this request (the message names the agent's address, never the secret).
    """
    where = f"ha agent at {address[0]}:{address[1]}"
    msg, data = sender.seal(kind, body)
    try:
        with socket.create_connection(address, timeout=timeout) as sock:
            sock.settimeout(timeout)
            send_frame(sock, data)
            reply = guard.accept(recv_frame(sock))
    except (OSError, ConnectionError) as e:
        raise WireError(where, f"no answer to {kind} ({e.strerror or e if isinstance(e, OSError) else e})",
                        "check that harmless ha agent runs on the peer and the management network between the "
                        "servers") from None
    if reply is None or reply.kind != "reply" or reply.re != msg.seq:
        raise WireError(where, f"the answer to {kind} is not an authentic reply",
                        "both servers must use the same ha secret (ha.secret_env / ha.secret_file)")
    return reply.body
