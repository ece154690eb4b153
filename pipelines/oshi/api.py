"""The small HTTP API of the OSHI controller (WSGI app) and its client.

Served by the controller on a unix socket (and optionally TCP). JSON in, JSON out; errors are
``{"error": {"where", "problem", "fix"}}`` with status 400 (bad request), 404 (unknown), 409 (conflict),
500 (install failed, rolled back) or 503 (no path / no label / node offline).

    GET    /v1/status               nodes, links, re-route events
    GET    /v1/services             list of service records
    GET    /v1/services/<name>      one record and its flows per node
    POST   /v1/services[?dry_run=1] create (dry run: plan only, nothing installed or allocated) ({"name", "kind", "endpoints": [{"node","port","vlan"?}], "vss_mode"?})
    DELETE /v1/services/<name>      delete
"""
from __future__ import annotations

import contextlib
import http.client
import json
import socket
from typing import Callable

from harmless.errors import HarmlessError
from harmless.pipelines.oshi.manager import ServiceManager
from harmless.pipelines.oshi.services import ServiceError, service_flows

_REASONS = {200: "OK", 201: "Created", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
            409: "Conflict", 500: "Internal Server Error", 503: "Service Unavailable"}


def _record(rec, flows: bool = False) -> dict:
    d = rec.model_dump(mode="json")
    d["cookie"] = f"{rec.cookie:#x}"
    if flows:
        d["flows"] = {n: [f.to_ofctl() for f in fl] for n, fl in service_flows(rec).items()}
    return d


def make_app(manager: ServiceManager, status: Callable[[], dict], lock=None) -> Callable:
    """WSGI application over ``manager``; ``status()`` gives the /v1/status body; ``lock`` (a context manager)
    serialises changes with the controller's own (re-route, audit)."""
    lock = lock or contextlib.nullcontext()

    def handle(method: str, path: str, body: bytes, query: str = "") -> tuple[int, object]:
        with lock:
            return _handle(method, path, body, "dry_run=1" in query.split("&"))

    def _handle(method: str, path: str, body: bytes, dry_run: bool) -> tuple[int, object]:
        parts = [p for p in path.split("/") if p]
        if parts[:1] != ["v1"]:
            return 404, {"error": {"where": path, "problem": "unknown path", "fix": "use /v1/status or /v1/services"}}
        if parts[1:] == ["status"] and method == "GET":
            return 200, status()
        if parts[1:2] != ["services"]:
            return 404, {"error": {"where": path, "problem": "unknown path", "fix": "use /v1/services"}}
        try:
            if len(parts) == 2 and method == "GET":
                return 200, [_record(r) for r in manager.list()]
            if len(parts) == 2 and method == "POST":
                try:
                    data = json.loads(body or b"{}")
                except ValueError as e:
                    raise ServiceError("body", f"not JSON ({e})", "send a JSON object") from None
                if not isinstance(data, dict):
                    raise ServiceError("body", "not a JSON object", "send {\"name\":..., \"kind\":..., ...}")
                return (200 if dry_run else 201), _record(manager.create(data, dry_run=dry_run), flows=True)
            if len(parts) == 3 and method == "GET":
                return 200, _record(manager.get(parts[2]), flows=True)
            if len(parts) == 3 and method == "DELETE":
                return 200, _record(manager.delete(parts[2]))
        except ServiceError as e:
            return e.status, {"error": {"where": e.where, "problem": e.problem, "fix": e.fix}}
        return 405, {"error": {"where": path, "problem": f"method {method} not allowed", "fix": "see the API doc"}}

    def app(environ, start_response):
        n = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(n) if n else b""
        code, obj = handle(environ["REQUEST_METHOD"], environ.get("PATH_INFO", "/"), body,
                           environ.get("QUERY_STRING", ""))
        data = json.dumps(obj).encode()
        start_response(f"{code} {_REASONS.get(code, '')}", [("Content-Type", "application/json"),
                                                            ("Content-Length", str(len(data)))])
        return [data]

    app.handle = handle   # for unit tests
    return app


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


class ApiClient:
    """Client of the API. ``url``: ``unix:/path/to/api.sock`` or ``http://host:port``.

    Raises:
        HarmlessError: the controller cannot be reached; a ServiceError-shaped answer raises ServiceError.
    """

    def __init__(self, url: str, timeout: float = 60):
        self.url, self.timeout = url, timeout

    def _conn(self):
        if self.url.startswith("unix:"):
            return _UnixConnection(self.url[5:], self.timeout)
        host = self.url.split("://", 1)[-1].rstrip("/")
        return http.client.HTTPConnection(host, timeout=self.timeout)

    def request(self, method: str, path: str, body: dict | None = None):
        c = self._conn()
        try:
            c.request(method, path, body=json.dumps(body) if body is not None else None,
                      headers={"Content-Type": "application/json"})
            r = c.getresponse()
            data = json.loads(r.read() or b"null")
        except OSError as e:
            raise HarmlessError("oshi api", f"cannot reach the OSHI controller at {self.url} ({e})",
                                "is the lab up? (harmless oshi status)") from None
        finally:
            c.close()
        if r.status >= 400:
            err = (data or {}).get("error", {})
            raise ServiceError(err.get("where", path), err.get("problem", f"HTTP {r.status}"), err.get("fix", ""),
                               r.status)
        return data

    def status(self) -> dict:
        return self.request("GET", "/v1/status")

    def services(self) -> list[dict]:
        return self.request("GET", "/v1/services")

    def service(self, name: str) -> dict:
        return self.request("GET", f"/v1/services/{name}")

    def create(self, body: dict) -> dict:
        return self.request("POST", "/v1/services", body)

    def delete(self, name: str) -> dict:
        return self.request("DELETE", f"/v1/services/{name}")
