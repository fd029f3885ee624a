"""The ``halls`` command line, in-process (CliRunner) and as a real subprocess."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import halls
from halls import Memory, Settings
from halls.cli import main
from halls.config import EmbedderSettings, StorageSettings
from halls.embed import Embedder
from halls.models import NewJournal
from halls.service.stores import FINGERPRINT_KEY
from halls.store import open_backend
from openai_stub import OpenAIStub

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HALLS_")}
    env.update(extra)
    return env


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m halls ARGS`` as a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "halls", *args],
        env=env or clean_env(), cwd=REPO, capture_output=True, text=True, timeout=180,
    )  # fmt: skip


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    """The CLI in this process: same code path, without loading the model again."""
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def assert_one_line_error(stderr: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("Error: ")
    assert "Traceback" not in stderr


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


# -- entry points --


def test_python_m_halls_help_lists_the_commands() -> None:
    """`python -m halls --help` exits 0 and lists every core command."""
    proc = run("--help")
    assert proc.returncode == 0, proc.stderr
    for command in ("serve", "remember", "recall", "stores", "stats", "reembed", "doctor"):
        assert f"  {command} " in proc.stdout


def test_console_script_version() -> None:
    """The installed `halls --version` prints the package version."""
    script = Path(sys.executable).parent / "halls"
    proc = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60,
                          env=clean_env())  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"halls, version {halls.__version__}"


# -- remember and recall --


def test_remember_then_recall_round_trip(data: Path) -> None:
    """`remember` prints the new id; `recall --json` finds it by a paraphrase, parsable JSON."""
    d = ["--data-dir", str(data)]
    first = invoke("remember", "Chad prefers absolute paths in configs", "--store", "cli",
                   "--topic", "prefs", *d)  # fmt: skip
    assert first.exit_code == 0, first.output
    new_id = first.stdout.strip()
    assert new_id.startswith("s_") and len(new_id) == 28
    assert invoke("remember", "The cat sleeps on the radiator", "--store", "cli", *d).exit_code == 0

    res = invoke("recall", "how does Chad like paths written?", "--store", "cli", "--json", *d)
    assert res.exit_code == 0, res.output
    hits = json.loads(res.stdout)
    assert hits[0]["id"] == new_id
    assert hits[0]["content"] == "Chad prefers absolute paths in configs"
    assert hits[0]["topic"] == "prefs" and hits[0]["tier"] == "short"
    assert set(hits[0]["score_detail"]) >= {"relevance", "tier_weight", "recency"}
    assert hits[0]["score"] >= hits[-1]["score"]

    plain = invoke("recall", "Chad paths", "--store", "cli", "-n", "1", *d)
    assert plain.exit_code == 0
    assert plain.stdout.count("\n") == 1 and new_id in plain.stdout


def test_recall_several_stores(data: Path) -> None:
    """--store repeated: one merged list, each line naming its store; a missing store fails."""
    d = ("--data-dir", str(data))
    notes = {"mine": "Chad prefers absolute paths in configs",
             "team": "The team deploys the web app with Kamal on Fridays"}  # fmt: skip
    for store, text in notes.items():
        assert invoke("remember", text, "--store", store, *d).exit_code == 0
    res = invoke("recall", "how does the team deploy?", "--store", "mine", "--store", "team",
                 "--min-relevance", "0", "--json", *d)  # fmt: skip
    assert res.exit_code == 0, res.output
    hits = json.loads(res.stdout)
    assert [h["store"] for h in hits] == ["team", "mine"] and "Kamal" in hits[0]["content"]
    plain = invoke("recall", "how does the team deploy?", "--store", "mine", "--store", "team",
                   "-n", "1", "--min-relevance", "0", *d)  # fmt: skip
    assert plain.exit_code == 0 and "[team]  The team deploys" in plain.stdout
    gone = invoke("recall", "deploy", "--store", "mine", "--store", "nowhere", *d)
    assert gone.exit_code == 1 and "nowhere" in gone.stderr


def test_recall_with_nothing_found(data: Path) -> None:
    """A query with no match says so on stderr and exits 0."""
    res = invoke("recall", "anything", "--data-dir", str(data))
    assert res.exit_code == 0
    assert res.stdout == ""
    assert "no memories found" in res.stderr


def test_remember_pinned_and_occurred_at(data: Path) -> None:
    """--pinned and --occurred-at reach the stored entry."""
    res = invoke("remember", "pinned fact", "--pinned", "--occurred-at", "2024-01-02T03:04:05Z",
                 "--data-dir", str(data))  # fmt: skip
    assert res.exit_code == 0, res.output
    with Memory(Settings(data_dir=data)) as m:
        entry = m.get_short(res.stdout.strip())
    assert entry.pinned and entry.expires_at is None
    assert entry.occurred_at.isoformat() == "2024-01-02T03:04:05+00:00"


def test_remember_bad_input_is_one_line_error(data: Path) -> None:
    """A bad time or store name exits 1 with one line, and stores nothing."""
    res = invoke("remember", "x", "--occurred-at", "next week", "--data-dir", str(data))
    assert res.exit_code == 1
    assert_one_line_error(res.stderr)
    assert "occurred_at" in res.stderr
    res = invoke("remember", "   ", "--data-dir", str(data))
    assert res.exit_code == 1
    assert_one_line_error(res.stderr)
    assert json.loads(invoke("stats", "--data-dir", str(data)).stdout)["counts"]["short"] == 0


def test_recall_unknown_tier_is_one_line_error(data: Path) -> None:
    """An unknown --tier is refused with one line."""
    res = invoke("recall", "q", "--tier", "diary", "--data-dir", str(data))
    assert res.exit_code == 1
    assert_one_line_error(res.stderr)
    assert "journal" in res.stderr


def test_recall_tier_journal(data: Path) -> None:
    """`recall --tier journal` finds a journal event; without it, and for a private one, none."""
    with Memory(Settings(data_dir=data)) as m:
        m.journal(
            [
                NewJournal(content="the heron camera moved to the east pond"),
                NewJournal(content="heron nest password is blue", visibility="private"),
            ]
        )
    d = ["--data-dir", str(data), "--min-relevance", "0", "--json"]
    found = json.loads(invoke("recall", "heron camera east pond", "--tier", "journal", *d).stdout)
    assert [(h["tier"], h["content"]) for h in found] == [
        ("journal", "the heron camera moved to the east pond")
    ]
    default = invoke("recall", "heron camera east pond", *d)
    assert default.exit_code == 0 and json.loads(default.stdout) == []
    private = invoke("recall", "heron nest password is blue", "--tier", "journal", *d)
    assert private.exit_code == 0 and "password" not in private.stdout


# -- stores and stats --


def test_stores_create_and_list(data: Path) -> None:
    """`stores create` makes a store; `stores` and `stores list` print the names."""
    d = ["--data-dir", str(data)]
    assert invoke("stores", *d, "create", "alpha").stdout.strip() == "alpha"
    assert invoke("stores", *d, "create", "beta-2").exit_code == 0
    assert invoke("stores", *d).stdout.split() == ["alpha", "beta-2"]
    assert invoke("stores", *d, "list").stdout.split() == ["alpha", "beta-2"]


def test_stores_subcommands_take_data_dir_after_them(data: Path) -> None:
    """`stores create NAME --data-dir D` and `stores list --data-dir D` work as written."""
    res = invoke("stores", "create", "gamma", "--data-dir", str(data))
    assert res.exit_code == 0, res.output
    assert (data / "gamma.sqlite3").exists()
    assert invoke("stores", "list", "--data-dir", str(data)).stdout.split() == ["gamma"]


def test_stores_create_invalid_name_exits_nonzero(data: Path) -> None:
    """An invalid store name: non-zero exit, one-line error, no traceback, nothing made."""
    for bad in ("Bad Name", "../up", "-x", "two\nlines"):
        proc = run("stores", "--data-dir", str(data), "create", "--", bad)
        assert proc.returncode != 0
        assert_one_line_error(proc.stderr)
        assert "invalid store name" in proc.stderr
    assert not data.exists() or list(data.iterdir()) == []


def test_stats_prints_json(data: Path) -> None:
    """`stats` prints counts per tier, size and embedder as JSON."""
    d = ["--data-dir", str(data)]
    invoke("remember", "one", "--store", "s1", *d)
    invoke("remember", "two", "--store", "s1", *d)
    res = invoke("stats", "--store", "s1", *d)
    assert res.exit_code == 0, res.output
    stats = json.loads(res.stdout)
    assert stats["store"] == "s1"
    assert stats["counts"]["short"] == 2 and stats["counts"]["near"] == 0
    assert stats["size_bytes"] > 0
    assert stats["embedder"] == "all-MiniLM-L6-v2/onnx-int8-v3:384"


def _mark_embedded_by(data: Path, store: str, fingerprint: str) -> None:
    """Record ``fingerprint`` as the embedder of ``store``, as an earlier graph would have."""
    backend = open_backend(StorageSettings(), data)
    s = backend.open(store, False)
    try:
        s.set_meta(FINGERPRINT_KEY, fingerprint)
    finally:
        s.close()
        backend.close()


def _embedded_by(data: Path, store: str) -> str | None:
    backend = open_backend(StorageSettings(), data)
    s = backend.open(store, False)
    try:
        return s.get_meta(FINGERPRINT_KEY)
    finally:
        s.close()
        backend.close()


def test_serve_on_a_store_of_another_embedder_exits_with_one_line(
    data: Path, embedder: Embedder
) -> None:
    """A default store embedded by an earlier graph stops `halls serve` in one line
    that says how to re-embed it, before it listens, and is left as it was."""
    with Memory(Settings(data_dir=data), embedder=embedder) as m:
        m.remember("hello")
    _mark_embedded_by(data, "default", "older-model:384")
    out = run("serve", "--data-dir", str(data), "--port", str(free_port()))
    assert out.returncode == 1
    assert_one_line_error(out.stderr)
    assert "halls reembed --store default" in out.stderr
    assert "Traceback" not in out.stdout + out.stderr
    assert _embedded_by(data, "default") == "older-model:384"


def test_serve_with_another_store_of_another_embedder_answers_409_for_it(
    data: Path, embedder: Embedder, server_factory
) -> None:
    """Only the default store is checked at startup: another store of an earlier
    graph does not stop the server; a request to it is a 409 naming `halls reembed`."""
    with Memory(Settings(data_dir=data), embedder=embedder) as m:
        m.remember("the boiler is serviced every October")
        m.remember("the boiler is serviced every October", store="old")
    _mark_embedded_by(data, "old", "older-model:384")
    live = server_factory(data_dir=data)
    c = live.client()
    refused = c.post("/search", params={"store": "old"}, json={"query": "boiler"})
    assert refused.status_code == 409
    assert "halls reembed --store old" in refused.text and str(data) not in refused.text
    fine = c.post("/search", json={"query": "boiler"})
    assert fine.status_code == 200 and fine.json()["results"]


def test_reembed_all_takes_every_store_of_another_embedder(data: Path, embedder: Embedder) -> None:
    """After an upgrade that changed the model, `halls reembed --all` re-embeds each
    store an earlier graph wrote, and only those; a second run has nothing to do."""
    with Memory(Settings(data_dir=data), embedder=embedder) as m:
        for store in ("old-a", "old-b", "current"):
            m.remember(f"the boiler in {store} is serviced every October", store=store)
    mine = _embedded_by(data, "current")
    for store in ("old-a", "old-b"):
        _mark_embedded_by(data, store, "older-model:384")
    res = invoke("reembed", "--all", "--data-dir", str(data))
    assert res.exit_code == 0, res.output
    done = [line for line in res.stdout.splitlines() if line.startswith("re-embedded")]
    assert sorted(done) == [
        f"re-embedded 1 records of 'old-a' with {mine}",
        f"re-embedded 1 records of 'old-b' with {mine}",
    ]
    assert {_embedded_by(data, s) for s in ("old-a", "old-b", "current")} == {mine}
    with Memory(Settings(data_dir=data), embedder=embedder) as m:
        assert m.search("boiler service", store="old-a")[0].content.startswith("the boiler")
    again = invoke("reembed", "--all", "--data-dir", str(data))
    assert again.exit_code == 0 and "nothing to do" in again.stdout
    both = invoke("reembed", "--all", "--store", "old-a", "--data-dir", str(data))
    assert both.exit_code == 2 and "not both" in both.output


def test_stats_of_missing_store_is_one_line_error(data: Path) -> None:
    """Reading a store that does not exist exits 1 with one line naming it, no path."""
    res = invoke("stats", "--store", "ghost", "--data-dir", str(data))
    assert res.exit_code == 1
    assert_one_line_error(res.stderr)
    assert "ghost" in res.stderr and str(data) not in res.stderr


# -- doctor --


def test_doctor_on_a_good_setup(data: Path, embedder: Embedder) -> None:
    """doctor checks model, data dir, each store and the port, and exits 0."""
    with Memory(Settings(data_dir=data), embedder=embedder) as m:
        m.remember("hello", store="fine")
    res = invoke("doctor", "--data-dir", str(data),
                 env={"HALLS_SERVER__PORT": str(free_port())})  # fmt: skip
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines and all(line.startswith("ok ") for line in lines), res.stdout
    text = res.stdout
    assert "embedder loads and embeds: all-MiniLM-L6-v2/onnx-int8-v3:384" in text
    assert "data directory is writable" in text
    assert "store 'fine': embedder all-MiniLM-L6-v2/onnx-int8-v3:384" in text
    assert "is free" in text


def test_doctor_flags_a_store_from_another_embedder(data: Path, embedder: Embedder) -> None:
    """A store embedded by another model makes doctor exit 1 and name `halls reembed`."""
    with OpenAIStub(dim=16) as stub:
        other = Settings(
            data_dir=data,
            embedder=EmbedderSettings(kind="openai", base_url=stub.base_url, model="stub-embed"),
        )
        with Memory(other) as m:
            m.remember("embedded elsewhere", store="foreign")
    with Memory(Settings(data_dir=data), embedder=embedder) as m:
        m.remember("embedded here", store="native")
    res = invoke("doctor", "--data-dir", str(data),
                 env={"HALLS_SERVER__PORT": str(free_port())})  # fmt: skip
    assert res.exit_code == 1
    fails = [line for line in res.stdout.splitlines() if line.startswith("FAIL")]
    assert len(fails) == 1, res.stdout
    assert "store 'foreign'" in fails[0] and "openai/stub-embed:16" in fails[0]
    assert "halls reembed --store foreign" in fails[0] and "halls reembed --all" in fails[0]
    assert "ok    store 'native'" in res.stdout or "ok   store 'native'" in res.stdout
