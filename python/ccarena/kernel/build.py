"""Compile cc/<name>.c to a BPF struct_ops object for the running kernel.

The one BPF builder: ``ccarena kernel load`` calls :func:`build`, and
``cc/build-bpf.sh`` (objects for other loaders, tests) runs :func:`main`
(``build-bpf [--legacy] [--out DIR] [NAME | PATH.c ...]``), so both compile with :func:`clang_flags` through
:func:`compile_source`. The target architecture (``__TARGET_ARCH_*`` and
the multiarch include directory) is the machine's.

``kernel load`` always builds with
``-DCCARENA_BPF_LEGACY_STRUCT_OPS``: the object carries a plain
``.struct_ops`` map, which every bpftool can register and which stays
registered after bpftool exits, until it is unregistered by name or id
(see struct_ops.py). ``.struct_ops.link`` would need libbpf >= 1.2 and a
pinned link to outlive the loader.

Builds are hermetic and cached. Per kernel (release + hash of its BTF) the
cache holds the vmlinux.h that ``bpftool btf dump`` writes from
/sys/kernel/btf/vmlinux; each build copies cc/include/*.h (never the
generated cc/include/vmlinux.h, which may be from another kernel) and the
source into a scratch directory next to that vmlinux.h, compiles, and
keeps the object under a name that hashes everything that went into it.
An unchanged source is not recompiled.

A parameter variant is a generated wrapper around the unchanged source:
it defines ``CCA_PARAM_VALUES`` and ``CCA_N_PARAMS`` before the compat
header, which then fills its one ``cca_params``/``cca_n_params`` rodata
with the chosen values (read by CCA_PARAM and the header's helpers
exactly as a loader-filled rodata would be), and renames the struct_ops
map and ``.name`` to the variant's kernel name.
"""

from __future__ import annotations

import hashlib
import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import paths, prereqs
from .errors import KernelError
from .names import Target

_TIMEOUT_S = 600


def max_params() -> int:
    """CCA_MAX_PARAMS, read from its one definition in ccarena_compat.h."""
    header = paths.cc_dir() / "include" / "ccarena_compat.h"
    match = re.search(r"^#define CCA_MAX_PARAMS (\d+)$", header.read_text(), re.MULTILINE)
    if match is None:
        raise KernelError(f"{header} does not define CCA_MAX_PARAMS")
    return int(match.group(1))


def _target_arch() -> str:
    machine = platform.machine()
    return {"x86_64": "x86", "aarch64": "arm64", "armv7l": "arm", "ppc64le": "powerpc", "s390x": "s390"}.get(
        machine, machine
    )


def clang_flags(include: Path, *, legacy: bool = True) -> list[str]:
    """clang's command line (less -c/-o). -Werror: a warning in BPF code is
    usually a verifier rejection later. legacy: SEC(".struct_ops") instead
    of ".struct_ops.link" (see ccarena_compat.h)."""
    # The multiarch include dir holds the asm/types.h libbpf's headers want.
    multiarch = Path("/usr/include") / f"{platform.machine()}-linux-gnu"
    flags = [
        "-O2",
        "-g",
        "-target",
        "bpf",
        f"-D__TARGET_ARCH_{_target_arch()}",
        "-DCCARENA_BPF",
        *(["-DCCARENA_BPF_LEGACY_STRUCT_OPS"] if legacy else []),
        "-I",
        str(include),
        "-idirafter",
        str(multiarch),
        "-Wall",
        "-Wextra",
        "-Wno-unused-parameter",
        "-Wno-comment",
        "-Werror",
    ]
    return flags


def kernel_cache() -> Path:
    """The cache directory of the running kernel, with its vmlinux.h."""
    btf = paths.VMLINUX_BTF
    try:
        digest = hashlib.sha256(btf.read_bytes()).hexdigest()[:12]
    except OSError as err:
        raise KernelError(f"cannot read kernel BTF {btf}: {err.strerror}") from None
    where = paths.cache_dir() / f"{prereqs.kernel_release()}-{digest}"
    vmlinux = where / "vmlinux.h"
    if not vmlinux.is_file():
        where.mkdir(parents=True, exist_ok=True)
        res = subprocess.run(
            [prereqs.tool("bpftool"), "btf", "dump", "file", str(btf), "format", "c"],
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
            check=False,
        )
        if res.returncode != 0:
            raise KernelError("bpftool could not dump the kernel's BTF to vmlinux.h", _tail(res.stderr))
        tmp = vmlinux.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(res.stdout)
        tmp.replace(vmlinux)
    return where


#: The parameter (bbr_core.h's and bbr3_params.h's tables) that chooses a
#: send quantum rule; a variant that changes it needs min_tso_segs under BPF.
SEND_QUANTUM_PARAM = "send_quantum"


def variant_wrapper(target: Target) -> str:
    """The generated C of a parameter variant (see the module comment)."""
    limit = max_params()
    if len(target.params) > limit:
        raise KernelError(f"'{target.source}' has {len(target.params)} parameters; BPF builds take at most {limit}")
    values = ", ".join(f"{v}ULL" for v in target.params)
    kname = target.kernel_name
    # A variant whose send quantum is not the default's works through
    # min_tso_segs, which the BPF build registers only on request
    # (cc/include/ccarena_compat.h, CCA_BPF_MIN_TSO_SEGS).
    quantum = "#define CCA_BPF_MIN_TSO_SEGS 1\n" if any(k == SEND_QUANTUM_PARAM for k, _ in target.changed) else ""
    return f"""/* Generated by ccarena.kernel: {target.source} with {target.settings()}. */
{quantum}#define CCA_PARAM_VALUES {values}
#define CCA_N_PARAMS {len(target.params)}
#include "ccarena_compat.h"
#undef CCA_REGISTER
#define CCA_REGISTER(cname, ...)					\\
	char _license[] SEC("license") = "GPL";				\\
	SEC(CCA_STRUCT_OPS_SEC)						\\
	struct tcp_congestion_ops {kname} = {{				\\
		__VA_ARGS__,						\\
		.name = "{kname}",					\\
	}}
#include "{target.source}.c"
"""


def build(target: Target) -> Path:
    """The BPF object of an algorithm of ours (built if not cached)."""
    if not target.ours:
        raise KernelError(f"'{target.spec}' is the kernel's own congestion control; there is nothing to build")
    prereqs.require_kernel()
    prereqs.require_tools("clang", "bpftool")
    source = paths.cc_dir() / f"{target.source}.c"
    if not source.is_file():
        raise KernelError(f"no source {source}")
    wrapper = variant_wrapper(target) if target.params else None

    where = kernel_cache()
    digest = hashlib.sha256()
    for part in [source, *_headers()]:
        digest.update(part.name.encode() + b"\0" + part.read_bytes() + b"\0")
    digest.update((wrapper or "").encode())
    digest.update(" ".join(clang_flags(Path("include"))).encode())
    obj = where / f"{target.kernel_name}-{digest.hexdigest()[:12]}.bpf.o"
    if not obj.is_file():
        compile_source(source, obj, legacy=True, wrapper=wrapper, wrapper_name=target.kernel_name)
    return obj


def _headers() -> list[Path]:
    return sorted(p for p in (paths.cc_dir() / "include").glob("*.h") if p.name != "vmlinux.h")


def compile_source(
    source: Path, out: Path, *, legacy: bool, wrapper: str | None = None, wrapper_name: str = "variant"
) -> None:
    """Compile source (a cc/<name>.c, or any file written against
    cc/include) to the BPF object out, hermetically: the headers of
    cc/include and the running kernel's vmlinux.h are staged next to a
    copy of the source. wrapper, if given, is compiled instead, as
    <wrapper_name>.c beside the source it #includes."""
    where = kernel_cache()
    stage = Path(tempfile.mkdtemp(prefix=f"build-{source.stem}-", dir=where))
    try:
        include = stage / "include"
        include.mkdir()
        for h in _headers():
            shutil.copy2(h, include / h.name)
        (include / "vmlinux.h").symlink_to(where / "vmlinux.h")
        shutil.copy2(source, stage / source.name)
        main = stage / source.name
        if wrapper is not None:
            main = stage / f"{wrapper_name}.c"
            main.write_text(wrapper)
        obj = stage / "out.bpf.o"
        res = subprocess.run(
            [prereqs.tool("clang"), *clang_flags(include, legacy=legacy), "-c", str(main), "-o", str(obj)],
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
            check=False,
        )
        if res.returncode != 0:
            # Show the user's paths, not the scratch directory's.
            text = res.stderr.replace(f"{include}/", "cc/include/").replace(f"{stage}/", "cc/")
            errors = [line for line in text.splitlines() if "error:" in line]
            first = errors[0] if errors else (text.strip().splitlines() or ["(no output)"])[0]
            raise KernelError(f"clang could not compile cc/{source.name} for BPF: {first}", _tail(text, 8))
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(obj, out)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """cc/build-bpf.sh: objects <out>/<name>.bpf.o for every cc/*.c, or the
    names (or .c paths) given."""
    parser = argparse.ArgumentParser(prog="build-bpf", description=main.__doc__)
    parser.add_argument("--legacy", action="store_true", help='SEC(".struct_ops") for libbpf < 1.2 loaders')
    parser.add_argument("--out", type=Path, default=paths.cc_dir().parent / "target" / "bpf", help="output directory")
    parser.add_argument("names", nargs="*", help="algorithm names (cc/<name>.c) or paths to .c files")
    args = parser.parse_args(argv)
    names = args.names or sorted(p.stem for p in paths.cc_dir().glob("*.c"))
    try:
        prereqs.require_tools("clang", "bpftool")
        for name in names:
            source = Path(name) if name.endswith(".c") else paths.cc_dir() / f"{name}.c"
            if not source.is_file():
                raise KernelError(f"no {source}")
            out = args.out / f"{source.stem}.bpf.o"
            compile_source(source, out, legacy=args.legacy)
            print(f"build-bpf: {out}")
    except KernelError as err:
        print(f"build-bpf: {err}", file=sys.stderr)
        for line in err.details:
            print(f"  {line}", file=sys.stderr)
        return 1
    return 0


def _tail(text: str, n: int = 6) -> list[str]:
    return [line for line in text.strip().splitlines() if line.strip()][-n:]
