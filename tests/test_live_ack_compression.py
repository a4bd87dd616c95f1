"""ACK compression in the live engine: our BPF algorithms report BBR's
ACK-aggregation estimate (extra_acked) through their per-socket trace
record (CCA_TRACE_EXTRA_ACKED, ccarena.live.cctrace), the delay line times
the ACKs reaching the sender (ack_gap_p10_us, ack_gap_p50_us), and
reverse traffic, which compresses a flow's ACKs in the reverse queue,
raises the one and shortens the other as in the simulator
(tests/test_topology.py, test_reverse_traffic_raises_bbrs_extra_acked).

Root and the built delay line are needed (test_live.py's fixtures); the
tests skip otherwise.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

# test_live's pytestmark: root, the delay line and iproute2, else skip.
from test_live import clean_host, live_cli, pytestmark  # noqa: F401  (a fixture, the marks)

from ccarena.errors import ScenarioError
from ccarena.live.engine import load_live_scenario
from ccarena.live.hostmodel import MAX_ATTEMPTS_PER_RUN

#: Our BBR (BPF, so it reports its state) up a 20 Mbit/s link; the
#: kernel's CUBIC next to it reports nothing.
DUMBBELL = """
duration = "10s"
[measure]
from = "2s"
[bottleneck]
rate = "20Mbit"
buffer = "1bdp"
[[flow]]
cc = "bbr@ccarena"
rtt = "40ms"
[[flow]]
cc = "cubic"
rtt = "40ms"
"""

#: tests/test_topology.py's two_way(): BBR up, its ACKs down; with the
#: reverse flow, CUBIC down from the start, its ACKs up.
TWO_WAY = """
duration = "10s"
[measure]
from = "3s"
[[link]]
name = "up"
rate = "20Mbit"
buffer = "1bdp"
[[link]]
name = "down"
rate = "20Mbit"
buffer = "1bdp"
[[flow]]
cc = "bbr@ccarena"
rtt = "40ms"
path = ["up"]
reverse = ["down"]
"""
REVERSE_FLOW = """
[[flow]]
cc = "cubic"
rtt = "40ms"
path = ["down"]
reverse = ["up"]
"""


def _run(tmp_path: Path, name: str, text: str) -> dict[str, list]:
    """`ccarena live run` of a scenario; its timeseries.parquet as columns
    (skips if BPF algorithms cannot be loaded here)."""
    scenario = tmp_path / f"{name}.toml"
    scenario.write_text(text)
    done = live_cli("live", "run", scenario, "--out", tmp_path / name)
    if done.returncode == 2 and "flow[0].cc" in done.stderr:
        pytest.skip(f"cannot load BPF congestion controls here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    return pq.read_table(tmp_path / name / "timeseries.parquet").to_pydict()


def _of_flow(t: dict[str, list], flow: int, column: str, after_s: float) -> list:
    return [x for f, ts, x in zip(t["flow"], t["t_s"], t[column], strict=True) if f == flow and ts > after_s]


def test_our_bbr_reports_extra_acked_live(clean_host, tmp_path):
    """The extra_acked column is BBR's filter, in packets, from its first
    ACKs on (0 at init): a whole number, never above its cwnd; the
    kernel's CUBIC reports none (null)."""
    pytest.importorskip("ccarena.kernel", reason="the BPF loader (ccarena.kernel) is not part of this checkout")
    t = _run(tmp_path, "dumbbell", DUMBBELL)
    extra = _of_flow(t, 0, "extra_acked", 1.0)
    cwnd = _of_flow(t, 0, "cwnd", 1.0)
    assert extra and all(x is not None and x == int(x) and 0 <= x <= c for x, c in zip(extra, cwnd, strict=True))
    assert set(_of_flow(t, 1, "extra_acked", 0.0)) == {None}


#: Half a 1514-byte packet's time at 20 Mbit/s, µs: two ACKs closer than
#: this left a queue back to back (nothing of the other flow between them).
BACK_TO_BACK_US = 1514 * 8 / 20 / 2


def _reverse_pair(tmp_path: Path, attempt: int) -> dict[str, dict[str, float]]:
    """One run alone and one with the reverse CUBIC flow: BBR's
    extra_acked (mean, 90th percentile) and the share of 100-ms samples
    whose ACK gaps' 10th percentile is under BACK_TO_BACK_US (the
    simulator's test's measure, tests/test_topology.py), after 3 s."""
    pair = {}
    for name, text in (("alone", TWO_WAY), ("loaded", TWO_WAY + REVERSE_FLOW)):
        t = _run(tmp_path, f"{name}-{attempt}", text)
        extra = np.array(_of_flow(t, 0, "extra_acked", 3.0), dtype=float)
        assert len(extra) and not np.isnan(extra).any()
        gaps = np.array(_of_flow(t, 0, "ack_gap_p10_us", 3.0), dtype=float)
        pair[name] = {"mean": extra.mean(), "p90": np.percentile(extra, 90),
                      "back_to_back": float(np.mean(gaps[np.isfinite(gaps)] < BACK_TO_BACK_US))}
    return pair


def test_reverse_traffic_raises_extra_acked_live(clean_host, tmp_path):
    """As in the simulator: BBR's extra_acked is higher with a CUBIC flow
    sending the other way (its ACKs queue behind CUBIC's data and arrive
    in bunches) than alone, in mean and 90th percentile. The ACKs' gaps
    show why, as in the simulator's test: in a good part of the 100-ms
    samples loaded their 10th percentile is under half a packet's time
    (ACKs back to back), in almost none alone (every pair must show
    this). Measured 2026-11-29: live 0.49-0.51 loaded (three runs), 0.00 alone; the
    simulator 0.31-0.49 loaded over seeds 1-5, 0.00 alone over seeds 1-3.
    (The median over samples of that 10th percentile, the measure before,
    is bimodal in both engines, 159-1238 µs live and 632-1238 µs
    simulated: it falls where half the samples are.) Runs once the live
    engine carries [[link]] topologies (skips, saying why, where it
    refuses them).

    A live host can compress the lone flow's ACKs itself: on a busy CI
    machine (2026-11-28) its filter sat at 6-9 packets and then 13-18 for
    seconds, against 3 on a quiet one, above the loaded run's mean (on this
    testbed: alone mean 3.4-4.6, loaded 10.4-12.1 over four pairs). So the
    filter's comparison is taken over up to MAX_ATTEMPTS_PER_RUN pairs (the
    host measurement's own bound) and holds when one pair shows it."""
    pytest.importorskip("ccarena.kernel", reason="the BPF loader (ccarena.kernel) is not part of this checkout")
    try:
        load_live_scenario(TWO_WAY + REVERSE_FLOW)  # what the engine checks before a run
    except ScenarioError as err:
        pytest.skip(f"the live engine refuses this topology: {err}")
    pairs = []
    for attempt in range(MAX_ATTEMPTS_PER_RUN):
        pair = _reverse_pair(tmp_path, attempt)
        pairs.append(pair)
        alone, loaded = pair["alone"], pair["loaded"]
        assert loaded["back_to_back"] >= 0.2 and loaded["back_to_back"] >= alone["back_to_back"] + 0.15, pairs
        if loaded["mean"] > alone["mean"] and loaded["p90"] >= 1.5 * alone["p90"]:
            return
    pytest.fail(f"extra_acked not raised by reverse traffic in {len(pairs)} pairs of runs: {pairs}")
