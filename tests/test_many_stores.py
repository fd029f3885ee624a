"""Many stores on one server stay within a small descriptor limit (scripts/many_stores.py).

The full run (2,000 stores under `ulimit -n 1024`) is in docs/reliability.md;
this is the same script, scaled down so that it fits a test: far more stores
than `storage.max_open_stores`, under a limit the old, unbounded server ran
out of (every request then answered 500).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

# ~7 s: hundreds of stores opened and closed; CI and `make test-all` run it.
pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "many_stores.py"


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("many_stores", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_120_stores_under_256_descriptors(tmp_path: Path) -> None:
    """120 stores written and searched, then 20 again: no error, descriptors bounded."""
    data = tmp_path / "data"
    data.mkdir()
    got = _script().run(stores=120, again=20, max_open=8, nofile=256, data_dir=data)
    assert got["errors"] == {}, got
    assert got["stores_listed"] == 120, got
    # 8 open stores' connections on top of what the server holds at start.
    assert got["max_fds"] <= got["fds_at_start"] + 8 * 8, got


def test_when_descriptors_run_out_the_answer_is_503_never_500(tmp_path: Path) -> None:
    """Without a useful bound, under 128 descriptors: 503 with Retry-After, not a 500."""
    data = tmp_path / "data"
    data.mkdir()
    got = _script().run(stores=60, again=0, max_open=100_000, nofile=128, data_dir=data)
    assert got["errors"].get("503", 0) > 0, got  # the limit was reached
    assert set(got["errors"]) <= {"503", "404"}, got  # 404: a store whose write failed
