"""README's Python snippets run as pasted: each in a fresh interpreter, in an empty
directory, with only the installed checkout importable. (The Spark snippet, which needs
a server and a Spark session, runs in tests/pipeline/test_readme_spark.py.)"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def plain_snippets() -> list:
    return [s for s in SNIPPETS if "pyspark" not in s]


def test_readme_has_snippets():
    assert len(plain_snippets()) >= 2 and len(SNIPPETS) > len(plain_snippets())


@pytest.mark.parametrize("snippet", plain_snippets(),
                         ids=lambda s: s.strip().splitlines()[-1][:40])
def test_snippet_runs_as_pasted(snippet, tmp_path):
    done = subprocess.run([sys.executable, "-c", snippet], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
