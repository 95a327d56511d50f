"""Instructions per card read, counted by valgrind: a latency figure that machine noise cannot move.

    .venv/bin/python bench/instructions.py [MODEL ...] [--calls 100]

Timings on a shared 2-core machine move by half between back-to-back runs (models/README.md), so
comparing two models by milliseconds needs a quiet machine. ``valgrind --tool=callgrind`` counts
the instructions a process executes, the same count each run whatever else the machine is doing.
For each model this runs a small reader twice under callgrind, once loading the model and reading
nothing and once reading ``--calls`` single-crop ``CardClassifier.classify`` calls on one thread,
and prints the difference per call: instructions spent reading one card (preprocessing, the
180-degree turn, the onnxruntime session and the open-set rule), without start-up. Needs
valgrind (Debian package ``valgrind``); takes about a minute per model.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_READER = """
import sys
import numpy as np
from pathlib import Path
from vision.classifier import CardClassifier
clf = CardClassifier(Path(sys.argv[1]), threads=1)
crop = np.random.default_rng(0).integers(0, 256, (88, 64, 3), dtype=np.uint8)
for _ in range(int(sys.argv[2])):
    clf.classify([crop])
"""


def count(model: Path, calls: int, tmp: Path) -> int:
    """Instructions callgrind collects for the reader with ``calls`` reads of ``model``."""
    script = tmp / "reader.py"
    script.write_text(_READER)
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp / 'callgrind.out'}", sys.executable,
         str(script), str(model), str(calls)],
        cwd=ROOT, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"},
    )
    found = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or found is None:
        raise SystemExit(f"bench/instructions.py: callgrind failed on {model}: {out.stderr.strip().splitlines()[-1:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path, default=[ROOT / "models" / "card_classifier.onnx"],
                        metavar="MODEL", help="ONNX card models with their sidecars (default: the shipped one)")
    parser.add_argument("--calls", type=int, default=100, help="single-crop reads counted per model (default 100)")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("bench/instructions.py: valgrind not found (apt-get install valgrind)", file=sys.stderr)
        return 1
    missing = [str(m) for m in args.models if not m.is_file()]
    if missing:
        print(f"bench/instructions.py: {', '.join(missing)}: no such model", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="loo-instructions-") as tmp:
        for model in args.models:
            print(f"counting {model} ...", file=sys.stderr, flush=True)
            idle, busy = count(model, 0, Path(tmp)), count(model, args.calls, Path(tmp))
            print(f"{model}: {(busy - idle) / args.calls / 1e6:.2f} M instructions per card read "
                  f"(one crop, one thread; {args.calls} reads under callgrind)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
