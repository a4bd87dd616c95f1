//! `ccarena._core`: the simulator as seen from Python. Thin glue only —
//! JSON in, JSON out, so the Python side (python/ccarena/) owns units,
//! validation, metrics and files, and the Rust side owns the engine.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Run one simulation. `config_json` is a `sim::config::SimConfig` as JSON;
/// returns a `sim::result::SimResult` as JSON. The GIL is released while
/// the engine runs. Raises `ValueError` with the engine's one-line message
/// (naming the offending field) if the configuration is rejected.
#[pyfunction]
fn simulate(py: Python<'_>, config_json: &str) -> PyResult<String> {
    let config: sim::config::SimConfig = serde_json::from_str(config_json)
        .map_err(|e| PyValueError::new_err(format!("config: {e}")))?;
    let result = py
        .allow_threads(|| sim::run(&config))
        .map_err(PyValueError::new_err)?;
    serde_json::to_string(&result)
        .map_err(|e| PyValueError::new_err(format!("result: cannot serialise: {e}")))
}

/// Names of the congestion controls compiled into the simulator.
#[pyfunction]
fn cc_names() -> Vec<String> {
    cc_native::names().into_iter().map(str::to_owned).collect()
}

/// The tunables of congestion control `name`, in index order, as
/// `(scenario key, default)`; values are in the algorithm's own units.
#[pyfunction]
fn cc_params(name: &str) -> PyResult<Vec<(&'static str, u64)>> {
    let ops = cc_native::lookup(name)
        .ok_or_else(|| PyValueError::new_err(format!("unknown congestion control '{name}'")))?;
    Ok(ops.params().into_iter().map(|p| (p.name, p.default)).collect())
}

/// Version of the native engine (the workspace version).
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(cc_names, m)?)?;
    m.add_function(wrap_pyfunction!(cc_params, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
