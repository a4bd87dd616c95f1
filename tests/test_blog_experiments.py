"""The RTT-tuning blog's experiment (`ccarena reproduce blog-fairness-map`):
a --quick run writes a complete report with the heat maps, and the grid
holds the claims the simulator reaches (quick: one seed, 30 s; the full
run's 5-seed numbers are in docs/experiments.md).
"""

from __future__ import annotations

import json

import pytest

from ccarena import experiments
from ccarena.experiments.blog import EXPERIMENTS, PAPER, fairness_map
from conftest import assert_quick_report, reproduce_quick


@pytest.fixture(scope="module")
def quick_out(tmp_path_factory):
    return reproduce_quick([fairness_map.EXPERIMENT.name], tmp_path_factory.mktemp("blog"))


def test_the_experiment_is_registered():
    assert PAPER.key == "blog" and [e.name for e in EXPERIMENTS] == ["blog-fairness-map"]
    assert "blog-fairness-map" in experiments.names()


def test_quick_run_writes_a_complete_report_with_its_maps(quick_out):
    out = quick_out / "blog-fairness-map"
    assert_quick_report(out)
    for png in ("fairness_map.png", "fairness_high_rate.png", "vs_cubic.png"):
        assert (out / png).stat().st_size > 10_000


def test_the_grid_orders_the_algorithms_as_measured(quick_out):
    # Quick, seed 1 (30 s, window 10-30 s): the 10 ms flow against 50 ms
    # gets 6.6% under BBR, 40.7% under tuned BBR, 30.6% under tuned BBRv3,
    # 43.9% under BBQ, 24.7% under DA-BBR; CUBIC favours the short flow
    # (76.2%). Untuned BBRv2 and BBRv3 have not reached their split by 30 s
    # (37.1% and 31.5% here): their 10 ms flow falls from ~35% to ~5-8%
    # over 30-60 s, sooner or later by the seed (full length, 5 seeds:
    # BBRv2 6.9% against 35.9% tuned), so the quick run does not order
    # them against their tuned versions.
    n = json.loads((quick_out / "blog-fairness-map" / "results.json").read_text())["numbers"]
    ccs = ("bbr", "bbr2", "bbr2_tuned", "bbr_tuned", "bbr3", "bbr3_tuned", "bbq", "da_bbr", "cubic")
    share = {cc: n[f"{cc}.share.10-50ms"] for cc in ccs}
    assert share["bbr"] < 0.15 and share["cubic"] > 0.6
    assert share["bbr3_tuned"] > 2 * share["bbr"] and share["bbq"] > share["bbr3_tuned"] > share["da_bbr"] > share["bbr"]
    assert share["bbr_tuned"] > 2 * share["bbr"]
    # Against CUBIC in a shallow buffer BBRv2 and BBRv3 are fairer than BBR v1.
    assert n["bbr3.jain_vs_cubic.0.5bdp"] > n["bbr.jain_vs_cubic.0.5bdp"] + 0.1
    assert n["bbr2.jain_vs_cubic.0.5bdp"] > n["bbr.jain_vs_cubic.0.5bdp"] + 0.1


def test_every_claim_of_the_list_has_its_row(quick_out):
    # The blog's list (L9, L17, L35 twice, L49, L69, L79, L83, L97 twice):
    # each claim a row; L79's sentence (the short flow favoured, the long
    # one "~50%") is one claim on the shorter flow's share.
    results = json.loads((quick_out / "blog-fairness-map" / "results.json").read_text())
    rows = {r["claim"]: r for r in results["comparisons"] if r.get("claim")}
    assert {"l9.cubic-favours-short", "l17.less-loss", "l35.seize", "l35.low-bandwidth", "l69.margin",
            "l79.favours-short", "l97.beyond-5x", "l97.starvation"} <= set(rows)
    assert not {"l79.long-significant-share", "l83.significant-share"} & set(rows)
    short = results["numbers"]["bbr2_tuned.share.10-50ms"]
    assert f"10/50 ms: {100 * short:.1f}%" in rows["l79.favours-short"]["ours"]
