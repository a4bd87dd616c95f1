"""ccarena.kernel and `ccarena kernel`: our cc/*.c as BPF struct_ops in the
running kernel.

Three groups:
- names, parameters and refusals, with prerequisites simulated by
  monkeypatching (no root needed);
- round trips that really register (root, BTF, Linux >= 6.10, clang,
  bpftool), checked against /proc's list of available congestion controls;
- real TCP traffic in network namespaces this module creates and deletes:
  one cc_bbr flow over loopback, and our BBR against the kernel's built-in
  bbr through a 100 Mbit/s TBF bottleneck.

Every test that registers leaves the kernel as it found it (asserted), and
every namespace it creates is deleted (asserted).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ccarena import _core, kernel
from ccarena.cli import main
from ccarena.errors import ScenarioError
from ccarena.scenario import load_scenario, param_specs
from ccarena.kernel import owners, paths, prereqs, struct_ops

REPO = Path(__file__).resolve().parent.parent
OURS = sorted(p.stem for p in (REPO / "cc").glob("*.c"))
AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


def _missing() -> list[str]:
    missing = []
    if os.geteuid() != 0:
        missing.append("root")
    if not Path("/sys/kernel/btf/vmlinux").exists():
        missing.append("kernel BTF")
    elif prereqs.kernel_version(prereqs.kernel_release()) < prereqs.MIN_KERNEL:
        missing.append("Linux >= 6.10")
    missing += [t for t in ("clang", "bpftool", "ip", "tc", "ss") if shutil.which(t) is None]
    if not prereqs.LIBBPF_HEADER.exists():
        missing.append("libbpf-dev")
    return missing


MISSING = _missing()
needs_kernel = pytest.mark.skipif(bool(MISSING), reason=f"needs {', '.join(MISSING)} to load BPF congestion controls")


def available() -> list[str]:
    return AVAILABLE.read_text().split()


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


# --------------------------------------------------------------- names


def test_kernel_names_map_to_the_kernels_and_ports_to_cc_prefix() -> None:
    assert kernel.resolve("bbr").kernel_name == "bbr"
    assert not kernel.resolve("cubic").ours
    assert kernel.resolve("reno").kernel_name == "reno"
    port = kernel.resolve("bbr@ccarena")
    assert port.ours and port.source == "bbr" and port.kernel_name == "cc_bbr"
    assert kernel.resolve("cc_cubic").kernel_name == "cc_cubic"
    if "bbq" in OURS:  # not a kernel name: a plain name means ours
        assert kernel.resolve("bbq").kernel_name == "cc_bbq"


def _cubic_param() -> tuple[str, float, float]:
    """CUBIC's second tunable, its beta, as a scenario names and writes it:
    key, default, another value."""
    spec = param_specs("cubic")[1]
    assert spec.kind == "fraction"
    return spec.key, spec.human(spec.default), 0.63


def test_parameter_variants_get_distinct_short_names() -> None:
    key, default, other = _cubic_param()
    a = kernel.resolve("cubic@ccarena", {key: other})
    b = kernel.resolve("cubic@ccarena", {key: other - 0.01})
    assert a.kernel_name != b.kernel_name
    assert a.kernel_name.startswith("cc_cubic_") and len(a.kernel_name) <= 15
    assert kernel.resolve("cubic@ccarena", {key: other}).kernel_name == a.kernel_name
    assert dict(a.changed) == {key: other}
    # All defaults: the plain object, not a variant.
    assert kernel.resolve("cubic@ccarena", {key: default}).kernel_name == "cc_cubic"


def test_kernel_params_are_the_scenarios_keys_units_and_values() -> None:
    """One name per parameter: `--param` / the API take a scenario's
    params table as it is written, and give the same vector as the
    scenario does; kernel list shows them in that form."""
    params = {"alpha": "1ms", "beta": "2%", "first_cut": 1}
    target = kernel.resolve("bbq", params)
    scenario = load_scenario({"duration": "3s", "bottleneck": {"rate": "10Mbit", "buffer": "1bdp"},
                              "flow": [{"cc": "bbq", "rtt": "20ms", "params": params}]})
    assert list(target.params) == scenario.config["flows"][0]["params"]
    assert target.changed == (("alpha", "1ms"), ("beta", 0.02), ("first_cut", 1))
    assert target.describe() == "bbq alpha=1ms beta=0.02 first_cut=1"
    # The same values written otherwise are the same variant.
    assert kernel.resolve("bbq", {"alpha": "1000us", "beta": 0.02, "first_cut": 1}).kernel_name == target.kernel_name


def _scenario_problem(params: dict[str, object]) -> str:
    """What the scenario says about a flow's params, less the field."""
    doc = {"duration": "3s", "bottleneck": {"rate": "10Mbit", "buffer": "1bdp"},
           "flow": [{"cc": "bbq", "rtt": "20ms", "params": params}]}
    with pytest.raises(ScenarioError) as err:
        load_scenario(doc)
    assert err.value.path == f"flow[0].params.{next(iter(params))}"
    return err.value.problem


@pytest.mark.parametrize(
    ("item", "value"),
    [
        ("alpha_us=3000", 3000),  # the C table's name: refused with the scenario's hint
        ("alpha=3000", 3000),  # a time needs its unit, as in a scenario
        ("beta=x", "x"),
        ("first_cut=-1", -1),
        ("no_such=1", 1),
    ],
)
def test_cli_param_refusals_are_the_scenarios(capsys: pytest.CaptureFixture[str], item: str, value: object) -> None:
    key = item.split("=")[0]
    status, out, err = run_cli(capsys, "kernel", "load", "bbq", "--param", item)
    assert status == 2 and out == ""
    assert err.splitlines() == [f"ccarena: error: --param {key}: {_scenario_problem({key: value})}"]
    if key == "alpha_us":
        assert "did you mean 'alpha'?" in err and "(known: " in err and " alpha, beta, first_cut)" in err


def test_cli_param_without_equals_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_cli(capsys, "kernel", "load", "bbq", "--param", "alpha")
    assert status == 2 and err == "ccarena: error: --param: expected key=value, got 'alpha'\n"


@pytest.mark.parametrize(
    ("spec", "params", "words"),
    [
        ("foo", None, "unknown congestion control 'foo'"),
        ("foo@ccarena", None, "unknown congestion control 'foo@ccarena'"),
        ("bbr", {"any": 300}, "use 'bbr@ccarena'"),
        ("bbr@ccarena", {"no_such": 1}, "params.no_such: unknown parameter for cc 'bbr'"),
        ("cubic@ccarena", {"beta": -1}, "params.beta: must be >= 0"),
        ("cubic@ccarena", [1, -1], "expected 9 parameter values in index order"),
        ("cubic@ccarena", [1, -1, 0, 41, 1, 1, 3, 16, 2000], "parameter 'beta' must be an integer in [0, 2^64)"),
    ],
)
def test_bad_names_and_params_are_refused(spec: str, params: Any, words: str) -> None:
    with pytest.raises(kernel.KernelError) as err:
        kernel.ensure_available(spec, params)
    assert words in str(err.value)


def test_verifier_log_excerpt_names_program_reason_and_source_line() -> None:
    stderr = textwrap.dedent(
        """\
        libbpf: prog 'x_init': BPF program load failed: Permission denied
        libbpf: prog 'x_init': -- BEGIN PROG LOAD LOG --
        0: R1=ctx() R10=fp0
        ; tcp_sk(sk)->snd_una = 5; @ x.c:2
        0: (79) r1 = *(u64 *)(r1 +0)
        1: R1=trusted_ptr_tcp_sock()
        1: (b7) r2 = 5                        ; R2=5
        2: (63) *(u32 *)(r1 +1672) = r2
        3: (63) *(u32 *)(r1 +1672) = r2
        4: (63) *(u32 *)(r1 +1672) = r2
        no write support to tcp_sock at off 1672
        processed 3 insns (limit 1000000) max_states_per_insn 0 total_states 0
        -- END PROG LOAD LOG --
        libbpf: failed to load object 'x.o'
        """
    )
    prog, reason, lines = struct_ops.verifier_excerpt(stderr, keep=4)
    assert prog == "x_init"
    assert reason == "no write support to tcp_sock at off 1672"
    assert lines[0] == "; tcp_sk(sk)->snd_una = 5; @ x.c:2"
    assert lines[-1] == reason and len(lines) == 4


# ------------------------------------------------- refusals (CLI, exit 2)


def test_cli_unknown_name_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli(capsys, "kernel", "load", "nope")
    assert status == 2 and out == ""
    assert err.strip().splitlines() == [
        f"ccarena: error: unknown congestion control 'nope' (ccarena's: {', '.join(kernel.resolve(n + '@ccarena').spec if n in kernel.KERNEL_BUILTINS else n for n in OURS)})"
    ]


def test_cli_kernel_builtin_is_not_ours_to_load(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_cli(capsys, "kernel", "load", "bbr")
    assert status == 2
    assert "load ccarena's port as 'bbr@ccarena'" in err and len(err.strip().splitlines()) == 1


def test_cli_refuses_without_root(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prereqs, "is_root", lambda: False)
    for argv in (["load", "bbr@ccarena"], ["unload", "bbr@ccarena"]):
        status, _, err = run_cli(capsys, "kernel", *argv)
        assert status == 2
        assert err.count("\n") == 1 and "needs root" in err, err


def test_cli_refuses_old_kernel(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prereqs, "is_root", lambda: True)
    monkeypatch.setattr(prereqs, "kernel_release", lambda: "6.1.0-13-amd64")
    monkeypatch.setattr(paths, "VMLINUX_BTF", Path("/proc/self/status"))  # exists
    status, _, err = run_cli(capsys, "kernel", "load", "reno@ccarena")
    assert status == 2 and err.count("\n") == 1
    assert "kernel 6.1.0-13-amd64 is too old" in err and ">= 6.10" in err


def test_cli_refuses_without_btf(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(prereqs, "is_root", lambda: True)
    monkeypatch.setattr(paths, "VMLINUX_BTF", tmp_path / "no-btf")
    status, _, err = run_cli(capsys, "kernel", "load", "reno@ccarena")
    assert status == 2 and err.count("\n") == 1 and "has no BTF" in err


def test_cli_refuses_missing_tools(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prereqs, "is_root", lambda: True)
    monkeypatch.setattr(prereqs, "kernel_release", lambda: "6.12.0")
    monkeypatch.setattr(paths, "VMLINUX_BTF", Path("/proc/self/status"))
    monkeypatch.setenv("CCARENA_CLANG", "/nonexistent/clang")
    status, _, err = run_cli(capsys, "kernel", "load", "reno@ccarena")
    assert status == 2 and err.count("\n") == 1 and "clang not found" in err


def test_cli_unload_of_unregistered_or_foreign_names(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_cli(capsys, "kernel", "unload", "cc_nope")
    assert status == 2 and "cc_nope is not registered" in err
    status, _, err = run_cli(capsys, "kernel", "unload", "cubic")
    assert status == 2 and "'cubic' is the kernel's own" in err


@pytest.mark.skipif(shutil.which("bpftool") is None, reason="needs bpftool")
def test_cli_unload_refuses_the_hosts_default(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The default holds a reference new sockets would keep getting."""
    monkeypatch.setattr(prereqs, "is_root", lambda: True)
    monkeypatch.setattr(struct_ops, "default_cc", lambda: "cc_reno")
    status, _, err = run_cli(capsys, "kernel", "unload", "reno@ccarena")
    assert status == 2 and err.count("\n") == 1
    assert "cc_reno is this host's default congestion control" in err
    assert "sysctl -w net.ipv4.tcp_congestion_control=" in err


def test_cli_list_shows_ours_and_the_kernels(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(capsys, "kernel", "list")
    assert status == 0
    for name in OURS:
        assert f"cc_{name}" in out
    assert f"kernel available: {' '.join(available())}" in out


# ------------------------------------------------------ builds (no root)


@pytest.mark.skipif(
    shutil.which("clang") is None or shutil.which("bpftool") is None or not prereqs.LIBBPF_HEADER.exists()
    or not Path("/sys/kernel/btf/vmlinux").exists(),
    reason="needs clang, bpftool, libbpf-dev and kernel BTF to build",
)
def test_variant_object_carries_the_values_and_its_own_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CCARENA_BPF_CACHE", str(tmp_path))
    vector = [d for _, d in _core.cc_params("bbr")]
    vector[0] += 1
    vector[2] += 2
    target = kernel.resolve("bbr@ccarena", vector)
    obj = kernel.build(target)
    data = obj.read_bytes()
    assert target.kernel_name.encode() + b"\0" in data  # .name and the map
    # cca_params in .rodata: the full vector, little-endian u64s in order.
    vector = b"".join(v.to_bytes(8, "little") for v in target.params)
    assert vector in data
    assert kernel.build(target) == obj  # cached: same object, no rebuild


@pytest.mark.skipif(
    shutil.which("clang") is None or not Path("/sys/kernel/btf/vmlinux").exists(), reason="needs clang and kernel BTF"
)
def test_bpf_min_tso_segs_only_where_the_send_quantum_needs_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A BPF min_tso_segs makes Linux 6.18 send periodic unpaced bursts
    (cc/include/ccarena_compat.h, docs/live.md), so the BBR cores register
    it only when their send quantum works through it: bbr_tuned,
    bbr2_tuned, bbr3_tuned, and a variant that changes send_quantum (the
    parameter build.py names is in both tables); bbr, its derivatives,
    bbr2 and bbr3 leave the floor to the kernel's sysctl (2)."""
    from ccarena.kernel.build import SEND_QUANTUM_PARAM

    monkeypatch.setenv("CCARENA_BPF_CACHE", str(tmp_path))
    names = [k for k, _ in _core.cc_params("bbr")]
    assert SEND_QUANTUM_PARAM in names

    def has_min_tso(target: object) -> bool:
        return b"_cb_min_tso_segs" in kernel.build(target).read_bytes()  # the program's name

    assert SEND_QUANTUM_PARAM in [k for k, _ in _core.cc_params("bbr3")]
    for plain in ("bbr@ccarena", "bbq", "bbr_cws", "bbr2", "bbr3"):
        assert not has_min_tso(kernel.resolve(plain, None)), plain
    for quantum in ("bbr_tuned", "bbr2_tuned", "bbr3_tuned"):
        assert has_min_tso(kernel.resolve(quantum, None)), quantum
    assert has_min_tso(kernel.resolve("bbr@ccarena", {SEND_QUANTUM_PARAM: 2}))
    assert has_min_tso(kernel.resolve("bbr3", {SEND_QUANTUM_PARAM: 2}))


@pytest.mark.skipif(shutil.which("clang") is None or not Path("/sys/kernel/btf/vmlinux").exists(), reason="needs clang")
def test_compile_error_is_one_line_with_the_clang_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cc = tmp_path / "cc"
    shutil.copytree(REPO / "cc" / "include", cc / "include", ignore=shutil.ignore_patterns("vmlinux.h"))
    (cc / "broken.c").write_text('#include "ccarena_compat.h"\nint x = undefined_thing;\n')
    monkeypatch.setenv("CCARENA_CC_DIR", str(cc))
    monkeypatch.setenv("CCARENA_BPF_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(prereqs, "is_root", lambda: True)
    status, _, err = run_cli(capsys, "kernel", "load", "broken")
    assert status == 2
    first = err.splitlines()[0]
    assert first.startswith("ccarena: error: clang could not compile cc/broken.c for BPF: cc/broken.c:2:")
    assert "undefined_thing" in first


# ------------------------------------------------ registering (root)


def _mine(names: list[str]) -> set[str]:
    """names, less those another live ccarena process (a concurrent live
    run) holds: it may register and unregister them while a test runs."""

    def elsewhere(name: str) -> bool:
        rec = owners.read(name)
        return rec is not None and any(pid != os.getpid() for pid, _ in owners.live_users(rec))

    return {n for n in names if not elsewhere(n)}


@pytest.fixture
def untouched_kernel() -> Iterator[None]:
    """The test must leave the list of congestion controls as it found it."""
    before = _mine(available())
    yield
    assert _mine(available()) == before, "congestion controls left registered"


def _skip_if_taken(kname: str) -> None:
    if kname in available():
        pytest.skip(f"{kname} is already registered by someone else")


@needs_kernel
@pytest.mark.parametrize("name", OURS)
def test_load_list_unload_round_trip(name: str, capsys: pytest.CaptureFixture[str], untouched_kernel: None) -> None:
    spec = f"{name}@ccarena" if name in kernel.KERNEL_BUILTINS else name
    kname = f"cc_{name}"
    _skip_if_taken(kname)
    try:
        status, out, err = run_cli(capsys, "kernel", "load", spec)
        assert status == 0, err
        assert f"registered {kname}" in out
        assert f"sysctl -w net.ipv4.tcp_congestion_control={kname}" in out
        assert f"ccarena kernel unload {spec}" in out
        assert kname in available()

        status, out, _ = run_cli(capsys, "kernel", "list")
        row = next(line for line in out.splitlines() if line.split()[:2] == [spec, kname])
        assert "yes" in row and "operator" in row

        # Loading again keeps the one registration.
        status, out, _ = run_cli(capsys, "kernel", "load", spec)
        assert status == 0 and "already registered" in out
    finally:
        status, out, err = run_cli(capsys, "kernel", "unload", spec)
    assert status == 0, err
    assert f"unregistered {kname}" in out
    assert kname not in available()
    assert not (paths.run_dir() / f"{kname}.json").exists()


@needs_kernel
def test_verifier_rejection_shows_the_log(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, untouched_kernel: None
) -> None:
    cc = tmp_path / "cc"
    shutil.copytree(REPO / "cc" / "include", cc / "include", ignore=shutil.ignore_patterns("vmlinux.h"))
    # snd_una is read-only for a BPF congestion control.
    (cc / "badwrite.c").write_text(
        textwrap.dedent(
            """\
            #include "ccarena_compat.h"
            CCA_CB(void, bw_init, struct sock *sk) { tcp_sk(sk)->snd_una = 5; }
            CCA_CB(u32, bw_ssthresh, struct sock *sk) { return 2; }
            CCA_CB(u32, bw_undo, struct sock *sk) { return 2; }
            CCA_CB(void, bw_avoid, struct sock *sk, u32 ack, u32 acked) { }
            CCA_REGISTER(badwrite, .init = CCA_FN(bw_init), .ssthresh = CCA_FN(bw_ssthresh),
                         .undo_cwnd = CCA_FN(bw_undo), .cong_avoid = CCA_FN(bw_avoid));
            """
        )
    )
    monkeypatch.setenv("CCARENA_CC_DIR", str(cc))
    monkeypatch.setenv("CCARENA_BPF_CACHE", str(tmp_path / "cache"))
    status, out, err = run_cli(capsys, "kernel", "load", "badwrite")
    assert status == 2 and out == ""
    lines = err.splitlines()
    assert lines[0] == (
        "ccarena: error: the kernel's verifier rejected cc_badwrite (program 'bw_init'): "
        "no write support to tcp_sock at off " + lines[0].rsplit(" ", 1)[1]
    )
    assert 2 <= len(lines) <= 7, "a few lines of the log, not all of it"
    assert any("snd_una = 5" in line for line in lines[1:]), "the failing source line"
    assert not (paths.run_dir() / "cc_badwrite.json").exists()


@needs_kernel
def test_registered_block_unregisters_what_it_added_even_on_error(untouched_kernel: None) -> None:
    _skip_if_taken("cc_reno")
    with pytest.raises(RuntimeError, match="boom"), kernel.registered(["reno@ccarena", "cubic"]) as regs:
        assert regs["reno@ccarena"] == "cc_reno"
        assert regs["cubic"] == "cubic"
        assert "cc_reno" in available()
        # ensure_available inside the block belongs to the block too.
        variant = kernel.ensure_available("reno@ccarena", None)
        assert variant == "cc_reno"
        raise RuntimeError("boom")
    assert "cc_reno" not in available()


@needs_kernel
def test_registered_block_reuses_an_operator_load_and_keeps_it(
    capsys: pytest.CaptureFixture[str], untouched_kernel: None
) -> None:
    _skip_if_taken("cc_reno")
    assert run_cli(capsys, "kernel", "load", "reno@ccarena")[0] == 0
    try:
        with kernel.registered(["reno@ccarena"]) as regs:
            assert regs["reno@ccarena"] == "cc_reno" and regs.held == ["cc_reno"]
        assert "cc_reno" in available(), "an operator's registration must survive a run"
    finally:
        assert run_cli(capsys, "kernel", "unload", "reno@ccarena")[0] == 0


@needs_kernel
def test_parameter_variant_registers_side_by_side(untouched_kernel: None) -> None:
    _skip_if_taken("cc_cubic")
    key, _, other = _cubic_param()
    with kernel.registered([("cubic@ccarena", {key: other}), "cubic@ccarena"]) as regs:
        variant = kernel.resolve("cubic@ccarena", {key: other}).kernel_name
        assert {variant, "cc_cubic"} <= set(available())
        assert sorted(regs.held) == sorted([variant, "cc_cubic"])
    assert variant not in available() and "cc_cubic" not in available()


#: Connects over loopback with TCP_CONGESTION=argv[1] set before connect
#: and prints the connection's snd_ssthresh (TCP_INFO) once established.
_SSTHRESH = r"""
import socket, struct, sys
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen()
c = socket.socket()
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, sys.argv[1].encode())
c.connect(ls.getsockname())
print(struct.unpack_from("I", c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232), 76)[0])
"""


@needs_kernel
def test_a_variants_values_reach_the_program(tmp_path: Path, untouched_kernel: None) -> None:
    """The values a variant is built with are the ones its code reads,
    also through the compat header's helpers (cca_u32_param and the
    like). CUBIC with HyStart off and initial_ssthresh = 2 (bbr-fig1's
    probe) sets snd_ssthresh to 2 in init; with the defaults it stays
    infinite (0x7fffffff). Until this test the helpers read an empty copy
    of the values under BPF, and every value they read was its default."""
    script = tmp_path / "ssthresh.py"
    script.write_text(_SSTHRESH)
    params = {"hystart": 0, "initial_ssthresh": 2}
    spec = "cubic@ccarena"
    variant = kernel.resolve(spec, params).kernel_name
    _skip_if_taken(variant)
    _skip_if_taken("cc_cubic")
    seen = {}
    ns = _ns_name("ssthresh")
    with kernel.registered([(spec, params), spec]), netns(ns):
        for cc in (variant, "cc_cubic"):
            res = subprocess.run(["ip", "netns", "exec", ns, sys.executable, str(script), cc], capture_output=True,
                                 text=True, timeout=60, check=False)
            assert res.returncode == 0, res.stderr
            seen[cc] = int(res.stdout)
    assert seen == {variant: 2, "cc_cubic": 0x7FFFFFFF}


_HOLDER = """
import os, signal, sys, time
from ccarena import kernel
with kernel.registered(["reno@ccarena"]):
    print("ready", flush=True)
    time.sleep(60)
"""


@needs_kernel
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_during_a_run_still_unregisters(sig: signal.Signals, untouched_kernel: None) -> None:
    _skip_if_taken("cc_reno")
    with subprocess.Popen([sys.executable, "-c", _HOLDER], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            assert "cc_reno" in available()
            proc.send_signal(sig)
            status = proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert "cc_reno" not in available()
    assert status != 0


@needs_kernel
def test_cleanup_after_sigkill_removes_the_leftover(untouched_kernel: None) -> None:
    _skip_if_taken("cc_reno")
    with subprocess.Popen([sys.executable, "-c", _HOLDER], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        finally:
            proc.kill()
    assert "cc_reno" in available(), "SIGKILL cannot be caught: the registration is left behind"
    assert "cc_reno" in kernel.cleanup_stale()
    assert "cc_reno" not in available()


def _killed_holder() -> dict[str, object]:
    """cc_reno registered by a process that was then SIGKILLed: its record."""
    with subprocess.Popen([sys.executable, "-c", _HOLDER], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        finally:
            proc.kill()
    rec = owners.read("cc_reno")
    assert rec is not None and rec["map_id"] in struct_ops.registered_ids("cc_reno")
    return rec


@needs_kernel
@pytest.mark.parametrize("proof", ["recorded", "in bpftool's log only", "none"])
def test_cleanup_removes_only_what_it_can_prove_it_registered(
    proof: str, untouched_kernel: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """Killed before it recorded the map id (SIGKILL between bpftool's
    registration and the record's update), the registration is still
    provably ours through bpftool's log; with no id at all, it stays."""
    _skip_if_taken("cc_reno")
    rec = _killed_holder()
    try:
        if proof != "recorded":
            owners.write({**rec, "map_id": None})
        if proof == "none":
            owners.bpftool_log("cc_reno").unlink()
        removed = kernel.cleanup_stale()
        assert owners.read("cc_reno") is None, "the dead process's record goes either way"
        if proof == "none":
            assert removed == [] and "cc_reno" in available()
            assert "kept cc_reno registered: not provably ccarena's (no map id recorded)" in capsys.readouterr().err
        else:
            assert removed == ["cc_reno"] and "cc_reno" not in available()
    finally:
        if "cc_reno" in available():
            struct_ops.unregister("cc_reno")


@needs_kernel
def test_cleanup_never_touches_a_name_registered_again_by_hand(
    untouched_kernel: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """The dead process's registration was replaced by someone else's (bpftool
    by hand, same name): its record no longer describes what the kernel has,
    and the hand-made one stays."""
    _skip_if_taken("cc_reno")
    rec = _killed_holder()
    try:
        subprocess.run(["bpftool", "struct_ops", "unregister", "id", str(rec["map_id"])], check=True,
                       capture_output=True)
        obj = kernel.build(kernel.resolve("reno@ccarena"))
        subprocess.run(["bpftool", "struct_ops", "register", str(obj)], check=True, capture_output=True)
        assert struct_ops.registered_ids("cc_reno") != [rec["map_id"]]
        assert kernel.cleanup_stale() == []
        assert "cc_reno" in available()
        assert f"its map is no longer id {rec['map_id']}" in capsys.readouterr().err
        assert owners.read("cc_reno") is None
    finally:
        if "cc_reno" in available():
            struct_ops.unregister("cc_reno")


@needs_kernel
def test_cli_load_with_params_shows_them_as_a_scenario_writes_them(
    capsys: pytest.CaptureFixture[str], untouched_kernel: None
) -> None:
    kname = kernel.resolve("bbq", {"alpha": "1ms", "beta": "2%"}).kernel_name
    _skip_if_taken(kname)
    try:
        status, out, err = run_cli(capsys, "kernel", "load", "bbq", "--param", "alpha=1ms", "--param", "beta=2%")
        assert status == 0, err
        assert out.startswith(f"ccarena: registered {kname} (cc/bbq.c with alpha=1ms beta=0.02, verified by the kernel")
        status, out, _ = run_cli(capsys, "kernel", "list")
        assert any(line.split()[:4] == ["bbq", "alpha=1ms", "beta=0.02", kname] for line in out.splitlines()), out
    finally:
        status, out, err = run_cli(capsys, "kernel", "unload", kname)
    assert status == 0, err


# ------------------------------------------------ traffic (root, netns)


def _ns_name(tag: str) -> str:
    # Not "cca-...": that prefix is the live engine's, which `ccarena live
    # cleanup` removes.
    return f"ccktest-{tag}-{uuid.uuid4().hex[:6]}"


def _netns_list() -> list[str]:
    return [line.split()[0] for line in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.splitlines() if line.strip()]


@contextmanager
def netns(*names: str) -> Iterator[None]:
    """Create namespaces (lo up); always delete them."""
    made = []
    try:
        for name in names:
            subprocess.run(["ip", "netns", "add", name], check=True)
            made.append(name)
            subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
        yield
    finally:
        for name in made:
            subprocess.run(["ip", "netns", "del", name], check=False)
        left = set(made) & set(_netns_list())
        assert not left, f"namespaces left behind: {left}"


# One bulk flow over loopback for SECONDS with TCP_CONGESTION=CC; half-way
# through, `ss -tin` (same namespace) and TCP_INFO are sampled.
_ONE_FLOW = r"""
import json, socket, struct, subprocess, sys, threading, time
cc, seconds = sys.argv[1], float(sys.argv[2])
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen()
received = [0]
def sink():
    conn, _ = ls.accept()
    while True:
        data = conn.recv(1 << 20)
        if not data:
            break
        received[0] += len(data)
t = threading.Thread(target=sink); t.start()
c = socket.socket()
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
c.connect(ls.getsockname())
buf = b"x" * 65536
start = time.monotonic(); sampled = None
while time.monotonic() - start < seconds:
    c.sendall(buf)
    if sampled is None and time.monotonic() - start > seconds / 2:
        ss = subprocess.run(["ss", "-tinH", "state", "established", "dport", "=", str(ls.getsockname()[1])],
                            capture_output=True, text=True).stdout
        info = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
        sampled = {"ss": ss, "ca_state": info[1], "snd_cwnd": struct.unpack_from("I", info, 80)[0],
                   "pacing_rate": struct.unpack_from("Q", info, 104)[0],
                   "cc": c.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode(),
                   "struct_ops": subprocess.run(["bpftool", "-j", "struct_ops", "dump", "name", cc],
                                                capture_output=True, text=True).stdout}
c.close(); t.join(10)
print(json.dumps({**sampled, "bytes": received[0], "seconds": time.monotonic() - start}))
"""


def one_flow(tmp_path: Path, spec: str, tag: str) -> tuple[str, dict]:
    """Register spec for the block and run _ONE_FLOW with it for 1.5 s in
    a namespace of its own: the kernel name and the flow's sample."""
    ns = _ns_name(tag)
    script = tmp_path / "one_flow.py"
    script.write_text(_ONE_FLOW)
    with kernel.registered([spec]) as regs, netns(ns):
        cc = regs[spec]
        assert cc in available()
        res = subprocess.run(
            ["ip", "netns", "exec", ns, sys.executable, str(script), cc, "1.5"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert res.returncode == 0, res.stderr
    return cc, json.loads(res.stdout)


@needs_kernel
def test_bpf_bbr_carries_real_traffic_in_a_namespace(tmp_path: Path, untouched_kernel: None) -> None:
    cc, sample = one_flow(tmp_path, "bbr@ccarena", "lo")
    assert cc == "cc_bbr"
    assert sample["cc"] == "cc_bbr"
    # The kernel runs our map for it: its refcount is 1 + the sockets using it.
    refs = [
        item["bpf_struct_ops_tcp_congestion_ops"]["common"]["refcnt"]["refs"]["counter"]
        for item in json.loads(sample["struct_ops"])
        if "bpf_struct_ops_tcp_congestion_ops" in item
    ]
    assert refs and refs[-1] >= 2, sample["struct_ops"]
    assert "cc_bbr" in sample["ss"].split(), sample["ss"]
    assert sample["ca_state"] == 0  # TCP_CA_Open: loopback does not lose
    assert sample["pacing_rate"] > 0, "BBR sets the pacing rate itself"
    # It carried the flow; how fast is the machine's business (a busy or slow
    # host moves far less than an idle one over loopback), not the test's.
    assert sample["bytes"] > 0, "no data arrived"


# The race runs on the live engine's testbed (ccarena live run: a
# userspace delay line for the RTT, TBF + bfifo bottleneck), through its
# CLI so that only the scenario/summary.json contract is shared.
_RACE = """\
duration = "{seconds}s"
[measure]
from = "{warmup}s"
[bottleneck]
rate = "100Mbit"
buffer = "2MB"
[[flow]]
cc = "{cc0}"
rtt = "10ms"
[[flow]]
cc = "{cc1}"
rtt = "10ms"
"""


def live_shares(tmp_path: Path, cc0: str, cc1: str, *, seconds: int = 15, warmup: int = 2) -> list[float]:
    scenario = tmp_path / "race.toml"
    scenario.write_text(_RACE.format(seconds=seconds, warmup=warmup, cc0=cc0, cc1=cc1))
    res = subprocess.run(
        [sys.executable, "-m", "ccarena", "live", "run", str(scenario), "--out", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=seconds + 600,
        check=False,
        # Another live run holds the testbed: the engine waits for it (up to 300 s).
        env={**os.environ, "CCARENA_LIVE_WAIT": "300"},
    )
    assert res.returncode == 0, res.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    return [float(flow["share"]) for flow in summary["flows"]]


def _has_live_engine() -> bool:
    try:
        import ccarena.live  # noqa: F401
    except ImportError:
        return False
    return True


@needs_kernel
@pytest.mark.skipif(not _has_live_engine(), reason="needs the live engine (ccarena.live)")
def test_our_bpf_bbr_and_the_kernels_bbr_split_the_link_fairly(tmp_path: Path) -> None:
    """Equal RTT (10 ms), our BBR loaded through BPF against the kernel's
    built-in bbr share the link. The issue judges 45-55%; one 13-s window
    of this race measured (ours) 45.0, 45.6, 47.3, 48.9, 49.3, 51.0, 52.5,
    52.6% on an idle machine and 44.5% on a loaded one, so 45-55% is the
    mean's neighbourhood, not a bound a single window keeps every time
    (kernel bbr vs kernel bbr: 49.8%). A later session, other work on the
    machine and in five of ten runs a busy loop pinned to CPU 0:
    47.1-58.1%. The test holds one window to 38-62%, about 4 points beyond
    the measured spread (44.5-58.1%); the 45-55% figure is reported from
    repeated runs (docs/kernel.md)."""
    shares = live_shares(tmp_path, "bbr@ccarena", "bbr")
    print(f"\nshares, ours (BPF) vs kernel bbr: {shares}")
    assert 0.38 <= shares[0] <= 0.62, shares
    assert "cc_bbr" not in _mine(available()), "the run unregisters what it registered"


def test_a_live_scenario_sets_our_algorithms_parameters_by_the_name_the_error_suggests() -> None:
    """`params` on the kernel's bbr is refused with "use 'bbr@ccarena'";
    that name must then load, its parameters read as cc/bbr.c's (it once
    failed as an internal error: the simulator has no 'bbr@ccarena')."""
    from ccarena.errors import ScenarioError
    from ccarena.live.ccs import kernel_ccs
    from ccarena.live.engine import load_live_scenario

    doc = {"duration": "2s", "bottleneck": {"rate": "10Mbit", "buffer": "100pkt"},
           "flow": [{"cc": "bbr", "rtt": "20ms", "params": {"pacing_margin": 0}}]}
    if "bbr" in kernel_ccs():
        with pytest.raises(ScenarioError, match="use 'bbr@ccarena'"):
            load_live_scenario(doc)
    doc["flow"][0]["cc"] = "bbr@ccarena"
    scenario = load_live_scenario(doc)
    assert scenario.config["flows"][0]["cc"] == "bbr@ccarena"
    assert scenario.config["flows"][0]["params"] and scenario.human["flow"][0]["params"] == {"pacing_margin": 0}
