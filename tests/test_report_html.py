"""`ccarena report`: one self-contained HTML page over a run, a sweep, an
experiment and a scorecard, opened in a real headless Chromium: no
console errors, every image loaded, every table present."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ccarena.html import render
from ccarena.scorecard import run_scorecard
from ccarena.sweep import run_sweep
from conftest import EXAMPLES, reproduce_quick, run_cli

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

SWEEP = """\
duration = "6s"
[measure]
from = "2s"
[bottleneck]
rate = "20Mbit"
buffer = "1bdp"
[[flow]]
cc = "bbr"
rtt = "10ms"
[[flow]]
cc = "bbr"
rtt = "40ms"
[sweep]
"flow.1.rtt" = ["20ms", "40ms"]
seeds = [1, 2]
"""


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("inputs")
    proc = run_cli("run", EXAMPLES / "bbr-rtt-unfairness.toml", "--set", "duration=25s", "--out", root / "run")
    assert proc.returncode == 0, proc.stderr
    (root / "sweep.toml").write_text(SWEEP)
    run_sweep(root / "sweep.toml", root / "sweep", jobs=2, progress=False)
    reproduce_quick(["bbq-fig1"], root / "repro")
    run_scorecard(root / "card", ccs=["bbr", "cubic"], seeds=[1, 2], jobs=2, progress=False)
    return root


def test_the_page_opens_in_headless_chromium_without_errors(inputs, tmp_path):
    if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
        pytest.skip("Debian's chromium and chromium-driver are not installed (make deps installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    dirs = [inputs / "run", inputs / "sweep", inputs / "repro", inputs / "card"]
    out = tmp_path / "report.html"
    proc = run_cli("report", *dirs, "--out", out)
    assert proc.returncode == 0, proc.stderr
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,2000"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        driver.get(out.as_uri())
        images = driver.execute_script(
            "return Array.from(document.images).map(i => [i.alt, i.complete && i.naturalWidth > 0])")
        sections = driver.execute_script(
            "return Array.from(document.querySelectorAll('section')).map(s => [s.id, s.querySelectorAll('table').length])")
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    finally:
        driver.quit()
    assert errors == []
    # The run's plot, the sweep's figure, the experiment's figures, the scorecard's small multiples.
    assert len(images) >= 4 and all(ok for _, ok in images), images
    kinds = {sid.split("-")[0] for sid, _ in sections}
    assert kinds == {"run", "sweep", "exp", "scorecard"}, sections
    # Every section has its tables: run (headline, flows), sweep (points),
    # experiment (paper vs ccarena), scorecard (ranking).
    tables = dict(sections)
    assert all(n >= 1 for n in tables.values()) and tables["run-run"] == 2


def test_the_page_is_one_record_rendered_the_same_twice(inputs):
    dirs = [inputs / "run", inputs / "repro" / "bbq-fig1", inputs / "card"]
    first = render(dirs)
    assert render(dirs) == first
    assert first.startswith("<!DOCTYPE html>") and "<script" not in first and "http://" not in first
    # Rendered from results.json: every row's paper claim and our number appear.
    import html
    import json

    rows = json.loads((inputs / "repro" / "bbq-fig1" / "results.json").read_text())["comparisons"]
    assert rows and all(html.escape(r["paper"]) in first and html.escape(r["ours"]) in first for r in rows)
    assert "ccarena run scenario.toml" in first and "ccarena reproduce bbq-fig1 --quick" in first


def test_bad_inputs_are_one_line_and_a_foreign_file_is_not_overwritten(inputs, tmp_path):
    proc = run_cli("report", tmp_path, "--out", tmp_path / "r.html")
    assert proc.returncode == 2 and "not a ccarena run, comparison, sweep, scorecard or experiment directory" in proc.stderr
    mine = tmp_path / "notes.html"
    mine.write_text("<p>mine</p>")
    proc = run_cli("report", inputs / "run", "--out", mine)
    assert proc.returncode == 2 and "was not written by ccarena" in proc.stderr
    assert mine.read_text() == "<p>mine</p>"
    proc = run_cli("report", mine, "--out", tmp_path / "f.html")  # a file, not a directory
    assert proc.returncode == 2 and proc.stderr.strip().endswith("notes.html: not a directory (a run, sweep, "
                                                                 "scorecard or reproduction's)"), proc.stderr
    copy = tmp_path / "run"
    shutil.copytree(inputs / "run", copy)
    (copy / "goodput.png").unlink()  # a run without its plot still renders
    proc = run_cli("report", copy, "--out", tmp_path / "ok.html")
    assert proc.returncode == 0, proc.stderr
