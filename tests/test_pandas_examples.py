"""The README's and the docs' pandas examples run as written on an install
of pyproject.toml's dependencies. (That `ccarena run` never imports pandas
is test_preload.py's.)"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

from conftest import EXAMPLES, REPO, run_cli


def _python_blocks(markdown: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", markdown.read_text(encoding="utf-8"), flags=re.S)


def _run_python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=600,
                          check=False)


def test_the_readmes_python_api_example_runs_and_gives_a_dataframe(tmp_path):
    (block,) = [b for b in _python_blocks(REPO / "README.md") if "ccarena.run(" in b]
    (tmp_path / "examples").symlink_to(EXAMPLES)  # the example's paths are relative to the repository
    check = "\nimport pandas\nassert isinstance(df, pandas.DataFrame) and len(df) == result.timeseries.num_rows\n"
    proc = _run_python(block + check, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "runs" / "30ms" / "summary.json").is_file()


def test_a_run_directorys_parquet_files_read_with_pandas(tmp_path):
    out = tmp_path / "run"
    proc = run_cli("run", EXAMPLES / "bbr-rtt-unfairness.toml", "--out", out, "--set", "duration=4s",
                   "--set", "measure.from=1s")
    assert proc.returncode == 0, proc.stderr
    import pandas as pd

    for name in ("timeseries.parquet", "link.parquet"):
        df = pd.read_parquet(out / name)
        assert df.equals(pq.read_table(out / name).to_pandas())
        assert len(df) > 0


def test_the_sweep_docs_pandas_example_runs_on_a_sweeps_table(tmp_path):
    (block,) = [b for b in _python_blocks(REPO / "docs" / "sweeps.md") if "read_parquet" in b]
    # The docs' sweep, shortened: same axes, one seed, 4 s points.
    sweep = (EXAMPLES / "sweeps" / "rtt-ratio.toml").read_text()
    sweep = sweep.replace('duration = "60s"', 'duration = "4s"').replace('from = "20s"', 'from = "1s"')
    sweep = sweep.replace("seeds = [1, 2, 3]", "seeds = [1]")
    (tmp_path / "rtt-ratio.toml").write_text(sweep)
    proc = run_cli("sweep", "rtt-ratio.toml", "--out", "runs/rtt-ratio", "--jobs", "2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = block.rstrip().splitlines()
    proc = _run_python("\n".join(lines[:-1] + [f"print({lines[-1]})"]), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "mean" in proc.stdout and "std" in proc.stdout
