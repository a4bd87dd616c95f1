"""Every cc/*.c also builds as a BPF struct_ops object (cc/build-bpf.sh).

The same source runs natively in the simulator (crates/cc-native); here we
check the other half of "one source, two engines": clang -target bpf
against the running kernel's vmlinux.h accepts it, warning-free, and the
object carries the tcp_congestion_ops map the kernel registers.

Loading into the kernel needs root and changes the host's list of
congestion controls, so that check is opt-in: CCARENA_BPF_LOAD=1.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CC_DIR = REPO / "cc"
BUILD = CC_DIR / "build-bpf.sh"
ALGORITHMS = sorted(p.stem for p in CC_DIR.glob("*.c"))
OBJDUMP = shutil.which("llvm-objdump") or shutil.which("llvm-objdump-14")

MISSING = [t for t in ("clang", "bpftool") if shutil.which(t) is None]
if not Path("/usr/include/bpf/bpf_helpers.h").exists():
    MISSING.append("libbpf headers (libbpf-dev)")
if OBJDUMP is None:
    MISSING.append("llvm-objdump")
if not Path("/sys/kernel/btf/vmlinux").exists() and not (CC_DIR / "include/vmlinux.h").exists():
    MISSING.append("kernel BTF (/sys/kernel/btf/vmlinux)")

pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"BPF toolchain missing: {', '.join(MISSING)}")


def build(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(BUILD), *args],
        env={**os.environ, "BPF_OUT": str(out)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def sections(obj: Path) -> set[str]:
    out = subprocess.run([OBJDUMP, "-h", str(obj)], capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].isdigit():
            names.add(parts[1])
    return names


def symbols(obj: Path) -> str:
    return subprocess.run([OBJDUMP, "-t", str(obj)], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def objects(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bpf")
    res = build(out)
    assert res.returncode == 0, f"cc/build-bpf.sh failed:\n{res.stdout}\n{res.stderr}"
    return out


def test_the_three_base_algorithms_exist() -> None:
    assert {"reno", "cubic", "bbr"} <= set(ALGORITHMS)


@pytest.mark.parametrize("name", ALGORITHMS)
def test_object_has_struct_ops_link_and_programs(objects: Path, name: str) -> None:
    obj = objects / f"{name}.bpf.o"
    assert obj.is_file(), f"{obj} was not built"
    secs = sections(obj)
    assert ".struct_ops.link" in secs, f"{name}: sections {sorted(secs)}"
    assert "struct_ops" in secs, f"{name}: no struct_ops programs"
    assert "license" in secs
    assert ".BTF" in secs, "libbpf needs BTF to match the struct to the kernel's"
    # The map is named cc_<name>, which is also the CC's name in the kernel.
    assert f"cc_{name}" in symbols(obj)


def test_legacy_flag_emits_plain_struct_ops_section(tmp_path: Path) -> None:
    res = build(tmp_path, "--legacy", "reno")
    assert res.returncode == 0, res.stderr
    secs = sections(tmp_path / "reno.bpf.o")
    assert ".struct_ops" in secs and ".struct_ops.link" not in secs


def test_unknown_algorithm_is_an_error(tmp_path: Path) -> None:
    res = build(tmp_path, "no_such_cc")
    assert res.returncode != 0
    assert "no_such_cc" in res.stderr


@pytest.mark.skipif(os.environ.get("CCARENA_BPF_LOAD") != "1", reason="set CCARENA_BPF_LOAD=1 (root) to load into the kernel")
@pytest.mark.parametrize("name", ALGORITHMS)
def test_kernel_verifier_accepts(tmp_path: Path, name: str) -> None:
    """Register with bpftool (legacy section: bpftool 7.1 / libbpf 1.1 lack
    .struct_ops.link), check the kernel lists it, always unregister."""
    res = build(tmp_path, "--legacy", name)
    assert res.returncode == 0, res.stderr
    avail = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
    try:
        reg = subprocess.run(
            ["bpftool", "struct_ops", "register", str(tmp_path / f"{name}.bpf.o")],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert reg.returncode == 0, reg.stderr[-4000:]
        assert f"cc_{name}" in avail.read_text().split()
    finally:
        subprocess.run(
            ["bpftool", "struct_ops", "unregister", "name", f"cc_{name}"],
            capture_output=True,
            check=False,
        )
    assert f"cc_{name}" not in avail.read_text().split()


def test_trace_record_layout_is_the_one_the_live_engine_reads(objects: Path) -> None:
    """struct cca_trace_rec (ccarena_compat.h) is what the live engine
    decodes per socket (ccarena.live.cctrace.RECORD_FIELDS): same members,
    offsets and size, read back from the built object's BTF."""
    import struct as pystruct

    from ccarena.live import cctrace

    dump = subprocess.run(
        ["bpftool", "btf", "dump", "file", str(objects / "bbr_cws.bpf.o"), "format", "raw"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    start = next(i for i, line in enumerate(dump) if "STRUCT 'cca_trace_rec'" in line)
    size = int(dump[start].split("size=")[1].split()[0])
    members = []
    for line in dump[start + 1:]:
        if not line.startswith("\t"):
            break
        name = line.split("'")[1]
        members.append((name, int(line.split("bits_offset=")[1]) // 8))
    offset, expected = 0, []
    for name, fmt in cctrace.RECORD_FIELDS:
        expected.append((name, offset))
        offset += pystruct.calcsize("=" + fmt)
    assert members == expected
    assert size == offset
