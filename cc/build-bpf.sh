#!/usr/bin/env bash
# Compile every cc/<name>.c (or the ones named as arguments) to a BPF
# struct_ops object, target/bpf/<name>.bpf.o, for the live engine.
#
#   cc/build-bpf.sh            # all algorithms
#   cc/build-bpf.sh bbr reno   # just these
#   cc/build-bpf.sh --legacy   # SEC(".struct_ops") for libbpf < 1.2 loaders
#                              # (e.g. Debian 12's bpftool 7.1 / libbpf 1.1)
#
# Needs clang (>= 14), bpftool (to generate vmlinux.h from the running
# kernel's BTF, once) and libbpf's headers (Debian: libbpf-dev).
# Environment: CLANG, BPFTOOL, VMLINUX_BTF (default /sys/kernel/btf/vmlinux),
# BPF_OUT (default target/bpf).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
clang="${CLANG:-clang}"
bpftool="${BPFTOOL:-bpftool}"
btf="${VMLINUX_BTF:-/sys/kernel/btf/vmlinux}"
out="${BPF_OUT:-$root/target/bpf}"
vmlinux="$here/include/vmlinux.h"

for tool in "$clang" "$bpftool"; do
    command -v "$tool" >/dev/null || { echo "build-bpf: $tool not found" >&2; exit 1; }
done

# vmlinux.h: the running kernel's types (gitignored, generated once).
if [[ ! -s "$vmlinux" ]]; then
    [[ -r "$btf" ]] || { echo "build-bpf: no kernel BTF at $btf" >&2; exit 1; }
    tmp="$(mktemp "$vmlinux.XXXXXX")"
    trap 'rm -f "$tmp"' EXIT
    "$bpftool" btf dump file "$btf" format c >"$tmp"
    mv "$tmp" "$vmlinux"
    trap - EXIT
fi

# The multiarch include dir holds asm/types.h that libbpf's headers want.
arch_inc="/usr/include/$(uname -m)-linux-gnu"

legacy=()
if [[ "${1:-}" == "--legacy" ]]; then
    legacy=(-DCCARENA_BPF_LEGACY_STRUCT_OPS)
    shift
fi

if [[ $# -gt 0 ]]; then
    names=("$@")
else
    names=()
    for f in "$here"/*.c; do names+=("$(basename "$f" .c)"); done
fi

mkdir -p "$out"
for name in "${names[@]}"; do
    src="$here/$name.c"
    [[ -f "$src" ]] || { echo "build-bpf: no $src" >&2; exit 1; }
    # -Werror: a warning in BPF code is usually a verifier rejection later.
    "$clang" -O2 -g -target bpf -D__TARGET_ARCH_x86 -DCCARENA_BPF "${legacy[@]}" \
        -I "$here/include" -idirafter "$arch_inc" \
        -Wall -Wextra -Wno-unused-parameter -Wno-comment -Werror \
        -c "$src" -o "$out/$name.bpf.o"
    echo "build-bpf: $out/$name.bpf.o"
done
