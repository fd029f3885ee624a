"""The judge's weights and what they were trained with: write or check the manifest.

    python scripts/judge_manifest.py            # check: exit 1 on any drift
    python scripts/judge_manifest.py --write    # after a deliberate retrain

``src/halls/consolidate/judge/data/manifest.json`` names, for each shipped
model, its SHA-256 and what it reads: for the word MLPs, the feature schema
(how many word features they read) and a fingerprint of the
features themselves, computed on the team's labelled pairs
(``training/pairs.txt``); where a model's entry lists the training files it
learned from (``trained_on``, written by ``scripts/train_cross.py``), their
SHA-256 too. The features come from the judge's word code and
its word lists (``judge/lexicon/``) and tables, so changing either changes
the fingerprint, and the check fails until the MLPs are retrained on the new
features (``scripts/train_judge.py``), measured, and the manifest rewritten;
moving a word list into a file without changing a feature keeps it.
``tests/test_judge_weights.py`` runs the same check in CI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pairs import HERE, load  # noqa: E402

from halls.consolidate.judge import lexical, mlp  # noqa: E402
from halls.consolidate.judge.cross import MODELS  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "src" / "halls" / "consolidate" / "judge" / "data"
MANIFEST = DATA / "manifest.json"
PROBE = "pairs.txt"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def features_fingerprint() -> str:
    """SHA-256 of the word features the MLPs read (not the rules' own columns) of
    every pair of ``training/pairs.txt``."""
    items = load(PROBE)
    x = lexical.lexical(
        [a for _, a, _ in items], [b for _, _, b in items], np.zeros(len(items), np.float32)
    )
    x = mlp.mlp_inputs(x)
    return hashlib.sha256(np.ascontiguousarray(x, dtype=np.float32).tobytes()).hexdigest()


def current() -> dict[str, dict[str, object]]:
    """The manifest as the files and the code are now (its notes from the file on disk)."""
    notes = json.loads(MANIFEST.read_text("utf-8")) if MANIFEST.is_file() else {}
    fingerprint = features_fingerprint()
    out: dict[str, dict[str, object]] = {}
    for name in ("judge.npz", "judge_cross.npz"):
        out[name] = {
            "sha256": _sha256(DATA / name),
            "schema": mlp.schema(),
            "features": fingerprint,
        }
    for graph in MODELS:
        name = graph.removeprefix("data/")
        out[name] = {"sha256": _sha256(DATA / name)}
    for name, entry in out.items():
        for key, value in notes.get(name, {}).items():
            entry.setdefault(key, value)
    return out


def drift() -> list[str]:
    """What differs between the manifest on disk and the files and code now."""
    if not MANIFEST.is_file():
        return ["no manifest.json"]
    saved = json.loads(MANIFEST.read_text("utf-8"))
    now = current()
    out = []
    for name, entry in now.items():
        for key in ("sha256", "schema", "features"):
            if key in entry and saved.get(name, {}).get(key) != entry[key]:
                out.append(f"{name}: {key} differs from the manifest")
    for name, entry in saved.items():
        for file, digest in entry.get("trained_on", {}).items():
            if _sha256(HERE / file) != digest:
                out.append(f"{name}: training/{file} changed since it was trained")
    for graph, pinned in MODELS.items():
        name = graph.removeprefix("data/")
        if now[name]["sha256"] != pinned:
            out.append(f"{name}: sha256 differs from its pin in cross.MODELS")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="write the manifest as things are now")
    args = ap.parse_args()
    if args.write:
        MANIFEST.write_text(json.dumps(current(), indent=2) + "\n", "utf-8")
        print(f"wrote {MANIFEST.name}")
        return 0
    problems = drift()
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
