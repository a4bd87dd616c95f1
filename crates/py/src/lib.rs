//! `ccarena._core`: the simulator as seen from Python. Thin glue only —
//! JSON in; JSON counters and raw telemetry buffers out — so the Python
//! side (python/ccarena/) owns units, files and the user-facing validation, and the Rust side owns the engine,
//! its limits and its own gate (`sim::validate`).
//!
//! Around every engine call the glue (see [`engine_call`]):
//! - releases the GIL, and at most every [`PYTHON_POLL_INTERVAL`] of wall
//!   time (asked every `STOP_POLL_EVENTS` events) takes it back for a
//!   moment to run Python's signal handlers, so that Ctrl-C stops a run
//!   (KeyboardInterrupt) instead of waiting for its end, and, when asked,
//!   to hand the simulated time to a Python progress callback;
//! - turns a panic into [`EngineCrash`] (a RuntimeError carrying the panic
//!   message and where it happened) instead of PyO3's PanicException (a
//!   BaseException), and keeps the default panic hook's print off stderr
//!   for panics inside the engine (others print as before).

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;
use std::time::{Duration, Instant};

use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use serde::Serialize;
use sim::result::Column;

create_exception!(
    _core,
    EngineCrash,
    PyRuntimeError,
    "The simulator engine panicked: a bug in ccarena, not in the scenario. \
     The message is the panic's, with the source location."
);

/// Run one simulation. `config_json` is a `sim::config::SimConfig` as JSON.
/// Returns `(counters, flow_series, link_series, workload_flows)`: the
/// counters (a `sim::result::SimResult` without its columns, plus `events`
/// and, with workloads, `workloads`) as JSON, and each table as a list of
/// `(column, numpy type code, bytes in native order)` — raw buffers, so
/// that a long run's columns cost one copy instead of a JSON round trip;
/// the telemetry's are empty lists when `series` is false (the workloads'
/// flow records are always there: summary.json needs them). The
/// GIL is released while the engine runs. Raises `ValueError` with the
/// engine's one-line message (naming the offending field) if the
/// configuration is rejected, `KeyboardInterrupt` (or whatever a signal
/// handler raised) if a signal stopped the run, and `EngineCrash` if the
/// engine panicked.
///
/// `progress`, if given, is called as `progress(now_ns)` with the simulated
/// time every `STOP_POLL_EVENTS` events (every few ms of wall time), when
/// the glue holds the GIL for the signal check anyway; an exception it
/// raises stops the run as a signal handler's would. It sees the clock
/// only, so the run is the same with or without it.
#[pyfunction]
#[pyo3(signature = (config_json, series = true, progress = None))]
fn simulate<'py>(
    py: Python<'py>,
    config_json: &str,
    series: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let config = parse(config_json)?;
    // Ok(None) from the engine (stopped) becomes None: engine_call's interrupt.
    let result = engine_call(py, progress, |should_stop| sim::run_with(&config, should_stop).transpose())?
        .map_err(PyValueError::new_err)?;
    let counters = Counters {
        flows: &result.flows,
        link: &result.link,
        links: &result.links,
        events: result.events,
        workloads: &result.workloads,
    };
    let counters = serde_json::to_string(&counters)
        .map_err(|e| PyValueError::new_err(format!("result: cannot serialise: {e}")))?;
    let columns = |cols: &[(&'static str, Column<'_>)], wanted: bool| -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        if wanted {
            for (name, col) in cols {
                list.append((*name, col.type_code(), PyBytes::new(py, &col.to_ne_bytes())))?;
            }
        }
        Ok(list)
    };
    let flow = columns(&result.flow_series.columns(), series)?;
    let link = columns(&result.link_series.columns(), series)?;
    let records = columns(&result.workload_flows.columns(), true)?;
    PyTuple::new(py, [counters.into_pyobject(py)?.into_any(), flow.into_any(), link.into_any(), records.into_any()])
}

/// The completion times alone on the empty path (ns, None if not complete
/// by the run's end) of workload `workload`'s flows of `sizes` bytes, in
/// order (`sim::alone`): one engine call for all of them, stoppable as
/// `simulate` is. Raises `ValueError` as `validate` does.
#[pyfunction]
fn fcts_alone(py: Python<'_>, config_json: &str, workload: usize, sizes: Vec<u64>) -> PyResult<Vec<Option<u64>>> {
    let config = parse(config_json)?;
    engine_call(py, None, |should_stop| sim::alone::fcts_alone(&config, workload, &sizes, should_stop).transpose())?
        .map_err(PyValueError::new_err)
}

/// Workload `workload`'s arrivals before the run's end as the engine
/// draws them (`sim::workload::arrivals`): (times ns, sizes bytes). Raises
/// `ValueError` as `validate` does.
#[pyfunction]
fn workload_arrivals(config_json: &str, workload: usize) -> PyResult<(Vec<u64>, Vec<u64>)> {
    let config = parse(config_json)?;
    let wl = config.workloads.get(workload).ok_or_else(|| PyValueError::new_err(format!("workloads[{workload}]: no such workload")))?;
    Ok(sim::workload::arrivals(wl, config.seed, workload, config.duration_ns).into_iter().unzip())
}

/// Flow `flow`'s application's ON periods as (start, end) ns offsets from
/// its start, up to the run's duration (`sim::app::on_periods`); empty if
/// it has no `app`. Raises `ValueError` as `validate` does.
#[pyfunction]
fn app_on_periods(config_json: &str, flow: usize) -> PyResult<Vec<(u64, u64)>> {
    let config = parse(config_json)?;
    let fc = config.flows.get(flow).ok_or_else(|| PyValueError::new_err(format!("flows[{flow}]: no such flow")))?;
    Ok(fc.app.as_ref().map_or_else(Vec::new, |app| {
        sim::app::on_periods(app, config.mss, config.seed, flow, config.duration_ns)
    }))
}

/// What `simulate` returns as JSON: a `SimResult`'s counters.
#[derive(Serialize)]
struct Counters<'a> {
    flows: &'a [sim::result::FlowResult],
    link: &'a sim::result::LinkResult,
    /// A topology's links after the first (left out for the dumbbell).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    links: &'a [sim::result::LinkResult],
    events: u64,
    /// Per workload, its arrivals (left out without workloads).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    workloads: &'a [sim::result::WorkloadResult],
}

/// Checks a configuration as `simulate` would, without running it: None,
/// or `ValueError("<field path>: <problem>")` for the first problem.
#[pyfunction]
fn validate(config_json: &str) -> PyResult<()> {
    sim::validate(&parse(config_json)?).map_err(PyValueError::new_err)
}

/// Wire bytes the configured bottleneck could carry in `[from_ns, to_ns)`
/// (its trace's opportunities or its rate schedule's integral): what the
/// live engine reports utilisation against, as the simulator does.
#[pyfunction]
fn capacity_bytes(config_json: &str, from_ns: u64, to_ns: u64) -> PyResult<u64> {
    Ok(parse(config_json)?.bottleneck.capacity_bytes(from_ns, to_ns))
}

/// A flow's base RTT, ns (`sim::topology::base_rtt_ns`, the one
/// definition): its hosts' `rtt_ns` plus the `delays_ns` (one-way, by link
/// index) of the links of its `path` both ways, those of `path` again when
/// `reverse_path` is None or empty. `ValueError` for a link index without a
/// delay.
#[pyfunction]
#[pyo3(signature = (rtt_ns, delays_ns, path, reverse_path = None))]
fn base_rtt_ns(rtt_ns: u64, delays_ns: Vec<u64>, path: Vec<u32>, reverse_path: Option<Vec<u32>>) -> PyResult<u64> {
    let reverse_path = reverse_path.unwrap_or_default();
    if let Some(k) = path.iter().chain(&reverse_path).find(|&&k| k as usize >= delays_ns.len()) {
        return Err(PyValueError::new_err(format!("link {k}: no delay (of {} links)", delays_ns.len())));
    }
    Ok(sim::topology::base_rtt_ns(rtt_ns, &path, &reverse_path, |k| delays_ns[k as usize]))
}

/// The engine's limits (crates/sim/src/limits.rs) by lower-case name,
/// e.g. `"max_duration_ns"`, in the units their names end with.
#[pyfunction]
fn limits(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for (name, value) in sim::limits::all() {
        d.set_item(name, value)?;
    }
    Ok(d)
}

/// The simulated receiver's socket buffer, bytes: (a new socket's, the
/// autotuning's ceiling), `tcp_rmem[1]` and `[2]` of the live testbed's
/// receiver (crates/sim/src/rcvbuf.rs; tests/test_testbed.py checks the
/// testbed sets the same).
#[pyfunction]
fn receiver_buffer() -> (u64, u64) {
    (sim::rcvbuf::TCP_RMEM_DEFAULT, sim::rcvbuf::TCP_RMEM_MAX)
}

/// Test-only: panics inside the engine path exactly as an engine bug
/// would, so that the front end's handling of `EngineCrash` can be tested.
#[pyfunction]
fn _crash_for_test(py: Python<'_>) -> PyResult<()> {
    engine_call(py, None, |_| -> Option<()> { panic!("deliberate crash for a test (_core._crash_for_test)") })
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

/// The one-line description of congestion control `name` (CCA_DESCRIPTION
/// in `cc/<name>.c`).
#[pyfunction]
fn cc_description(name: &str) -> PyResult<&'static str> {
    cc_native::lookup(name)
        .map(|ops| ops.description())
        .ok_or_else(|| PyValueError::new_err(format!("unknown congestion control '{name}'")))
}

/// Version of the native engine (the workspace version).
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Digest of the sources this module was built from (build.rs): changes
/// whenever `cc/` or the engine does, unlike `version`.
#[pyfunction]
fn build_id() -> &'static str {
    env!("CCARENA_BUILD_ID")
}

fn parse(config_json: &str) -> PyResult<sim::config::SimConfig> {
    serde_json::from_str(config_json).map_err(|e| PyValueError::new_err(format!("config: {e}")))
}

/// How long the engine runs without the GIL between two visits to Python
/// (signal handlers, the progress callback). Each visit must wait for the
/// GIL, and a thread running Python code beside the engine (the CLI imports
/// pyarrow and matplotlib on one while the engine runs) gives it up only
/// every `sys.getswitchinterval()` (5 ms): visited at every hook call
/// (~2 ms of events), the engine waited for the GIL more than it ran and
/// took 0.71-0.80 s instead of 0.35 s beside those imports. 50 ms keeps
/// that wait under ~10% of the engine's time in the worst case and a
/// Ctrl-C's answer and a progress bar's updates (20 a second) prompt.
/// Wall time here only paces the visits; the simulation never reads it.
const PYTHON_POLL_INTERVAL: Duration = Duration::from_millis(50);

/// Runs `work` without the GIL, giving it a stop hook that, at most every
/// [`PYTHON_POLL_INTERVAL`], runs Python's signal handlers and then
/// `progress(now_ns)` if given; a panic becomes
/// [`EngineCrash`], a signal handler's (or the callback's) exception
/// (KeyboardInterrupt) is raised once the engine has stopped.
fn engine_call<T: Send>(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    work: impl FnOnce(&mut dyn FnMut(u64) -> bool) -> Option<T> + Send,
) -> PyResult<T> {
    install_quiet_panic_hook();
    let mut interrupt: Option<PyErr> = None;
    let outcome = py.allow_threads(|| {
        let mut visited = Instant::now();
        let mut should_stop = |now_ns: u64| {
            if visited.elapsed() < PYTHON_POLL_INTERVAL {
                return false;
            }
            visited = Instant::now();
            let checked = Python::with_gil(|py| {
                py.check_signals()?;
                match &progress {
                    Some(callback) => callback.call1(py, (now_ns,)).map(drop),
                    None => Ok(()),
                }
            });
            match checked {
                Ok(()) => false,
                Err(e) => {
                    interrupt = Some(e);
                    true
                }
            }
        };
        IN_ENGINE.with(|f| f.set(true));
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| work(&mut should_stop)));
        IN_ENGINE.with(|f| f.set(false));
        outcome
    });
    match outcome {
        Ok(Some(value)) => Ok(value),
        Ok(None) => Err(interrupt.unwrap_or_else(|| PyKeyboardInterrupt::new_err("simulation stopped"))),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            let at = PANIC_LOCATION.with(|l| l.borrow_mut().take());
            Err(EngineCrash::new_err(match at {
                Some(at) => format!("{message} (at {at})"),
                None => message,
            }))
        }
    }
}

thread_local! {
    /// Whether this thread is inside [`engine_call`]'s work.
    static IN_ENGINE: Cell<bool> = const { Cell::new(false) };
    /// Where the latest engine panic on this thread happened.
    static PANIC_LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once per process) a panic hook that, for panics inside the
/// engine, only records the location (EngineCrash reports it) instead of
/// printing to stderr; every other panic goes to the previous hook.
fn install_quiet_panic_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if IN_ENGINE.with(Cell::get) {
                let at = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
                PANIC_LOCATION.with(|l| *l.borrow_mut() = at);
            } else {
                previous(info);
            }
        }));
    });
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(fcts_alone, m)?)?;
    m.add_function(wrap_pyfunction!(workload_arrivals, m)?)?;
    m.add_function(wrap_pyfunction!(app_on_periods, m)?)?;
    m.add_function(wrap_pyfunction!(limits, m)?)?;
    m.add_function(wrap_pyfunction!(receiver_buffer, m)?)?;
    m.add_function(wrap_pyfunction!(capacity_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(base_rtt_ns, m)?)?;
    m.add_function(wrap_pyfunction!(_crash_for_test, m)?)?;
    m.add_function(wrap_pyfunction!(cc_names, m)?)?;
    m.add_function(wrap_pyfunction!(cc_params, m)?)?;
    m.add_function(wrap_pyfunction!(cc_description, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(build_id, m)?)?;
    m.add("EngineCrash", m.py().get_type::<EngineCrash>())?;
    Ok(())
}
