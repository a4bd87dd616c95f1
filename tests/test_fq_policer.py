"""Fair queueing (`aqm = "fq"`, DRR) and the token-bucket policer, through
the real simulator: the behaviours they are known for, their errors, and
which live bottleneck runs them.

Tolerances come from runs over seeds 1-6 of the 120-s scenarios (figures
next to each test); every run here takes ~0.25 s of simulation.
"""

from __future__ import annotations

from functools import cache

import pytest

import ccarena
from ccarena.live.engine import check_supported
from ccarena.scenario import ResolvedScenario
from conftest import EXAMPLES, run_cli

pytestmark = pytest.mark.behaviour

SEEDS = (1, 2, 3)


@cache
def run(name: str, seed: int = 1, **overrides: str) -> ccarena.Result:
    return ccarena.run(EXAMPLES / f"{name}.toml", overrides={"seed": seed, **overrides})


def shares(result: ccarena.Result) -> list[float]:
    return [f["share"] for f in result.flows]


@pytest.mark.parametrize("seed", SEEDS)
def test_fq_gives_bbr_10ms_and_50ms_equal_shares(seed):
    # Under droptail the 50 ms flow takes ~92% (test_behaviour); per-flow
    # queues with DRR serve both backlogged flows the same bytes per round
    # whatever their RTT. Measured over seeds 1-6: the 10 ms flow's share
    # 0.5043-0.5056, Jain >= 0.99987. The +-0.03 band is 5x the largest
    # deviation from 0.5.
    fq = run("bbr-rtt-fq", seed)
    assert [(f["cc"], f["rtt_ms"]) for f in fq.flows] == [("bbr", 10.0), ("bbr", 50.0)]
    assert fq.scenario.config["bottleneck"]["aqm"] == "fq"
    assert all(abs(s - 0.5) <= 0.03 for s in shares(fq)), shares(fq)
    assert fq.summary["jain"] >= 0.99
    # The link stays full (measured 99.1-99.3%).
    assert fq.summary["utilization"] >= 0.97
    # The same pair in the same 2 MB droptail buffer: the unfairness fq fixes.
    droptail = run("bbr-rtt-fq", seed, **{"bottleneck.aqm": "droptail", "bottleneck.fq": None})
    assert droptail.flows[0]["share"] < 0.15, shares(droptail)


@pytest.mark.parametrize("seed", SEEDS)
def test_fq_splits_bbr_and_cubic_evenly_where_droptail_lets_bbr_dominate(seed):
    # BBR vs CUBIC at 10 ms in 0.5 BDP: droptail gives BBR ~89% (measured
    # 89.1-89.7% over seeds 1-6); under fq BBR's excess waits in, and is
    # dropped from, its own queue. Measured under fq: BBR 49.25-49.28%,
    # CUBIC 50.72-50.75%; the band is +-0.03 as above.
    fq = run("bbr-vs-cubic-shallow", seed, **{"bottleneck.aqm": "fq"})
    assert [f["cc"] for f in fq.flows] == ["bbr", "cubic"]
    assert all(abs(s - 0.5) <= 0.03 for s in shares(fq)), shares(fq)
    droptail = run("bbr-vs-cubic-shallow", seed)
    assert droptail.flows[0]["share"] >= 0.80, shares(droptail)
    # BBR loses less under fq: longest-queue drop trims BBR's own queue
    # instead of the shared tail. With ideal hosts 1030-1555 against ~14,000
    # retransmits over seeds 1-6 (9-14x); with the host model (the default)
    # 8201-9294 against 15226-15322 over seeds 1-3 (1.6-1.9x): the path's
    # stalls release what BBR paced meanwhile as one burst, which overflows
    # its own fq queue. Live Linux on the userspace fq bottleneck, 60 s:
    # 1414 (docs/host.md, "What it changes": a miss of the host model).
    assert fq.flows[0]["retransmits"] * 1.3 < droptail.flows[0]["retransmits"]


def test_fq_queue_telemetry_adds_up():
    # Per-flow queue bytes (timeseries) sum to the link's queue (link series)
    # at every sample, and the link's queue never exceeds the buffer.
    result = run("bbr-rtt-fq")
    flows = result.timeseries.to_pydict()
    link = result.link.to_pydict()
    n = len(result.flows)
    per_sample = [sum(flows["queue_bytes"][k * n:(k + 1) * n]) for k in range(len(link["queue_bytes"]))]
    assert per_sample == link["queue_bytes"]
    assert max(link["queue_bytes"]) <= result.scenario.config["bottleneck"]["buffer_bytes"]
    assert max(link["queue_bytes"]) > 0


@pytest.mark.parametrize(("seed", "rtt"), [(1, "40ms"), (2, "40ms"), (1, "10ms"), (2, "10ms")])
def test_a_policed_bbr_flow_gets_the_policer_rate(seed, rtt):
    # One BBR flow, 100 Mbit/s link, 50 Mbit/s policer (64 kB burst). The
    # policer counts wire bytes, retransmissions included, so the goodput
    # ceiling is 50 x 1448/1514 = 47.82 Mbit/s. Measured (seeds 1-4, 10 and
    # 40 ms): goodput 46.70-46.94 Mbit/s = 97.7-98.2% of it; the link
    # carried 48.84-49.07 Mbit/s of wire bytes; ~10-13k policer drops.
    result = run("bbr-policer", seed, **{"flow.0.rtt": rtt})
    policer_mbps = result.scenario.config["bottleneck"]["policer"]["rate_bps"] / 1e6
    window_s = result.summary["window"]["to_s"] - result.summary["window"]["from_s"]
    burst_mbps = result.scenario.config["bottleneck"]["policer"]["burst_bytes"] * 8 / window_s / 1e6
    ceiling = policer_mbps * 1448 / 1514 + burst_mbps
    goodput = result.flows[0]["goodput_mbps"]
    assert 0.95 * ceiling <= goodput <= ceiling, (goodput, ceiling)
    link_mbps = result.summary["utilization"] * result.scenario.config["bottleneck"]["rate_bps"] / 1e6
    assert link_mbps <= policer_mbps + burst_mbps + 0.01, link_mbps
    # The policer's drops are the run's drops, and every one is a flow's.
    assert result.summary["drops"] > 1000
    assert result.summary["conservation"]["flows"][0]["balanced"]


def test_a_policer_above_the_link_rate_changes_nothing():
    # A bucket refilled at twice the link rate: one BBR flow, paced at most
    # ~2.9x its delivery rate in Startup, never empties the 64 kB burst
    # here, so the run is the one without a policer (it uses no RNG).
    # Ideal hosts: the host model's stalls release bursts a 64-kB bucket
    # does not hold (133 drops with the default host), a different question.
    plain = run("bbr-policer", **{"bottleneck.policer": None, "host": "ideal"})
    loose = run("bbr-policer", **{"bottleneck.policer.rate": "200Mbit", "host": "ideal"})
    assert loose.summary["drops"] == plain.summary["drops"]
    assert loose.flows[0]["goodput_mbps"] == plain.flows[0]["goodput_mbps"]


BAD = {
    "policer-zero-rate": (['bottleneck.policer={rate = "0Mbit", burst = "64KB"}'], "bottleneck.policer.rate",
                          "must be > 0"),
    "policer-tiny-burst": (['bottleneck.policer={rate = "5Mbit", burst = "100B"}'], "bottleneck.policer.burst",
                           "less than one packet"),
    "policer-no-rate": (['bottleneck.policer={burst = "64KB"}'], "bottleneck.policer.rate", "required key is missing"),
    "fq-table-without-fq": (['bottleneck.fq={quantum = "3000B"}'], "bottleneck.fq", 'set aqm = "fq"'),
    "fq-quantum-zero": (["bottleneck.aqm=fq", "bottleneck.fq.quantum=0B"], "bottleneck.fq.quantum", "must be > 0"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_fq_or_policer_is_one_line_exit_2(tmp_path, case):
    overrides, field, fragment = BAD[case]
    sets = [arg for item in overrides for arg in ("--set", item)]
    proc = run_cli("run", EXAMPLES / "bbr-rtt-unfairness.toml", *sets, "--out", tmp_path / "out")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ccarena: error: {field}: "), proc.stderr
    assert fragment in lines[0]
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def _live(name: str, **overrides) -> ResolvedScenario:
    from ccarena.live.engine import load_live_scenario

    return load_live_scenario(EXAMPLES / f"{name}.toml", overrides)


def test_live_runs_fq_and_the_policer_on_the_userspace_bottleneck():
    # The kernel bottleneck is TBF + bfifo: fq and the policer are the
    # simulator's queue code inside the delay line.
    assert check_supported(_live("bbr-rtt-unfairness")) == "kernel"
    assert check_supported(_live("bbr-rtt-fq")) == "userspace"
    assert check_supported(_live("bbr-policer")) == "userspace"
    with pytest.raises(ccarena.ScenarioError, match="cannot do a policer"):
        check_supported(_live("bbr-policer"), "kernel")
    with pytest.raises(ccarena.ScenarioError, match="cannot do aqm = \"fq\""):
        check_supported(_live("bbr-rtt-fq"), "kernel")
