"""The default ONNX backend: the shipped file, its tokenizer, and its vectors beside torch's."""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from halls import EmbedderMismatch, EmbeddingFailed, Memory, Settings
from halls.bench import corpus
from halls.config import EmbedderSettings
from halls.embed import Embedder, build_embedder, fingerprint
from halls.embed.local import LocalEmbedder
from halls.embed.onnx import MAX_TOKENS, MODEL_PATH, MODEL_SHA256, OnnxEmbedder

REPO = Path(__file__).resolve().parent.parent


def varied_texts() -> list[str]:
    """Queries, memories, long texts past the 256-token cut, and odd inputs."""
    rng = random.Random(3)
    long = [" ".join(corpus.memories(rng, n)) for n in (10, 30, 60)]
    odd = ["a", "naïve café — Ünïcödé", "東京で寿司", "def f(x): return x ** 2", "word " * 400]
    return corpus.questions(rng, 20) + corpus.memories(rng, 20) + long + odd


def test_the_shipped_model_is_the_pinned_file() -> None:
    """model.onnx hashes to MODEL_SHA256 and stays within 25 MB: a changed file is noticed."""
    data = MODEL_PATH.read_bytes()
    assert hashlib.sha256(data).hexdigest() == MODEL_SHA256
    assert len(data) <= 25_000_000


def test_the_weights_fit_seven_bits_so_every_cpu_computes_the_same() -> None:
    """Every int8 weight is within +-64: AVX2's saturating int16 multiply-add never
    overflows, so AVX2 and AVX-512 VNNI compute the same vectors (8-bit weights,
    up to +-127, gave cosine 0.954 between the two on one text)."""
    model = onnx.load(str(MODEL_PATH))
    weights = [
        numpy_helper.to_array(t)
        for t in model.graph.initializer
        if t.data_type == onnx.TensorProto.INT8
    ]
    assert len(weights) >= 36  # six layers' attention, feed-forward and output weights
    assert max(int(np.abs(w.astype(np.int16)).max()) for w in weights) <= 64


def test_default_backend_is_onnx_with_its_own_fingerprint(embedder: Embedder) -> None:
    """Zero config builds the ONNX embedder; its fingerprint is not the torch model's."""
    assert isinstance(embedder, OnnxEmbedder)
    assert fingerprint(embedder) == "all-MiniLM-L6-v2/onnx-int8-v3:384"


def test_tokens_match_sentence_transformers(
    embedder: OnnxEmbedder, torch_embedder: LocalEmbedder
) -> None:
    """Token ids equal sentence-transformers' (lower-cased WordPiece, cut at 256), text by text."""
    texts = varied_texts()
    ours = [e.ids for e in embedder._tokenizer.encode_batch(texts)]
    theirs = torch_embedder.tokenizer(texts, truncation=True, max_length=MAX_TOKENS)["input_ids"]
    assert ours == [list(t) for t in theirs]
    assert max(len(t) for t in ours) == MAX_TOKENS


def test_vectors_agree_with_the_torch_float32_model(
    embedder: OnnxEmbedder, torch_embedder: LocalEmbedder
) -> None:
    """int8 vectors: mean cosine >= 0.99 to float32 torch; no text below 0.95."""
    if torch_embedder.precision != "float32":
        torch_embedder = LocalEmbedder(precision="float32")
    texts = varied_texts()
    got = embedder.embed(texts)
    want = torch_embedder.embed(texts)
    cosines = np.einsum("ij,ij->i", got, want)
    assert cosines.mean() >= 0.99
    assert cosines.min() >= 0.95


def test_paraphrases_rank_as_with_torch(
    embedder: OnnxEmbedder, torch_embedder: LocalEmbedder
) -> None:
    """Each paraphrase finds its original first with either backend."""
    from test_embedders import PARAPHRASES

    originals = [a for a, _ in PARAPHRASES]
    queries = [b for _, b in PARAPHRASES]
    for emb in (embedder, torch_embedder):
        scores = emb.embed(queries) @ emb.embed(originals).T
        assert list(np.argmax(scores, axis=1)) == list(range(len(originals)))


def test_token_counts_cover_whole_texts(embedder: OnnxEmbedder) -> None:
    """The counting tokenizer does not truncate: a long text counts every token."""
    assert embedder.tokenizer.encode("word " * 400, add_special_tokens=False) == [2773] * 400
    assert embedder.tokenizer.tokenize("Halls of Memory") == ["halls", "of", "memory"]


def test_a_torch_store_opens_with_torch_and_asks_onnx_to_reembed(
    tmp_path: Path, embedder: OnnxEmbedder, torch_embedder: LocalEmbedder
) -> None:
    """A store embedded by torch keeps opening with torch; ONNX is refused until reembed."""
    data = tmp_path / "data"
    with Memory(Settings(data_dir=data), embedder=torch_embedder) as old:
        kept = old.remember("the boiler is serviced every October", store="house")
    with Memory(Settings(data_dir=data), embedder=torch_embedder) as again:
        assert again.search("boiler service", store="house")[0].id == kept.id
    with Memory(Settings(data_dir=data), embedder=embedder) as new:
        with pytest.raises(EmbedderMismatch, match="halls reembed --store house"):
            new.search("boiler", store="house")
        assert new.reembed(store="house") == 1
        assert new.search("when is the boiler serviced", store="house")[0].id == kept.id


def test_other_models_need_the_torch_backend() -> None:
    """The ONNX backend ships one model; another name says to use the torch backend."""
    with pytest.raises(EmbeddingFailed, match="backend: torch"):
        build_embedder(EmbedderSettings(model="/some/other/model"))


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )


def test_the_default_embedder_never_imports_torch() -> None:
    """Building and using the default embedder leaves torch and transformers unimported."""
    proc = run_python(
        "import sys\n"
        "from halls.config import EmbedderSettings\n"
        "from halls.embed import build_embedder\n"
        "assert build_embedder(EmbedderSettings()).embed(['hello']).shape == (1, 384)\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers')"
        " if m in sys.modules))\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_torch_backend_without_the_extra_says_how_to_install_it() -> None:
    """backend: torch with torch missing is EmbeddingFailed naming halls[torch]."""
    proc = run_python(
        "import sys\n"
        "sys.modules['torch'] = None  # as if the extra were not installed\n"
        "from halls.config import EmbedderSettings\n"
        "from halls.embed import build_embedder\n"
        "from halls.errors import EmbeddingFailed\n"
        "try:\n"
        "    build_embedder(EmbedderSettings(backend='torch'))\n"
        "except EmbeddingFailed as exc:\n"
        "    print(exc.message)\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert "halls[torch]" in proc.stdout and "torch==2.13.0" in proc.stdout
