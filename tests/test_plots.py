"""goodput.png: what the figure draws (its artists and their data, not its
pixels), and that the same run gives the same bytes."""

from __future__ import annotations

import numpy as np
import pytest

import ccarena
from ccarena import plots
from conftest import EXAMPLES

SQUARE_TRACE = EXAMPLES / "traces" / "square-24-6mbit.trace"  # 1 s at 24 Mbit/s, 1 s at 6


def _scenario(bottleneck: dict, measure_from: str = "2s") -> dict:
    return {
        "duration": "6s",
        "seed": 1,
        "measure": {"from": measure_from},
        "bottleneck": {"buffer": "100KB", **bottleneck},
        "flow": [{"cc": "bbr", "rtt": "20ms"}, {"cc": "cubic", "rtt": "20ms"}],
    }


def _capacity_lines(fig):
    top = fig.axes[0]
    return [line for line in top.get_lines() if line.get_label() == plots.CAPACITY_LABEL]


@pytest.fixture(scope="module")
def trace_run():
    return ccarena.run(_scenario({"trace": str(SQUARE_TRACE)}))


def test_a_trace_run_draws_the_links_capacity_per_interval(trace_run):
    (line,) = _capacity_lines(plots.goodput_figure(trace_run))
    link = trace_run.link
    # Each sample is the trace's capacity over the interval ending at it.
    assert line.get_drawstyle() == "steps-pre"
    assert np.array_equal(line.get_xdata(), link.column("t_s").to_numpy())
    assert np.array_equal(line.get_ydata(), link.column("rate_mbps").to_numpy())
    # The square wave's two rates (with the wire's packet granularity).
    rates = np.asarray(line.get_ydata())
    assert rates.max() == pytest.approx(24, rel=0.05) and rates.min() == pytest.approx(6, rel=0.05)
    assert "link capacity" in [t.get_text() for t in plots.goodput_figure(trace_run).axes[0].get_legend().get_texts()]


def test_a_rate_schedule_draws_its_steps_at_their_instants():
    schedule = [{"at": "2s", "rate": "20Mbit"}, {"at": "4.05s", "rate": "80Mbit"}]
    result = ccarena.run(_scenario({"rate": "50Mbit", "schedule": schedule}))
    (line,) = _capacity_lines(plots.goodput_figure(result))
    assert line.get_drawstyle() == "steps-post"
    assert list(line.get_xdata()) == [0.0, 2.0, 4.05, 6.0]
    assert list(line.get_ydata()) == [50.0, 20.0, 80.0, 80.0]


def test_a_constant_rate_draws_no_capacity_line():
    result = ccarena.run(_scenario({"rate": "50Mbit"}))
    assert _capacity_lines(plots.goodput_figure(result)) == []


@pytest.mark.parametrize("measure_from", ["2s", "5s"])
def test_the_window_label_sits_above_the_data_inside_the_figure(measure_from):
    result = ccarena.run(_scenario({"rate": "50Mbit"}, measure_from))
    fig = plots.goodput_figure(result)
    fig.draw_without_rendering()
    top = fig.axes[0]
    (label,) = [t for t in top.texts if t.get_text() == plots.WINDOW_LABEL]
    box = label.get_window_extent()
    data = top.get_window_extent()
    # Above the goodput panel's data area, below its title, within the figure.
    assert box.y0 >= data.y1
    assert box.y1 <= top.title.get_window_extent().y0
    assert 0 <= box.x0 and box.x1 <= fig.bbox.x1
    assert data.x0 <= box.x0 and box.x1 <= data.x1  # over the axes it labels
    # It starts at the window's start, or ends at its end when the window
    # lies in the right half (so that it stays over the axes).
    to_pixels = top.transData.transform
    if measure_from == "2s":
        assert box.x0 == pytest.approx(to_pixels((2.0, 0))[0], abs=1)
    else:
        assert box.x1 == pytest.approx(to_pixels((6.0, 0))[0], abs=1)


def test_the_same_run_gives_the_same_png_bytes(trace_run, tmp_path):
    plots.plot_goodput(trace_run, tmp_path / "a.png")
    plots.plot_goodput(trace_run, tmp_path / "b.png")
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
