"""The runnable examples in docs/controller.md run and print what the doc says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "controller.md"


def test_every_python_example_runs(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) >= 3
    for block in blocks:
        code = block.replace("/tmp/", f"{tmp_path}/")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(DOC), "exec"), {})
        for line in code.splitlines():  # "print(x)   # expected" comments must match the output
            m = re.match(r"\s*print\(.*\)\s+# (.*)$", line)
            if m:
                expected = m.group(1).split("...")[0]
                assert expected in out.getvalue(), (expected, out.getvalue())
