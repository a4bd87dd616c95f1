"""The experiments' figures (axes, reference lines, colour scales) and the
latency-cheating race's rules (bbq-fig7), on synthetic data: no
simulation, a second or two."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ccarena.experiments import figures
from ccarena.experiments.bbq import fig7
from ccarena.experiments.framework import Outcome


class _Keep:
    """matplotlib.pyplot, except that close() keeps the figure for the test."""

    def __init__(self) -> None:
        self.figs: list[Any] = []
        self._plt = figures._pyplot()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._plt, name)

    def close(self, fig: Any) -> None:
        self.figs.append(fig)


@pytest.fixture
def kept(monkeypatch):
    keep = _Keep()
    monkeypatch.setattr(figures, "_pyplot", lambda: keep)
    yield keep
    for fig in keep.figs:
        keep._plt.close(fig)


def test_sweep_counts_have_integer_ticks_and_the_fair_share_is_a_reference(kept, tmp_path):
    counts = [1, 2, 5, 10, 15, 20]
    fair = figures.Series("fair share 1/(N+1)", [100 / (n + 1) for n in counts])
    figures.sweep(tmp_path / "s.png", "t", counts, [figures.Series("each", [40, 25, 12, 6, 4, 3])],
                  xlabel="flows", ylabel="share (%)", reference=fair, integer_x=True, logy=True, ylim=(1.8, 55))
    ax = kept.figs[0].axes[0]
    assert list(ax.get_xticks()) == counts
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["2", "5", "10", "20", "50"]
    ref = [line for line in ax.get_lines() if line.get_label() == "fair share 1/(N+1)"]
    assert len(ref) == 1
    assert ref[0].get_linestyle() == "--" and ref[0].get_color() == "gray" and ref[0].get_marker() in ("None", "")
    assert "fair share 1/(N+1)" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_zoomed_time_panels_scale_y_to_the_data_inside_the_window(kept, tmp_path):
    t = np.arange(1, 301) / 10.0
    y = np.where(t < 10, 1000.0, 20.0 + np.sin(t))  # a spike outside the zoom window
    figures.time_panels(tmp_path / "z.png", "t", t, [figures.Panel("y", [figures.Line("y", y)]),
                                                     figures.Panel("log", [figures.Line("y", y)], logy=True)],
                        xlim=(12.0, 22.0))
    lin, log = kept.figs[0].axes
    assert lin.get_ylim()[0] == 0.0 and 21.0 < lin.get_ylim()[1] < 23.0
    assert 15.0 < log.get_ylim()[0] < 19.0 and 21.0 < log.get_ylim()[1] < 25.0


def test_heatmaps_diverge_around_the_fair_share_without_overlapping_labels(kept, tmp_path):
    values = np.array([[10.0, 50.0, 90.0], [np.nan, 30.0, 70.0]])
    figures.heatmaps(tmp_path / "h.png", "t", [5, 10], [20, 50, 100], [("BBR", values), ("BBQ", values)],
                     row_label="short RTT (ms)", col_label="long RTT (ms)", value_label="share (%)",
                     vmin=0, vmax=100, center=50, cmap="RdBu")
    fig = kept.figs[0]
    left, right = fig.axes[0], fig.axes[1]
    image = left.get_images()[0]
    assert image.norm.vmin == 0 and image.norm.vmax == 100
    assert right.get_ylabel() == ""  # the shared row axis is labelled once
    renderer = fig.canvas.get_renderer()
    # The left panel's decorations (tick labels, axis labels) end before the
    # right panel's begin.
    assert left.get_tightbbox(renderer).x1 < right.get_tightbbox(renderer).x0


def _race_outcome(shares_a: list[float], quick: bool, first: int) -> Outcome:
    """A run whose flow A holds ``shares_a[k]`` of 90 Mbit/s in phase k."""
    ph = fig7.phases(quick, first)
    t = np.arange(1, int(ph[-1].end_s * 10) + 1) / 10.0
    a = np.zeros(len(t))
    for p, s in zip(ph, shares_a):
        a[(t > p.start_s) & (t <= p.end_s)] = 90.0 * s
    g = np.vstack([a, 90.0 - a])
    return Outcome("k", {"flows": []}, t, {"goodput_mbps": g, "srtt_ms": g}, {}, 0.0)


def test_only_the_flow_behind_cheats_and_a_failed_cheat_ends_the_race():
    quick = False
    # Honest phase: B is behind (A 52%), so the B-first run is the race.
    # B cheats and wins (A 30%), A cheats and wins (A 70%), B cheats and
    # fails (A 60%): the race is over; the last two phases do not count.
    shares = [0.52, 0.30, 0.70, 0.60, 0.20, 0.80]
    outcomes = {fig7._key("bbq", s, first): _race_outcome(shares, quick, first)
                for s in fig7.seeds(quick) for first in (0, 1)}
    races = fig7.races(outcomes, "bbq", quick)
    assert len(races) == 5 and all(r.first == 1 for r in races)
    race = races[0]
    assert [p.counted for p in race.phases] == [True, True, True, True, False, False]
    assert [p.phase.cheater for p in race.cheats] == [1, 0, 1]
    assert np.allclose(race.gains(), [0.70 - 0.48, 0.70 - 0.30, 0.40 - 0.30])
    assert race.wins() == 2
    n = fig7._numbers(races)
    assert n["cheats"] == 15 and n["cheats_won"] == 10 and n["cheats_gained"] == 15
    assert n["phases_settled"] == n["phases_judged"]  # constant shares: settled


def test_the_schedule_doubles_the_other_flows_rtt_alternately():
    ph = fig7.phases(False, first=1)
    assert [p.cheater for p in ph] == [None, 1, 0, 1, 0, 1]
    assert [p.rtt_ms for p in ph] == [(5, 5), (5, 10), (20, 10), (20, 40), (80, 40), (80, 160)]
    assert all(p.end_s - p.start_s == fig7.PHASE_S for p in ph)
