"""The modes a BBR-family algorithm reports in the ``cc_mode`` telemetry
column: cc/include/bbr_core.h's ``enum bbr_mode`` (tests/test_testbed.py
reads the enum and checks these against it). The analyses read them
(experiments/traces.py), and the live engine maps the kernel BBR's gains
onto them (live/rawresult.py)."""

from __future__ import annotations

STARTUP, DRAIN, PROBE_BW, PROBE_RTT = 0, 1, 2, 3
