"""What a BPF congestion control reports about itself, read per socket.

TCP_INFO says nothing of a BPF algorithm's state (``get_info`` is not a
struct_ops member BPF may set), so our algorithms' CCA_TRACE and
CCA_TRACE_VAR (cc/include/ccarena_compat.h) write one record per socket
into a per-socket storage map named ``cca_trace``; a user-space lookup in
such a map takes the socket's fd as key. This module finds those maps
(one per loaded algorithm object) and reads a socket's record, giving the
live engine the simulator's cc_mode, pacing_gain, cwnd_gain,
bw_estimate, cc_var (e.g. BBR-CWS's upper_scaling_factor) and extra_acked
(BBR's ACK-aggregation filter) columns.

Through libbpf (the system's libbpf.so.1, from the libbpf-dev package the
BPF build needs anyway), called with ctypes: four calls, no extension
module. Root (CAP_BPF) is required, as for everything live.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import socket
import struct

#: The record's layout, struct cca_trace_rec in ccarena_compat.h (a test
#: compares it with the built object's BTF): name, struct format.
RECORD_FIELDS = (("mode", "I"), ("pacing_gain", "I"), ("cwnd_gain", "I"), ("has_var", "I"),
                 ("bw", "Q"), ("var_ppm", "Q"), ("extra_acked", "I"), ("has_extra_acked", "I"))
_RECORD = struct.Struct("=" + "".join(f for _, f in RECORD_FIELDS))
MAP_NAME = "cca_trace"
_SK_STORAGE = 24  # BPF_MAP_TYPE_SK_STORAGE (include/uapi/linux/bpf.h)
_INFO_LEN = 256  # >= sizeof(struct bpf_map_info); the kernel wants the tail zero
#: struct bpf_map_info: type, id, key_size, value_size, max_entries,
#: map_flags (u32 each), then name[16].
_INFO_HEAD = struct.Struct("=6I16s")


class TraceMaps:
    """The cca_trace maps loaded now, and which one holds each socket."""

    def __init__(self) -> None:
        name = ctypes.util.find_library("bpf")
        self._lib = ctypes.CDLL(name or "libbpf.so.1", use_errno=True)
        self._fds: list[int] = []
        self._of_socket: dict[int, int] = {}
        self._value = ctypes.create_string_buffer(_RECORD.size)
        # Every cca_trace map the kernel has now: the run's algorithms are
        # registered before its agents start.
        start, next_id = 0, ctypes.c_uint32(0)
        while self._lib.bpf_map_get_next_id(ctypes.c_uint32(start), ctypes.byref(next_id)) == 0:
            start = next_id.value
            fd = self._lib.bpf_map_get_fd_by_id(ctypes.c_uint32(start))
            if fd < 0:
                continue  # freed meanwhile
            mtype, _id, _key, value_size, _max, _flags, raw_name = self._info(fd)
            if mtype == _SK_STORAGE and value_size == _RECORD.size and raw_name.split(b"\0")[0] == MAP_NAME.encode():
                self._fds.append(fd)
            else:
                os.close(fd)

    def _info(self, fd: int) -> tuple:
        buf = ctypes.create_string_buffer(_INFO_LEN)
        n = ctypes.c_uint32(_INFO_LEN)
        if self._lib.bpf_obj_get_info_by_fd(fd, buf, ctypes.byref(n)) != 0:
            return (0, 0, 0, 0, 0, 0, b"")
        return _INFO_HEAD.unpack_from(buf.raw, 0)

    def _lookup(self, map_fd: int, sock_fd: int) -> bytes | None:
        """The record, or None: ENOENT (no record for this socket in this
        map) or any other failure -- telemetry, never a reason to stop a
        run."""
        key = ctypes.c_int(sock_fd)
        if self._lib.bpf_map_lookup_elem(map_fd, ctypes.byref(key), self._value) == 0:
            return self._value.raw
        return None

    def read(self, sock: socket.socket) -> dict[str, float | int | None] | None:
        """The socket's record as telemetry values (gains as ratios, bw in
        bit/s, var as a ratio or None, extra_acked in packets or None), or
        None if no loaded algorithm has reported for it (kernel algorithms,
        or before the first ACK)."""
        sfd = sock.fileno()
        raw = None
        if sfd in self._of_socket:
            raw = self._lookup(self._of_socket[sfd], sfd)
        else:
            for mfd in self._fds:
                raw = self._lookup(mfd, sfd)
                if raw is not None:
                    self._of_socket[sfd] = mfd
                    break
        if raw is None:
            return None
        rec = dict(zip((n for n, _ in RECORD_FIELDS), _RECORD.unpack(raw)))
        return {
            "cc_mode": rec["mode"],
            "pacing_gain": rec["pacing_gain"] / 256.0,
            "cwnd_gain": rec["cwnd_gain"] / 256.0,
            "bw_estimate_bps": rec["bw"] * 8.0,
            "cc_var": rec["var_ppm"] / 1e6 if rec["has_var"] else None,
            "extra_acked": rec["extra_acked"] if rec["has_extra_acked"] else None,
        }

    def close(self) -> None:
        for fd in self._fds:
            os.close(fd)
        self._fds.clear()
        self._of_socket.clear()
