"""`ccarena run` imports the run directory's libraries beside the engine,
only once the scenario is good, and leaves the interpreter as it was."""

from __future__ import annotations

import gc
import subprocess
import sys

from ccarena import preload
from conftest import EXAMPLES


def test_alongside_puts_the_interpreter_back_and_imports_the_writers():
    interval, collecting = sys.getswitchinterval(), gc.isenabled()
    with preload.alongside() as thread:
        # Held in microseconds. (Not pytest.approx, which looks into numpy while the thread imports it.)
        assert abs(sys.getswitchinterval() - preload.SWITCH_INTERVAL_S) < 1e-6
        assert not gc.isenabled()
    assert (sys.getswitchinterval(), gc.isenabled()) == (interval, collecting)
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert all(name in sys.modules for name in preload.MODULES)


def _modules_after(*args: str) -> tuple[int, str]:
    """Exit status and heavy modules loaded after cli.main(args) in a
    fresh interpreter (whether it succeeded or not)."""
    code = (
        "import sys\n"
        "from ccarena import cli\n"
        f"status = cli.main({list(args)!r})\n"
        "print(status, ' '.join(sorted(m for m in ('matplotlib', 'pyarrow', 'pandas') if m in sys.modules)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=False)
    status, _, loaded = proc.stdout.strip().splitlines()[-1].partition(" ")
    return int(status), loaded


def test_a_bad_scenario_fails_before_anything_heavy_is_imported(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text((EXAMPLES / "bbr-rtt-unfairness.toml").read_text().replace('cc = "bbr"', 'cc = "nope"', 1))
    assert _modules_after("run", str(bad), "--out", str(tmp_path / "run")) == (2, "")
    assert not (tmp_path / "run").exists()


def test_a_good_run_imports_the_writers_but_not_pandas(tmp_path):
    status, loaded = _modules_after("run", str(EXAMPLES / "bbr-rtt-unfairness.toml"), "--out", str(tmp_path / "run"),
                                    "--set", "duration=3s", "--set", "measure.from=1s")
    assert (status, loaded) == (0, "matplotlib pyarrow")
