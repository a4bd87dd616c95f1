"""Pieces of the live testbed that need neither root nor a kernel."""

from __future__ import annotations

from ccarena.live import testbed


def test_cpumask_is_sysfs_format_in_32_bit_words():
    # /sys/class/net/*/queues/rx-*/rps_cpus takes comma-separated 32-bit
    # hex words, the highest first (the format Linux prints them in).
    assert testbed.cpumask([1]) == "00000002"
    assert testbed.cpumask([1, 2, 3]) == "0000000e"
    assert testbed.cpumask([0, 33]) == "00000002,00000001"
    assert testbed.cpumask([64]) == "00000001,00000000,00000000"


def test_the_receivers_socket_buffer_is_the_simulators():
    # The simulated receiver's window growth (crates/sim/src/rcvbuf.rs)
    # starts from tcp_rmem[1] and stops at tcp_rmem[2] as the testbed's
    # receiver sets them.
    from ccarena import _core

    _, default, ceiling = map(int, testbed._TCP_MEM.split())
    assert _core.receiver_buffer() == (default, ceiling)



def test_separate_senders_have_a_namespace_each_and_shared_ones_one():
    shared = testbed.Names.for_prefix("ccalive-1-")
    assert shared.senders == () and shared.sending() == ["ccalive-1-tx"]
    assert shared.all() == ["ccalive-1-tx", "ccalive-1-rt", "ccalive-1-rx"]
    separate = testbed.Names.for_prefix("ccalive-1-", 3)
    assert separate.sending() == ["ccalive-1-tx0", "ccalive-1-tx1", "ccalive-1-tx2"]
    # Every namespace of a run is under its prefix: teardown and cleanup
    # (hygiene.py) find them all.
    assert len(separate.all()) == 6 and all(ns.startswith("ccalive-1-") for ns in separate.all())


def _losses(counters, sender_netstat):
    sender = {"final": [{"data_segs_out": 10, "unacked": 0, "total_retrans": 0}], "netstat": sender_netstat}
    return testbed.loss_report(counters, {}, False, sender, {"data_segs_in": [10]})["testbed"]


def test_loss_accounting_counts_every_sender_veth_and_namespace():
    links = {"cca-tx0": {"tx_dropped": 1, "rx_dropped": 0}, "cca-tx1": {"tx_dropped": 2, "rx_dropped": 0},
             "cca-rtt0": {"tx_dropped": 3, "rx_dropped": 0}, "cca-rt-tx": {"tx_dropped": 4, "rx_dropped": 0}}
    counters = {"links": links, "qdiscs": {}, "tx": {"TcpExt.TCPRetransFail": 5}, "rt": {}, "rx": {},
                "separate_senders": True}
    got = _losses(counters, {"TcpExt.TCPRetransFail": 99})
    assert (got["sender_to_router"], got["router_to_sender"], got["sender_tcp"]) == (3, 7, 5)
    # Shared: the sender's own reading (taken with its TCP_INFO) counts.
    assert _losses({**counters, "separate_senders": False}, {"TcpExt.TCPRetransFail": 99})["sender_tcp"] == 99


def test_compare_can_give_the_simulator_the_bpf_builds_loss_signals(tmp_path):
    """`ccarena compare --sim-signals bpf`: the simulator runs the same
    estimates of tx_in_flight and lost as the BPF build (on the flows whose
    algorithm has them), so both engines run the same C; the live run
    and the default are untouched."""
    from ccarena.cli import _parser
    from ccarena.live import compare

    s = tmp_path / "s.toml"
    s.write_text('duration = "10s"\n[bottleneck]\nrate = "100Mbit"\nbuffer = "1bdp"\n'
                 '[[flow]]\ncc = "bbr2"\nrtt = "40ms"\n[[flow]]\ncc = "cubic"\nrtt = "40ms"\n')
    exact, live = compare.load_both(s)
    bpf, live_bpf = compare.load_both(s, sim_signals="bpf")
    assert "estimate_tx_signals" not in exact.human["flow"][0].get("params", {})
    assert bpf.human["flow"][0]["params"]["estimate_tx_signals"] == 1
    assert "estimate_tx_signals" not in (bpf.human["flow"][1].get("params") or {})  # CUBIC has no such parameter
    assert live.human == live_bpf.human
    choices = next(a for a in _parser()._subparsers._group_actions[0].choices["compare"]._actions
                   if a.dest == "sim_signals").choices
    assert tuple(choices) == compare.SIM_SIGNALS


def test_the_kernel_bbrs_mode_follows_from_its_gains():
    """TCP_CC_INFO has no mode: tcp_bbr.c's gains give it (Startup 739/256,
    Drain 88/256, ProbeBW cwnd_gain 2, ProbeRTT cwnd_gain 1)."""
    from ccarena.live.rawresult import kernel_bbr_mode

    assert kernel_bbr_mode(739 / 256, 739 / 256) == 0
    assert kernel_bbr_mode(88 / 256, 739 / 256) == 1
    assert [kernel_bbr_mode(g, 2.0) for g in (1.25, 0.75, 1.0)] == [2, 2, 2]
    assert kernel_bbr_mode(1.0, 1.0) == 3
    assert kernel_bbr_mode(0.0, 0.0) == 0  # zeros before the first ACK: Startup, not ProbeRTT
    assert kernel_bbr_mode(1.0, 1.0, since_start_ns=20_000_000) == 0  # gains of 1 before it, too
    assert kernel_bbr_mode(1.0, 1.0, since_start_ns=10_500_000_000) == 3


def test_a_window_from_the_start_with_the_userspace_bottleneck_counts_marks():
    """The counters before the first tick are zeros without ECN marks; a
    window from 0 s took them as its start (KeyError 'marks', seen on
    bbr-fig3's live pass: a rate schedule, so the userspace bottleneck)."""
    from ccarena.live.rawresult import build_raw

    cfg, rx, tx = _one_flow_two_ticks()
    link = {"bytes": 0, "packets": 0, "drops": 0, "backlog": 0, "rate_bps": 10_000_000, "sojourn_sum_ns": 0,
            "sojourn_count": 0, "flow_backlog": [0], "marks": 0, "flow_marks": [0], "max_backlog": 0}
    samples = {1: {**link, "bytes": 10_000, "packets": 7, "marks": 2}, 2: {**link, "bytes": 20_000, "packets": 14,
                                                                          "marks": 3}}
    raw = build_raw(cfg, rx, tx, samples, userspace={"link": {**samples[2], "sojourn_p50_us": None}})
    assert raw["link"]["marks_window"] == 3


def _one_flow_two_ticks() -> tuple[dict, dict, dict]:
    """build_raw's inputs for one BBR flow over two 10-ms ticks: the
    scenario's config and the receiver's and sender's documents."""
    from ccarena import load_scenario

    cfg = load_scenario({"duration": "20ms", "output": {"interval": "10ms"}, "host": "ideal",
                         "bottleneck": {"rate": "10Mbit", "buffer": "100KB"},
                         "flow": [{"cc": "bbr", "rtt": "40ms"}]}).config
    row = [10, 5, 1e7, 40_000, 40_000, 0, 0, 1e7, 1.25, 2.0, 1e7, None, None, None]
    rx = {"bytes": [[9_000], [19_000]], "data_segs_in": [13]}
    tx = {"samples": [[row], [row]], "final": [{"data_segs_out": 14, "total_retrans": 0, "unacked": 0}]}
    return cfg, rx, tx


def test_a_flows_queue_is_null_behind_the_kernel_bottleneck_and_counted_behind_the_delay_line():
    """The kernel's bfifo keeps no per-flow backlog: the live engine reports
    null there, not 0 (a 0 read as "BBR-CWS keeps no queue" in cws-fig9-12's
    first live pass); the delay line's count where it is the bottleneck."""
    from ccarena.live.rawresult import build_raw

    cfg, rx, tx = _one_flow_two_ticks()
    kernel = {k: {"bytes": 10_000 * k, "packets": 7 * k, "drops": 0, "backlog": 3_000, "rate_bps": 10_000_000}
              for k in (1, 2)}
    assert build_raw(cfg, rx, tx, kernel)["flow_series"]["queue_bytes"] == [None, None]
    link = {"bytes": 0, "packets": 0, "drops": 0, "backlog": 3_000, "rate_bps": 10_000_000, "sojourn_sum_ns": 0,
            "sojourn_count": 0, "flow_backlog": [3_000], "max_backlog": 3_000, "marks": 0, "flow_marks": [0]}
    delay_line = {k: {**link, "bytes": 10_000 * k, "packets": 7 * k} for k in (1, 2)}
    raw = build_raw(cfg, rx, tx, delay_line, userspace={"link": {**delay_line[2], "sojourn_p50_us": None}})
    assert raw["flow_series"]["queue_bytes"] == [3_000, 3_000]


def test_the_mode_numbers_are_bbr_cores():
    """cc_modes.py's numbers are cc/include/bbr_core.h's enum bbr_mode."""
    import re
    from pathlib import Path

    from ccarena import cc_modes

    header = (Path(__file__).resolve().parent.parent / "cc" / "include" / "bbr_core.h").read_text()
    enum = dict(re.findall(r"BBR_(STARTUP|DRAIN|PROBE_BW|PROBE_RTT) = (\d+)", header))
    assert {name: getattr(cc_modes, name) for name in enum} == {name: int(v) for name, v in enum.items()}
    assert len(enum) == 4
