"""A client of a running halls server's HTTP API.

Shared by the adapters that talk to a server instead of opening the store
themselves: MCP's ``RemoteBackend`` (``halls mcp --server-url``) and the
CLI's everyday commands when a server answers. It imports no model, no
store and no web framework, so that a command on this path starts in a
fraction of a second. HTTP error bodies come back as the ``HallsError``
they stand for, so callers handle one error tree either way.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import httpx

from halls import errors as e

# A server on this machine answers /healthz in about a millisecond; anything
# slower than this is not worth waiting for before opening the store here.
PROBE_SECONDS = 0.5


def error_from_wire(code: str, message: str) -> e.HallsError:
    """The HallsError that an HTTP error body ``{"error": {code, message}}`` stands for."""
    classes: list[type[e.HallsError]] = [e.HallsError]
    i = 0
    while i < len(classes):
        classes.extend(classes[i].__subclasses__())
        i += 1
    for cls in classes:
        if cls.code == code:
            return cls(message)
    # Framework-level refusals (422 validation, 413 size) are bad input too.
    if code in ("invalid_request", "invalid_json", "too_large"):
        return e.InvalidInput(message)
    return e.HallsError(message)


def trusting_only(certfile: Path) -> ssl.SSLContext:
    """TLS that accepts exactly the certificates of ``certfile``, whatever name they are for.

    For the CLI reaching the server of its own config (``server.tls_certfile``)
    on loopback: the certificate names the public host, not 127.0.0.1, so it
    is pinned instead of checked by name. Raises OSError or ssl.SSLError.
    """
    context = ssl.create_default_context(cafile=str(certfile))
    context.check_hostname = False
    # The file's own certificate is the anchor, even when it is a CA-signed leaf.
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    return context


class HallsClient:
    """Blocking calls to one halls server; errors as ``HallsError``."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        timeout: float = 60.0,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.base_url = base_url.rstrip("/")
        self._client = httpx.Client(
            base_url=self.base_url, headers=headers, timeout=timeout, verify=verify
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> HallsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def answers(self, timeout: float = PROBE_SECONDS) -> bool:
        """Whether a halls server answers at the URL (``/healthz``, within ``timeout``)."""
        try:
            response = self._client.get("/healthz", timeout=timeout)
            return bool(response.json() == {"status": "ok"})
        except (httpx.HTTPError, ValueError):
            return False

    def call(
        self, method: str, path: str, store: str | None, body: Any = None, **params: Any
    ) -> Any:
        """One request; the decoded JSON answer, or the HallsError of an error body."""
        query = {k: v for k, v in {"store": store, **params}.items() if v is not None}
        try:
            response = self._client.request(method, path, params=query, json=body)
        except httpx.HTTPError:
            raise e.HallsError(
                f"cannot reach the halls server at {self.base_url}; is `halls serve` running?"
            ) from None
        if response.status_code >= 400:
            try:
                err = response.json()["error"]
                raise error_from_wire(str(err["code"]), str(err["message"]))
            except (ValueError, KeyError, TypeError):
                raise e.HallsError(
                    f"the halls server answered {response.status_code} to {method} {path}"
                ) from None
        return response.json() if response.content else None

    def download(
        self, path: str, store: str | None, body: Any, out: IO[bytes], **params: Any
    ) -> None:
        """POST and stream the answer's bytes into ``out`` (an export, a backup)."""
        query = {k: v for k, v in {"store": store, **params}.items() if v is not None}
        try:
            with self._client.stream("POST", path, params=query, json=body) as response:
                if response.status_code >= 400:
                    response.read()
                    self._raise(response, path)
                for chunk in response.iter_bytes():
                    out.write(chunk)
        except httpx.HTTPError:
            raise e.HallsError(f"the halls server at {self.base_url} failed mid-transfer") from None

    def upload(
        self,
        path: str,
        store: str | None,
        source: IO[bytes],
        headers: dict[str, str] | None = None,
        **params: Any,
    ) -> Any:
        """POST ``source`` as the raw body, streamed (an import); the JSON answer."""
        query = {k: v for k, v in {"store": store, **params}.items() if v is not None}

        def chunks() -> Iterator[bytes]:
            while chunk := source.read(1 << 16):
                yield chunk

        try:
            response = self._client.post(
                path, params=query, content=chunks(), headers=headers or {}
            )
        except httpx.HTTPError:
            raise e.HallsError(f"the halls server at {self.base_url} failed mid-transfer") from None
        if response.status_code >= 400:
            self._raise(response, path)
        return response.json()

    def _raise(self, response: httpx.Response, path: str) -> None:
        try:
            err = response.json()["error"]
            error = error_from_wire(str(err["code"]), str(err["message"]))
        except (ValueError, KeyError, TypeError):
            error = e.HallsError(f"the halls server answered {response.status_code} to {path}")
        raise error


__all__ = ["PROBE_SECONDS", "HallsClient", "error_from_wire"]
