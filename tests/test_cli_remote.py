"""The everyday commands against a running server: found, used, and never loading the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import LiveServer, free_port

REPO = Path(__file__).resolve().parent.parent


def halls(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m halls ARGS`` with only the given HALLS_* variables."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("HALLS_")}
    full.update(env)
    return subprocess.run(
        [sys.executable, "-m", "halls", *args],
        env=full, cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_remember_recall_stats_stores_through_the_server(
    server: LiveServer, store_name: str
) -> None:
    """--server-url: every everyday command is answered by the server's store."""
    url = ("--server-url", server.url)
    made = halls("stores", "create", store_name, *url)
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == store_name
    kept = halls("remember", "the spare key is under the blue flowerpot", "--store", store_name,
                 "--topic", "house", *url)  # fmt: skip
    assert kept.returncode == 0, kept.stderr
    entry = server.client().get(f"/short/{kept.stdout.strip()}", params={"store": store_name})
    assert entry.json()["content"] == "the spare key is under the blue flowerpot"
    assert entry.json()["topic"] == "house"

    found = halls("recall", "where is the spare key?", "--store", store_name, "--json", *url)
    assert found.returncode == 0, found.stderr
    assert [h["id"] for h in json.loads(found.stdout)] == [kept.stdout.strip()]
    plain = halls("recall", "spare key", "--store", store_name, *url)
    assert kept.stdout.strip() in plain.stdout and "flowerpot" in plain.stdout

    stats = halls("stats", "--store", store_name, *url)
    assert json.loads(stats.stdout)["counts"]["short"] == 1
    listed = halls("stores", *url)
    assert store_name in listed.stdout.split()


def test_recall_of_several_stores_through_the_server(server: LiveServer, store_name: str) -> None:
    """--store repeated with --server-url: the body's `stores`, one merged list."""
    url = ("--server-url", server.url)
    other = f"{store_name}-team"
    for store, text in ((store_name, "the spare key is under the blue flowerpot"),
                        (other, "the team deploys the web app with Kamal on Fridays")):  # fmt: skip
        assert halls("remember", text, "--store", store, *url).returncode == 0
    found = halls("recall", "how does the team deploy the web app?", "--store", store_name,
                  "--store", other, "--min-relevance", "0", "--json", *url)  # fmt: skip
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    assert [h["store"] for h in hits] == [other, store_name] and "Kamal" in hits[0]["content"]


def test_the_configured_server_is_found_without_flags(
    server: LiveServer, store_name: str, tmp_path: Path
) -> None:
    """No --data-dir: the configured host:port answers, so the CLI uses it, not a local store."""
    local = tmp_path / "never-created"
    env = {"HALLS_SERVER__PORT": str(server.port), "HALLS_DATA_DIR": str(local)}
    kept = halls("remember", "the dentist moved to Thursday", "--store", store_name, **env)
    assert kept.returncode == 0, kept.stderr
    found = halls("recall", "when is the dentist?", "--store", store_name, "--json", **env)
    assert [h["id"] for h in json.loads(found.stdout)] == [kept.stdout.strip()]
    assert not local.exists()


def test_with_no_server_the_data_dir_is_used(tmp_path: Path, store_name: str) -> None:
    """Nothing answers on the configured port: the command opens the data directory itself."""
    data = tmp_path / "data"
    env = {"HALLS_SERVER__PORT": str(free_port()), "HALLS_DATA_DIR": str(data)}
    kept = halls("remember", "the plumber comes on Monday", "--store", store_name, **env)
    assert kept.returncode == 0, kept.stderr
    assert (data / f"{store_name}.db").exists() or any(data.iterdir())
    stats = halls("stats", "--store", store_name, **env)
    assert json.loads(stats.stdout)["counts"]["short"] == 1


def test_remote_commands_never_load_the_model(server: LiveServer, store_name: str) -> None:
    """On the server path no model, runtime or store module is imported."""
    server.client().post("/short", params={"store": store_name}, json={"content": "a note"})
    code = (
        "import sys\n"
        "from halls.cli import main\n"
        f"args = ['recall', 'note', '--store', '{store_name}', '--server-url', '{server.url}']\n"
        "try:\n"
        "    main(args)\n"
        "except SystemExit as exc:\n"
        "    assert exc.code in (0, None), exc.code\n"
        "heavy = ('onnxruntime', 'tokenizers', 'torch', 'halls.service', 'halls.embed.onnx',"
        " 'halls.store', 'fastapi')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "a note" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_hooks_never_load_the_mcp_sdk_or_the_service() -> None:
    """A Claude Code hook imports the HTTP client only: no MCP SDK, service or model."""
    code = (
        "import sys\n"
        "import halls.cli, halls.integrations.hooks\n"
        "heavy = ('mcp', 'halls.mcp.server', 'halls.service', 'onnxruntime', 'torch', 'fastapi')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_a_token_server_needs_the_token(server_factory, store_name: str) -> None:  # type: ignore[no-untyped-def]
    """HALLS_TOKEN (or --token) is sent; without it the refusal is one clear line."""
    guarded = server_factory(env={"HALLS_SERVER__BEARER_TOKEN": "s3cret-token-1234"})
    url = ("--server-url", guarded.url)
    refused = halls("stats", "--store", store_name, *url)
    assert refused.returncode == 1
    assert "Traceback" not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    made = halls("stores", "create", store_name, *url, "--token", "s3cret-token-1234")
    assert made.returncode == 0, made.stderr
    ok = halls("stats", "--store", store_name, *url, HALLS_TOKEN="s3cret-token-1234")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["counts"]["short"] == 0


def test_a_server_url_that_does_not_answer_is_an_error(tmp_path: Path) -> None:
    """--server-url must answer; with --data-dir as well it is a usage error."""
    url = f"http://127.0.0.1:{free_port()}"
    down = halls("recall", "x", "--server-url", url)
    assert down.returncode == 1 and f"no halls server answers at {url}" in down.stderr
    both = halls("recall", "x", "--server-url", url, "--data-dir", str(tmp_path))
    assert both.returncode == 2 and "either --server-url or --data-dir" in both.stderr
