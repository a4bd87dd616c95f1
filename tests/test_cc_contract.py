"""The extension contract of cc/include/bbr_core.h and ccarena_compat.h.

Why this file exists. BBR's core is shared by every BBR derivative (BBQ,
BBR-CWS, ...) through a contract: the algorithm's state behind one
accessor (cca_state(sk): icsk_ca_priv when it fits, else a larger area:
the simulator's extension area or BPF per-socket storage), a struct of
checked hooks (struct bbr_hooks: a misspelt hook is a compile error, not
a silent plain BBR), and a parameter table whose size limit is checked
where the table is declared. Moving cc/bbr.c and cc/bbq.c onto that
contract must not change a single result, so:

- test_examples_are_unchanged pins every example's results (the summary
  and each column of the per-flow time series, full length) to hashes
  recorded with the build *before* the contract existed
  (tests/golden/examples.json; re-recorded per column when the
  delivery_rate_mbps column was added, every other column's values
  checked equal to the old record first). A change that moves any number
  of any example fails here; a new column fails as "not yet pinned". If a
  change is meant to alter results, regenerate and say so in the commit:
      CCARENA_REGEN_GOLDEN=1 .venv/bin/pytest tests/test_cc_contract.py -k unchanged
- the other tests compile tests/cc/bbr_big.c -- BBR with a state too
  large for the private area and every hook set to the default's value --
  and broken variants of it, natively (the flags of crates/cc-native/
  build.rs) and for BPF (cc/build-bpf.sh, i.e. the one builder): a
  misspelt hook, an old BBR_HOOK_* macro, a misplaced state or one
  parameter too many must fail both builds. As root, bbr_big is loaded
  into the kernel (its state in bpf_sk_storage) and carries a connection.
  That it runs ACK for ACK as BBR in the simulator, with its state in the
  extension area, is crates/cc-native/tests/contract.rs.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((REPO / "examples").glob("*.toml"))
GOLDEN = Path(__file__).resolve().parent / "golden" / "examples.json"


def _table_digests(path: Path) -> dict[str, str]:
    """Hash of each column of a parquet file (its values), not of the
    file's bytes: the encoding may change with pyarrow's version, the data
    not. Per column, so that a column added to the telemetry (a new
    measurement) reads as added, and only a moved number as changed."""
    table = pq.read_table(path)
    return {
        name: hashlib.sha256(json.dumps(table.column(name).to_pylist()).encode()).hexdigest()
        for name in table.column_names
    }


def _run_digests(run: Path) -> dict[str, str]:
    """Flat {"summary.json": h, "timeseries.parquet:column": h, ...}."""
    summary = json.loads((run / "summary.json").read_text())
    return {
        "summary.json": hashlib.sha256(json.dumps(summary, sort_keys=True).encode()).hexdigest(),
        **{
            f"{p.name}:{col}": h
            for p in sorted(run.glob("*.parquet"))
            for col, h in _table_digests(p).items()
        },
    }


def test_examples_are_unchanged(tmp_path: Path) -> None:
    got = {}
    procs = {}
    for ex in EXAMPLES:
        procs[ex.stem] = subprocess.Popen(
            [sys.executable, "-m", "ccarena", "run", str(ex), "--out", str(tmp_path / ex.stem)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        if len(procs) % 2 == 0:  # two at a time
            for p in procs.values():
                p.wait(timeout=600)
    for name, p in procs.items():
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, f"{name}: {err}"
        got[name] = _run_digests(tmp_path / name)
    if os.environ.get("CCARENA_REGEN_GOLDEN") == "1":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    want = json.loads(GOLDEN.read_text())
    assert sorted(got) == sorted(want), "an example was added or removed: regenerate (see the module comment)"
    changed = {name: sorted(k for k in want[name] if got[name].get(k) != want[name][k]) for name in want}
    assert not any(changed.values()), f"results changed (or a column was removed): {changed}"
    added = {name: sorted(set(got[name]) - set(want[name])) for name in want}
    assert not any(added.values()), f"new outputs, not yet pinned: regenerate (see the module comment): {added}"


# ------------------------------------------------ compiling derivatives

BIG = Path(__file__).resolve().parent / "cc" / "bbr_big.c"
INCLUDE = REPO / "cc" / "include"
BPF_MISSING = [t for t in ("clang", "bpftool") if shutil.which(t) is None]
if not Path("/usr/include/bpf/bpf_helpers.h").exists():
    BPF_MISSING.append("libbpf-dev")
if not Path("/sys/kernel/btf/vmlinux").exists():
    BPF_MISSING.append("kernel BTF")
needs_bpf = pytest.mark.skipif(bool(BPF_MISSING), reason=f"BPF toolchain missing: {', '.join(BPF_MISSING)}")


def native(src: Path) -> subprocess.CompletedProcess[str]:
    """Compile as crates/cc-native/build.rs does (warnings are errors)."""
    cc = os.environ.get("CC", "cc")
    flags = ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter", "-Wno-comment"]
    return subprocess.run(
        [cc, *flags, "-I", str(INCLUDE), "-c", str(src), "-o", os.devnull],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def bpf(src: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """Compile with the one BPF builder, through cc/build-bpf.sh."""
    return subprocess.run(
        ["bash", str(REPO / "cc" / "build-bpf.sh"), "--legacy", str(src)],
        env={**os.environ, "BPF_OUT": str(out), "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def variant(tmp_path: Path, name: str, edits: list[tuple[str, str]]) -> Path:
    """bbr_big.c with textual edits, as tmp_path/<name>.c (registered as
    "bad": a CC's name has at most 15 characters)."""
    text = BIG.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    text = text.replace("bbr_big", "bad")
    path = tmp_path / f"{name}.c"
    path.write_text(text)
    return path


# Each: a derivative that must not build, and a word the error must name.
BROKEN = {
    # A misspelt hook: a designated initializer naming no member.
    "misspelt_hook": ([(".cwnd_cap = big_cwnd_cap", ".cwnd_capp = big_cwnd_cap")], "cwnd_capp"),
    # The macro hooks of before the contract are refused, not ignored.
    "macro_hook": ([("#define BBR_STATE_EXTENDED", "#define BBR_STATE_EXTENDED\n#define BBR_HOOK_INIT(sk) big_init(sk)")], "BBR_HOOK_"),
    # State beyond 104 bytes without asking for the extended area.
    "big_state_in_priv": ([("#define BBR_STATE_EXTENDED\n", "")], "must fit in icsk_ca_priv"),
    # The extended area asked for by a state that fits the private one.
    # (The fields the hooks use go too, so other errors follow; the word
    # shows the assertion fired.)
    "small_state_extended": ([("#define BBR_EXT_FIELDS", "#define BBR_EXT_FIELDS u32 big_magic;\n#define UNUSED_FIELDS")], "use CCA_STATE_PRIV"),
    # `ccarena ccs`'s line: an empty (or over-long) description does not build.
    "empty_description": (
        [('"test-only: Linux BBR with an extended state and every hook set, for the contract tests"', '""')],
        "CCA_DESCRIPTION must be 1-100 characters",
    ),
    # One parameter more than CCA_MAX_PARAMS: refused where the table is.
    "too_many_params": (
        [("CCA_PARAMS(bbr_big, BBR_CORE_PARAM_DEFS);", "CCA_PARAMS(bbr_big, BBR_CORE_PARAM_DEFS\n\tCCA_PARAM_DEF(CCA_MAX_PARAMS, \"x\", 0));")],
        "more parameters than CCA_MAX_PARAMS",
    ),
}


def test_the_derivative_builds_natively(tmp_path: Path) -> None:
    res = native(BIG)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_derivative_fails_the_native_build(tmp_path: Path, case: str) -> None:
    edits, word = BROKEN[case]
    res = native(variant(tmp_path, case, edits))
    assert res.returncode != 0, f"{case} compiled"
    assert word in res.stderr, res.stderr[-2000:]


def test_the_parameter_limit_is_exactly_cca_max_params(tmp_path: Path) -> None:
    """CCA_MAX_PARAMS rows build (the last index is CCA_MAX_PARAMS - 1)."""
    src = variant(
        tmp_path,
        "max_params",
        [("CCA_PARAMS(bbr_big, BBR_CORE_PARAM_DEFS);", "CCA_PARAMS(bbr_big, BBR_CORE_PARAM_DEFS\n\tCCA_PARAM_DEF(CCA_MAX_PARAMS - 1, \"x\", 0));")],
    )
    assert native(src).returncode == 0


def test_python_reads_the_parameter_limit_from_its_one_definition() -> None:
    from ccarena.kernel.build import max_params

    header = (INCLUDE / "ccarena_compat.h").read_text()
    limit = re.search(r"^#define CCA_MAX_PARAMS (\d+)$", header, re.MULTILINE)
    assert limit and max_params() == int(limit.group(1)) >= 33  # bbr3's table: 33 rows
    assert not hasattr(sys.modules["ccarena.kernel.build"], "MAX_PARAMS"), "a second copy of the limit"


@needs_bpf
def test_the_derivative_builds_for_bpf_with_no_indirect_calls(tmp_path: Path) -> None:
    res = bpf(BIG, tmp_path)
    assert res.returncode == 0, res.stderr
    obj = tmp_path / "bbr_big.bpf.o"
    # The hooks struct is resolved at compile time: direct calls only, and
    # the extended state is a BPF_MAP_TYPE_SK_STORAGE map.
    objdump = shutil.which("llvm-objdump") or shutil.which("llvm-objdump-14")
    if objdump:
        dis = subprocess.run([objdump, "-d", str(obj)], capture_output=True, text=True, check=True).stdout
        assert "callx" not in dis
        syms = subprocess.run([objdump, "-t", str(obj)], capture_output=True, text=True, check=True).stdout
        assert "cca_state_map" in syms and "bbr_hooks" not in syms


@needs_bpf
@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_derivative_fails_the_bpf_build(tmp_path: Path, case: str) -> None:
    edits, word = BROKEN[case]
    res = bpf(variant(tmp_path, case, edits), tmp_path / "out")
    assert res.returncode != 0, f"{case} compiled"
    assert word in res.stderr, res.stderr[-2000:]


# ------------------------------------------------ in the kernel (root)

_KERNEL_MISSING = BPF_MISSING + (["root"] if os.geteuid() != 0 else []) + [t for t in ("ip", "ss") if shutil.which(t) is None]


@pytest.mark.skipif(bool(_KERNEL_MISSING), reason=f"needs {', '.join(_KERNEL_MISSING)}")
def test_extended_state_loads_and_carries_a_connection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bbr_big (state in bpf_sk_storage, every hook set) passes the
    verifier, registers, carries a TCP flow over loopback in a namespace,
    and is gone afterwards."""
    from test_kernel import available, one_flow

    from ccarena.kernel import prereqs

    if prereqs.kernel_version(prereqs.kernel_release()) < prereqs.MIN_KERNEL:
        pytest.skip("needs Linux >= 6.10")
    if "cc_bbr_big" in available():
        pytest.skip("cc_bbr_big is registered by someone else")
    cc = tmp_path / "cc"
    shutil.copytree(INCLUDE, cc / "include", ignore=shutil.ignore_patterns("vmlinux.h"))
    shutil.copy2(BIG, cc / "bbr_big.c")
    monkeypatch.setenv("CCARENA_CC_DIR", str(cc))
    monkeypatch.setenv("CCARENA_BPF_CACHE", str(tmp_path / "cache"))
    before = set(available())
    name, sample = one_flow(tmp_path, "bbr_big", "big")
    assert name == "cc_bbr_big"
    assert sample["cc"] == "cc_bbr_big"
    assert sample["pacing_rate"] > 0, "BBR's core sets the pacing rate"
    assert sample["bytes"] > 0
    assert set(available()) == before, "left registered"
