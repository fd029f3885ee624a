"""Install without a clone: the built wheel, in a clean venv, serves over HTTP.

The checkout is only the source of the build: the wheel is installed (no
``-e``) into a venv without system site packages, and everything runs from
an empty working directory, so nothing is imported from ``src/``. A file the
server reads at run time that the package data leaves out fails here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import httpx
import pytest

from conftest import free_port

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def clean_env() -> dict[str, str]:
    """This process's environment without its venv, its PYTHONPATH or any halls setting."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    return {k: v for k, v in os.environ.items() if not k.startswith("HALLS_") and k not in drop}


def run(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        argv,
        cwd=cwd,
        env={**clean_env(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"{argv}\n{done.stdout}\n{done.stderr}"
    return done


def wheel_contents(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        return set(zf.namelist())


def tracked_package_files() -> set[str]:
    """The files under src/halls that git tracks, as paths inside the wheel."""
    out = run(["git", "ls-files", "src/halls"], cwd=REPO).stdout.split()
    return {p.removeprefix("src/") for p in out}


def test_built_wheel_and_pipx_install_serve_without_the_checkout(tmp_path: Path) -> None:
    """`python -m build`, then pip into a fresh venv (the spaCy model first, by hash, as
    the Makefile does), then `<venv>/bin/halls serve`: a write is found by search. Then
    the same from `pipx install <checkout>`."""
    dist, cwd = tmp_path / "dist", tmp_path / "cwd"
    cwd.mkdir()
    # sdist first, then the wheel built from that sdist (build's default): the
    # sdist must carry everything the wheel needs.
    run([sys.executable, "-m", "build", "--outdir", str(dist), str(REPO)], cwd=cwd)
    [wheel] = dist.glob("halls-*.whl")
    assert len(list(dist.glob("halls-*.tar.gz"))) == 1

    # What ships: every tracked file of the package (code and run-time data:
    # the judge's models and lexicon, the embedder, the viewer, the bench
    # data), and nothing from training/ or tests/.
    names = wheel_contents(wheel)
    missing = tracked_package_files() - names
    assert not missing, f"left out of the wheel: {sorted(missing)}"
    outside = {n for n in names if not n.startswith(("halls/", "halls-"))}
    assert not outside, f"not halls' own files: {sorted(outside)}"
    assert not [n for n in names if "pairs_" in n or "cross_oof" in n or "report" in n]

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], cwd=cwd)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    nlp = REPO / "requirements-nlp.txt"
    run([*pip, "--no-deps", "--require-hashes", "-r", str(nlp)], cwd=cwd)
    run([*pip, str(wheel)], cwd=cwd)
    found = run([str(venv / "bin" / "python"), "-c", "import halls; print(halls.__file__)"], cwd)
    assert Path(found.stdout.strip()).is_relative_to(venv), found.stdout

    serve_and_check(venv / "bin" / "halls", tmp_path / "pip")

    # `pipx install <checkout>`, as the README says; one test with the build
    # above because both write the checkout's src/halls.egg-info.
    pipx_home = tmp_path / "pipx"
    pipx_env = {
        "PIPX_HOME": str(pipx_home / "home"),
        "PIPX_BIN_DIR": str(pipx_home / "bin"),
        "PIPX_MAN_DIR": str(pipx_home / "man"),
    }
    run([sys.executable, "-m", "pipx", "install", str(REPO)], cwd=cwd, env=pipx_env)
    serve_and_check(pipx_home / "bin" / "halls", pipx_home)


def serve_and_check(halls: Path, where: Path) -> None:
    """`halls serve` (this executable, from an empty cwd, on a fresh data dir): a write is
    found by search, a consolidation runs, /docs and the viewer answer; SIGTERM stops it."""
    port, cwd, log_path = free_port(), where / "serve-cwd", where / "server.log"
    cwd.mkdir(parents=True)
    argv = [str(halls), "serve", "--data-dir", str(where / "data"), "--port", str(port)]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=cwd, env=clean_env(), stdout=log, stderr=log)
        try:
            check_http(f"http://127.0.0.1:{port}", proc, log_path)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    # uvicorn shuts down cleanly on SIGTERM, then dies of the signal it caught.
    assert proc.returncode in (0, -signal.SIGTERM), log_path.read_text(errors="replace")
    assert "Application shutdown complete" in log_path.read_text(errors="replace")


def check_http(url: str, proc: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None, log_path.read_text(errors="replace")
        assert time.monotonic() < deadline, log_path.read_text(errors="replace")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    with httpx.Client(base_url=url, timeout=60) as c:
        text = "Chad prefers absolute paths"
        r = c.post("/short", params={"store": "wheel"}, json={"content": text})
        assert r.status_code == 201, r.text
        r = c.post(
            "/search", params={"store": "wheel"}, json={"query": "how does Chad like paths?"}
        )
        assert r.status_code == 200, r.text
        assert r.json()["results"][0]["content"] == text
        # A consolidation run (a dry run: nothing changes) in the installed package.
        r = c.post("/consolidate/run", params={"store": "wheel"}, json={"dry_run": True})
        assert r.status_code == 200, r.text
        r = c.get("/docs")
        assert r.status_code == 200 and "swagger" in r.text.lower()
        r = c.get("/viewer")  # the viewer's page: a package data file
        assert r.status_code == 200 and "<html" in r.text.lower()
