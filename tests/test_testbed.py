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

