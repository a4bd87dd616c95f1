"""Type stubs of the native module (crates/py/src/lib.rs)."""

def simulate(config_json: str) -> str:
    """Run one simulation.

    ``config_json`` is a ``sim::config::SimConfig`` as JSON; returns a
    ``sim::result::SimResult`` as JSON. Releases the GIL while running.
    Raises ``ValueError`` with a one-line message naming the field if the
    engine rejects the configuration.
    """

def cc_names() -> list[str]:
    """Names of the congestion controls compiled into the simulator."""

def cc_params(name: str) -> list[tuple[str, int]]:
    """Tunables of congestion control ``name`` in index order, as
    ``(C name, default)``; the C name's suffix gives the unit (``_us``
    microseconds, ``_ppm`` parts per million, none: a plain integer) and the
    scenario key is the name without it.
    Raises ``ValueError`` for an unknown name."""

def version() -> str:
    """Version of the native engine."""
