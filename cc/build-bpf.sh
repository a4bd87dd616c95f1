#!/usr/bin/env bash
# Compile every cc/<name>.c (or the ones named as arguments, or .c files
# given by path) to a BPF struct_ops object, target/bpf/<name>.bpf.o.
#
#   cc/build-bpf.sh            # all algorithms
#   cc/build-bpf.sh bbr reno   # just these
#   cc/build-bpf.sh --legacy   # SEC(".struct_ops") for libbpf < 1.2 loaders
#                              # (e.g. Debian 12's bpftool 7.1 / libbpf 1.1)
#
# The builder is python/ccarena/kernel/build.py, the one that `ccarena
# kernel load` uses: same flags, the machine's architecture, vmlinux.h from
# the running kernel's BTF (cached per kernel). Needs clang (>= 14),
# bpftool and libbpf's headers (Debian: libbpf-dev).
# Environment: BPF_OUT (default target/bpf), CCARENA_CLANG, CCARENA_BPFTOOL,
# PYTHON (default .venv/bin/python, else python3).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${PYTHON:-$root/.venv/bin/python}"
[[ -x "$py" ]] || py=python3
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
exec "$py" -c 'import sys; from ccarena.kernel.build import main; sys.exit(main(sys.argv[1:]))' \
    --out "${BPF_OUT:-$root/target/bpf}" "$@"
