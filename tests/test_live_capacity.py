"""What the host carries through the live testbed (ccarena.live.capacity),
without root: the cache, its invalidation and the warning. The measurement
itself is a live run (test_live.py)."""

from __future__ import annotations

import json

import pytest

from ccarena.errors import ScenarioError
from ccarena.live import capacity


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(capacity.ENV, raising=False)
    return tmp_path


def _summary(goodput: float) -> dict:
    return {"flows": [{"goodput_mbps": goodput, "rtt_mean_ms": 11.0}],
            "live": {"delay_line": {"lateness_max_us": 900.0}, "losses": {"testbed_total": 0}}}


def test_the_figure_is_cached_until_the_delay_line_changes(cache_home):
    binary = cache_home / "delayline"
    binary.write_bytes(b"one build")
    assert capacity.cached(binary) is None
    record = capacity.store(binary, _summary(1538.04))
    assert record["goodput_mbps"] == 1538.0
    assert capacity.cached(binary) == json.loads(capacity.cache_path().read_text()) == record
    binary.write_bytes(b"another build")  # `make build` after a change: measured again
    assert capacity.cached(binary) is None


def test_a_damaged_cache_is_measured_again(cache_home):
    binary = cache_home / "delayline"
    binary.write_bytes(b"x")
    capacity.cache_path().parent.mkdir(parents=True)
    for text in ("not json", "[]", json.dumps({"key": capacity.host_key(binary), "goodput_mbps": "fast"})):
        capacity.cache_path().write_text(text)
        assert capacity.cached(binary) is None


def test_the_environment_sets_or_switches_off_the_figure(monkeypatch):
    monkeypatch.setenv(capacity.ENV, "2500")
    assert capacity.override() == {"goodput_mbps": 2500.0, "source": capacity.ENV}
    monkeypatch.setenv(capacity.ENV, "off")
    assert capacity.override() == "off"
    monkeypatch.setenv(capacity.ENV, "fast")
    with pytest.raises(ScenarioError, match="CCARENA_LIVE_CAPACITY: expected a rate in Mbit/s or 'off'"):
        capacity.override()


def _cfg(rate_bps: int, schedule: list[int] = ()) -> dict:
    return {"bottleneck": {"rate_bps": rate_bps, "schedule": [{"at_ns": 1, "rate_bps": r} for r in schedule]}}


def test_a_scenario_asking_for_more_than_half_is_warned_about_with_both_numbers():
    record = {"goodput_mbps": 1538.0, "source": "/root/.cache/ccarena/live-capacity.json",
              "measured_at": "2026-11-23T18:00:00+00:00"}
    assert capacity.warning(_cfg(100_000_000), record) is None
    assert capacity.warning(_cfg(769_000_000), record) is None  # exactly half
    text = capacity.warning(_cfg(1_000_000_000), record)
    assert text is not None and text.startswith("ccarena: warning: live: ")
    assert "(1000 Mbit/s)" in text and "(1538 Mbit/s; /root/.cache/ccarena/live-capacity.json, 2026-11-23)" in text
    # A rate schedule counts by its fastest rate.
    assert capacity.warning(_cfg(100_000_000, [1_000_000_000]), record) is not None
