"""Embedders: the packaged local model, an OpenAI-compatible endpoint, and mismatch refusal."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from halls import EmbedderMismatch, EmbeddingFailed, InvalidInput, Memory, Settings
from halls.config import EmbedderSettings
from halls.embed import Embedder, build_embedder, fingerprint
from halls.embed.local import LocalEmbedder, cpuinfo_has_bfloat16, native_bfloat16
from halls.embed.openai import OpenAIEmbedder
from openai_stub import OpenAIStub, stub_vector

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(dim=16) as s:
        yield s


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


# -- the local model, on both backends --


@pytest.fixture(params=["embedder", "torch_embedder"], ids=["onnx", "torch"])
def local(request: pytest.FixtureRequest) -> Embedder:
    """Each local backend in turn: the default (ONNX int8) and torch."""
    return request.getfixturevalue(request.param)


def test_local_embedder_gives_unit_float32_384(local: Embedder) -> None:
    """all-MiniLM-L6-v2: (n, 384) float32 rows of unit length; fingerprint names the backend."""
    vectors = local.embed(["one sentence", "another, longer sentence about the weather"])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)
    assert local.dim == 384
    torch = isinstance(local, LocalEmbedder)
    want = "all-MiniLM-L6-v2:384" if torch else "all-MiniLM-L6-v2/onnx-int8-v3:384"
    assert fingerprint(local) == want
    assert local.embed([]).shape == (0, 384)


def test_local_embedder_is_deterministic_per_text(local: Embedder) -> None:
    """The same text embeds the same, alone or in a batch."""
    alone = local.embed(["Chad prefers absolute paths"])[0]
    batched = local.embed(["something else", "Chad prefers absolute paths"])[1]
    fillers = [f"filler text number {i}" for i in range(9)]
    big = local.embed([*fillers, "Chad prefers absolute paths"])
    assert cos(alone, batched) == pytest.approx(1.0, abs=1e-5)
    assert cos(alone, big[-1]) == pytest.approx(1.0, abs=1e-5)


def test_similar_sentences_are_closer_than_unrelated(local: Embedder) -> None:
    """A paraphrase is nearer than an unrelated sentence."""
    a, para, other = local.embed(
        [
            "Chad prefers absolute paths in config files",
            "In configs, Chad likes paths written out in full from the root",
            "The bakery sells sourdough on Saturdays",
        ]
    )
    assert cos(a, para) > cos(a, other) + 0.2


@pytest.mark.torch
def test_local_embedder_refuses_a_missing_model_dir(tmp_path: Path) -> None:
    """A model that is neither packaged nor a local directory is EmbeddingFailed."""
    with pytest.raises(EmbeddingFailed, match="not a local model directory"):
        LocalEmbedder(str(tmp_path / "no-such-model"))


# -- an OpenAI-compatible endpoint --


def test_openai_embedder_batches_and_orders_by_index(stub: OpenAIStub) -> None:
    """Texts go out in batch_size chunks; answers (sent reversed) come back in input order."""
    emb = OpenAIEmbedder(stub.base_url, "stub-embed", batch_size=3)
    texts = [f"text number {i}" for i in range(7)]
    vectors = emb.embed(texts)
    assert stub.embedding_batches() == [texts[0:3], texts[3:6], texts[6:7]]
    assert vectors.shape == (7, 16) and vectors.dtype == np.float32
    for text, row in zip(texts, vectors, strict=True):
        expected = np.asarray(stub_vector(text, 16), dtype=np.float32)
        assert row == pytest.approx(expected / np.linalg.norm(expected), abs=1e-6)
    assert emb.dim == 16
    assert fingerprint(emb) == "openai/stub-embed:16"
    assert [r.body["model"] for r in stub.requests] == ["stub-embed"] * 3


def test_openai_embedder_sends_the_api_key(stub: OpenAIStub) -> None:
    """The api key goes as a bearer token; without one, no Authorization header."""
    OpenAIEmbedder(stub.base_url, "m", api_key="sk-test-123").embed(["a"])
    OpenAIEmbedder(stub.base_url, "m").embed(["b"])
    first, second = stub.requests
    assert first.headers.get("Authorization") == "Bearer sk-test-123"
    assert "Authorization" not in second.headers


def test_openai_dimension_is_learned_from_the_endpoint(stub: OpenAIStub) -> None:
    """dim asks the endpoint once when nothing was embedded yet."""
    emb = OpenAIEmbedder(stub.base_url, "m")
    assert emb.dim == 16
    assert emb.dim == 16
    assert len(stub.requests) == 1


def test_build_embedder_from_settings(stub: OpenAIStub) -> None:
    """kind=openai builds the endpoint client (key included); base_url is required."""
    emb = build_embedder(
        EmbedderSettings(kind="openai", base_url=stub.base_url, model="x", api_key="k-1")
    )
    emb.embed(["hello"])
    assert stub.requests[0].headers.get("Authorization") == "Bearer k-1"
    with pytest.raises(InvalidInput, match="base_url"):
        build_embedder(EmbedderSettings(kind="openai"))


def test_endpoint_down_is_embedding_failed_without_url() -> None:
    """A dead endpoint is EmbeddingFailed whose message carries no URL, host or path."""
    stub = OpenAIStub().start()
    url = stub.base_url
    stub.stop()
    emb = OpenAIEmbedder(url, "m", timeout=5)
    with pytest.raises(EmbeddingFailed) as info:
        emb.embed(["anything"])
    message = info.value.message
    assert "embeddings endpoint failed" in message
    for leak in ("127.0.0.1", "http", "/v1", "/embeddings", str(stub.port)):
        assert leak not in message


def test_endpoint_error_status_is_embedding_failed(stub: OpenAIStub) -> None:
    """A 4xx from the endpoint (bad path here) is EmbeddingFailed, not an HTTP exception."""
    emb = OpenAIEmbedder(stub.base_url.replace("/v1", "/nope"), "m")
    with pytest.raises(EmbeddingFailed) as info:
        emb.embed(["x"])
    assert "/nope" not in info.value.message


# -- a store embedded by one model, opened with another --


def openai_settings(data_dir: Path, stub: OpenAIStub) -> Settings:
    return Settings(
        data_dir=data_dir,
        embedder=EmbedderSettings(kind="openai", base_url=stub.base_url, model="stub-embed"),
    )


def test_mismatched_embedder_is_refused_until_reembed(
    tmp_path: Path, embedder: Embedder, stub: OpenAIStub
) -> None:
    """Another embedder is refused (naming `halls reembed`); after reembed it searches."""
    data = tmp_path / "data"
    with Memory(Settings(data_dir=data), embedder=embedder) as local:
        kept = local.remember("the boiler is serviced every October", store="house")
        local.add_loop("book the boiler service", store="house")
    with Memory(openai_settings(data, stub)) as remote:
        with pytest.raises(EmbedderMismatch) as info:
            remote.search("boiler", store="house")
        message = info.value.message
        assert "halls reembed --store house" in message
        assert fingerprint(embedder) in message and "openai/stub-embed:16" in message
        assert str(data) not in message
        with pytest.raises(EmbedderMismatch):
            remote.remember("must not be stored", store="house")
        assert remote.stats(store="house")["counts"]["short"] == 1

        seen: list[int] = []
        assert remote.reembed(store="house", progress=seen.append) == 2
        assert sum(seen) == 2
        assert remote.stats(store="house")["embedder"] == "openai/stub-embed:16"
        hits = remote.search("when is the boiler serviced", store="house", tiers=["short"])
        assert [h.id for h in hits] == [kept.id]
        assert hits[0].score_detail["dense_rank"] == 1
        remote.remember("a new memory after the switch", store="house")

    # The store now belongs to the endpoint's model: the local one is refused in turn.
    with (
        Memory(Settings(data_dir=data), embedder=embedder) as local,
        pytest.raises(EmbedderMismatch, match="halls reembed"),
    ):
        local.search("boiler", store="house")


def test_reembed_via_cli(tmp_path: Path, embedder: Embedder, stub: OpenAIStub) -> None:
    """`halls reembed` with HALLS_EMBEDDER__* env re-embeds with progress and reports success."""
    data = tmp_path / "data"
    with Memory(Settings(data_dir=data), embedder=embedder) as local:
        for i in range(5):
            local.remember(f"memory number {i} about gardening", store="garden")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HALLS_")}
    env.update(HALLS_EMBEDDER__KIND="openai", HALLS_EMBEDDER__BASE_URL=stub.base_url,
               HALLS_EMBEDDER__MODEL="stub-embed", COLUMNS="120")  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "halls", "reembed", "--store", "garden", "--data-dir", str(data)],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout + proc.stderr
    assert "re-embedding garden" in out
    assert "5/5" in out
    assert "re-embedded 5 records of 'garden' with openai/stub-embed:16" in out
    assert "Traceback" not in out
    with Memory(openai_settings(data, stub)) as remote:
        assert remote.stats(store="garden")["embedder"] == "openai/stub-embed:16"
        assert len(remote.search("gardening", store="garden", n_results=10)) == 5


# -- precision: bfloat16 beside float32 --

PARAPHRASES = [
    (
        "Chad prefers absolute paths in config files",
        "Chad likes config paths written out from the root",
    ),
    (
        "The boiler in the basement leaks when the heating is on",
        "water drips from the basement boiler while it heats",
    ),
    (
        "Rosa moved to Lisbon for a job at a bank",
        "Rosa took a banking job and relocated to Lisbon",
    ),
    (
        "Our sprint review is every second Friday afternoon",
        "the sprint demo happens fortnightly on Friday afternoons",
    ),
    (
        "The bakery sells sourdough on Saturdays",
        "on Saturdays the bakery has sourdough bread",
    ),
    (
        "The deploy of the payment gateway is blocked on a Kafka change",
        "a Kafka change holds up the payment gateway rollout",
    ),
]


@pytest.fixture(scope="module")
def float32_embedder() -> LocalEmbedder:
    return LocalEmbedder(precision="float32")


@pytest.fixture(scope="module")
def bfloat16_embedder() -> LocalEmbedder:
    return LocalEmbedder(precision="bfloat16")


def test_bfloat16_vectors_agree_with_float32(
    float32_embedder: LocalEmbedder, bfloat16_embedder: LocalEmbedder
) -> None:
    """bfloat16 gives unit float32 rows within cosine 0.999 of the float32 ones, text by text."""
    long_text = " ".join(f"sentence {i} about the garden, the boiler and Rosa." for i in range(60))
    texts = [t for pair in PARAPHRASES for t in pair] + [long_text, "x", "Ünïcode ✓ 東京"]
    full = float32_embedder.embed(texts)
    low = bfloat16_embedder.embed(texts)
    assert (float32_embedder.precision, bfloat16_embedder.precision) == ("float32", "bfloat16")
    assert low.dtype == np.float32 and low.shape == full.shape == (len(texts), 384)
    assert np.linalg.norm(low, axis=1) == pytest.approx([1.0] * len(texts), abs=1e-5)
    assert np.einsum("ij,ij->i", full, low).min() > 0.999


def test_bfloat16_ranks_paraphrases_as_float32_does(
    float32_embedder: LocalEmbedder, bfloat16_embedder: LocalEmbedder
) -> None:
    """Each paraphrase finds its original first, and the whole ranking matches float32's."""
    originals = [a for a, _ in PARAPHRASES]
    queries = [b for _, b in PARAPHRASES]
    orders = []
    for emb in (float32_embedder, bfloat16_embedder):
        scores = emb.embed(queries) @ emb.embed(originals).T
        orders.append(np.argsort(-scores, axis=1, kind="stable"))
        assert list(orders[-1][:, 0]) == list(range(len(originals)))
    assert (orders[0] == orders[1]).all()


@pytest.mark.torch
def test_precision_reaches_the_embedder_and_auto_follows_the_cpu() -> None:
    """embedder.precision picks torch's arithmetic; auto is bfloat16 exactly where the CPU has
    it."""
    chosen = build_embedder(EmbedderSettings(backend="torch", precision="float32"))
    assert isinstance(chosen, LocalEmbedder) and chosen.precision == "float32"
    auto = "bfloat16" if native_bfloat16() else "float32"
    default = build_embedder(EmbedderSettings(backend="torch"))
    assert isinstance(default, LocalEmbedder) and default.precision == auto
    with pytest.raises(ValidationError):
        EmbedderSettings(precision="float16")


def test_native_bfloat16_agrees_with_the_kernel_cpu_flags() -> None:
    """torch's CPU probe and /proc/cpuinfo's flags give the same answer on this machine."""
    assert native_bfloat16() == cpuinfo_has_bfloat16(Path("/proc/cpuinfo"))


def test_cpuinfo_flags_decide_bfloat16(tmp_path: Path) -> None:
    """avx512_bf16 or amx_bf16 among the flags means native; other flags or no file mean not."""
    with_bf16 = tmp_path / "zen5"
    with_bf16.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx512f avx512_bf16 avx512_vnni\n")
    amx = tmp_path / "sapphire"
    amx.write_text("flags\t\t: fpu avx512f amx_tile amx_bf16\n")
    without = tmp_path / "skylake"
    without.write_text("flags\t\t: fpu sse2 avx2 avx512f avx512bw\nbugs\t\t: avx512_bf16\n")
    assert cpuinfo_has_bfloat16(with_bf16) and cpuinfo_has_bfloat16(amx)
    assert not cpuinfo_has_bfloat16(without)
    assert not cpuinfo_has_bfloat16(tmp_path / "missing")


def test_a_float32_store_is_searched_with_bfloat16(
    tmp_path: Path, float32_embedder: LocalEmbedder, bfloat16_embedder: LocalEmbedder
) -> None:
    """The fingerprint ignores precision: a store written in float32 opens and ranks in bfloat16."""
    data = tmp_path / "data"
    with Memory(Settings(data_dir=data), embedder=float32_embedder) as full:
        for original, _ in PARAPHRASES:
            full.remember(original, store="mixed")
    with Memory(Settings(data_dir=data), embedder=bfloat16_embedder) as low:
        for original, paraphrase in PARAPHRASES:
            hits = low.search(paraphrase, store="mixed", retriever="dense", n_results=3)
            assert hits[0].content == original
