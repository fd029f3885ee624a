"""Who may do what: bearer tokens resolved to grants, and the one check of a grant.

Every interface asks the same question before it touches a store: may this
token do this action (``read``, ``write`` or ``admin``) on this store? HTTP
routes ask it through their ``store`` dependency, MCP tools in the server's
``call_tool``; both call ``Grant.check``, so the rules live here once:

- a token opens the stores it lists (``"*"``: all of them);
- a read-only token may only read;
- deletion for good (journal events, facts, stores, forget-about) and the
  audit log need ``admin``; ``server.bearer_token`` is an admin of every store.
  A writer may flag a fact to forget, but the flag records the grant's
  ``admin`` (``acting_as``) and a run purges only for an admin's flag.

Tokens are compared as SHA-256 digests with ``hmac.compare_digest``, against
every configured token whatever matches first, so the time taken tells
nothing about which token (or how much of one) matched. A token is never
logged or stored; its ``id`` is what the audit log records.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from halls.config import ServerSettings
from halls.errors import Forbidden

Action = Literal["read", "write", "admin"]

__all__ = ["Action", "Grant", "Tokens"]


@dataclass(frozen=True)
class Grant:
    """What one token may do. ``stores`` None: every store."""

    id: str | None
    stores: frozenset[str] | None = None
    read_only: bool = False
    admin: bool = False

    @classmethod
    def everything(cls, id: str | None = None) -> Grant:
        """An open server (no token configured), or the operator's own token."""
        return cls(id=id, admin=True)

    def opens(self, store: str) -> bool:
        return self.stores is None or store in self.stores

    def visible(self, names: Iterable[str]) -> list[str]:
        """The names among ``names`` this grant opens."""
        return [n for n in names if self.opens(n)]

    @property
    def global_admin(self) -> bool:
        """Admin of every store: may read the whole audit log and delete any store."""
        return self.admin and self.stores is None and not self.read_only

    def check(self, store: str, action: Action) -> None:
        """Raise ``Forbidden`` unless this grant may do ``action`` on ``store``."""
        if not self.opens(store):
            raise Forbidden(f"this token does not open store '{store[:70]}'")
        if action != "read" and self.read_only:
            raise Forbidden("this token is read-only")
        if action == "admin" and not self.admin:
            raise Forbidden("this needs an admin token")


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class Tokens:
    """The configured tokens; ``resolve`` turns a presented token into its grant."""

    def __init__(self, settings: ServerSettings) -> None:
        self._known: list[tuple[bytes, Grant]] = []
        if settings.bearer_token is not None:
            raw = settings.bearer_token.get_secret_value()
            self._known.append((_digest(raw), Grant.everything("bearer_token")))
        for t in settings.tokens:
            raw = t.token.get_secret_value()
            digest = bytes.fromhex(raw[7:]) if raw.startswith("sha256:") else _digest(raw)
            stores = None if t.stores == "*" else frozenset(t.stores)
            self._known.append((digest, Grant(t.id, stores, t.read_only, t.admin)))

    @property
    def enabled(self) -> bool:
        """Whether any token is configured (else every request has every grant)."""
        return bool(self._known)

    def resolve(self, presented: str | None) -> Grant | None:
        """The grant of ``presented``; None for a missing or unknown token."""
        if not self._known:
            return Grant.everything()
        digest = _digest(presented or "")
        found: Grant | None = None
        for known, grant in self._known:
            # No early exit: every configured token is compared, every time.
            if hmac.compare_digest(known, digest) and presented is not None:
                found = grant
        return found
