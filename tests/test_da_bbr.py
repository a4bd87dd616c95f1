"""DA-BBR (cc/da_bbr.c) in the simulator: the RTprop-rise exemption of its
gamma = RTT / (RTT + RTprop), on an RTT step.

DA-BBR scales the BDP behind its ProbeBW cwnd by gamma, except when
RTprop rose more than 20% since the previous bandwidth probe (a route
change): then the flow re-learns its operating point unscaled. The
reference is RTprop at the start of the previous probe, so the first probe
after the rise is exempt and, its RTprop being the new one, the probe after
it is scaled again.
"""

from __future__ import annotations

import ccarena

STEP_S = 4.0


def _probe_bw(ts: dict) -> list[tuple[float, int, bool, float, float]]:
    """Per sample: (t, cc_mode, in a ProbeBW 1.25 phase, rtt_ms, cc_var)."""
    return [
        (t, mode, mode == 2 and abs(gain - 1.25) < 1e-9, rtt, var)
        for t, mode, gain, rtt, var in zip(
            ts["t_s"], ts["cc_mode"], ts["pacing_gain"], ts["rtt_ms"], ts["cc_var"], strict=True
        )
    ]


def _phases(samples: list) -> list[list]:
    """The runs of consecutive samples in a 1.25 phase."""
    phases: list[list] = []
    prev = False
    for s in samples:
        if s[2] and not prev:
            phases.append([])
        if s[2]:
            phases[-1].append(s)
        prev = s[2]
    return phases


def test_the_first_probe_after_an_rtprop_rise_is_not_scaled_and_the_next_is():
    # One flow, 20 ms, whose path becomes 40 ms at 4 s. BBR's RTprop keeps
    # 20 ms until its 10-s filter expires (ProbeRTT at ~10 s), then is
    # ~41 ms: a 100% rise since the probe before ProbeRTT.
    doc = {
        "duration": "13s",
        "seed": 1,
        "bottleneck": {"rate": "20Mbit", "buffer": "1bdp"},
        "flow": [{"cc": "da_bbr", "rtt": "20ms", "rtt_schedule": [{"at": f"{STEP_S}s", "rtt": "40ms"}]}],
        "output": {"interval": "1ms"},
    }
    samples = _probe_bw(ccarena.run(doc).timeseries.to_pydict())
    # Before the step, every probe after the first is scaled (gamma < 1:
    # RTprop did not rise).
    before = [p for p in _phases([s for s in samples if 1.0 <= s[0] < STEP_S])]
    assert len(before) >= 10, len(before)
    assert all(var < 0.999 for p in before[1:] for *_, var in p), before
    # ProbeRTT after the step learns the new RTprop; then ProbeBW again.
    probe_rtt = [s[0] for s in samples if s[0] > STEP_S and s[1] == 3]
    assert probe_rtt, "no ProbeRTT after the step"
    after = [s for s in samples if s[0] > probe_rtt[-1]]
    assert after[0][1] == 2 and min(s[3] for s in after) >= 40.0, after[:3]
    # Two probes: the first after ProbeRTT, and the next (a 1.25 phase
    # lasts until in-flight reaches its target, so the next may run to the
    # end of the run).
    probes = _phases(after)
    assert len(probes) >= 2, len(probes)
    first, second = probes[0], probes[1]
    # The first probe is compared with the probe before the rise: it, and
    # the rest of its cycle, are not scaled (gamma reads 1) ...
    until_second = [s for s in after if s[0] < second[0][0]]
    assert all(var == 1.0 for *_, var in until_second), [s for s in until_second if s[4] != 1.0][:3]
    assert first[0] in until_second
    # ... and the next one with the first, at the same RTprop: scaled.
    assert all(var < 0.999 for *_, var in second), second
