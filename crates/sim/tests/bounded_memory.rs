//! The engine's memory does not grow with the number of packets simulated
//! (only the telemetry grows, by one row per flow and interval), nor with
//! the number of workload flows (only their records, ~100 bytes each at
//! the peak): measured without Python, by a counting allocator around this
//! test binary.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

mod common;
use common::{flow, MS, S};

/// The system allocator, counting the bytes live now and at the peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(live, Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Peak heap bytes above what was live before, while running `cfg`.
fn peak_heap_of_run(cfg: &sim::config::SimConfig) -> (usize, sim::result::SimResult) {
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let r = sim::run(cfg).unwrap();
    (PEAK.load(Relaxed) - before, r)
}

// One test in this binary: the allocator counts every thread.
#[test]
fn peak_heap_grows_neither_with_the_packets_nor_with_the_flows_simulated() {
    packets();
    workload_flows();
}

fn packets() {
    // One BBR flow at 1 Gbit/s (10 ms, 1 BDP), 2 s and 16 s: 8 times the
    // packets (1.3 million in the long run). Keeping every sojourn time
    // and RTT sample, as the engine once did, costs ~12 bytes a packet:
    // ~15 MB more for the long run.
    let run = |secs: u64| {
        let mut cfg = common::scenario(vec![flow("bbr", 10, 0)], 1_000_000_000, 1_250_000);
        cfg.duration_ns = secs * S;
        cfg.measure_from_ns = 500 * MS;
        cfg.measure_to_ns = cfg.duration_ns;
        peak_heap_of_run(&cfg)
    };
    let (short, _) = run(2);
    let (long, r) = run(16);
    assert!(r.link.tx_packets_total > 1_200_000, "{}", r.link.tx_packets_total);
    // What may grow: the telemetry, one flow row (~90 bytes in 16 columns)
    // and one link row (~45 bytes) per 100 ms, and the result's JSON-free
    // columns; plus the histograms' range (a few power-of-two buckets).
    let rows = r.link_series.t_ns.len();
    let allowance = rows * (90 + 45) + 256 * 1024;
    assert!(
        long <= short + allowance,
        "peak heap {short} B for 2 s, {long} B for 16 s: grew by more than {allowance} B"
    );
}

fn workload_flows() {
    // 10 KB CUBIC flows at 6,250 a second on 1 Gbit/s (1 ms, 1 BDP): a
    // load of 0.5, 10,000 and 100,000 flows. Each flow in progress holds
    // its sender, receiver and pipes (~5 KB and up), freed when it is done;
    // what stays is its record (36 bytes, ~100 at the peak: the vectors'
    // growth, the arrival order kept beside, the sorted copy).
    let run = |flows: u64| {
        let mut cfg = common::scenario(vec![], 1_000_000_000, 125_000);
        cfg.duration_ns = flows * S / 6_250 + S;
        cfg.measure_from_ns = 0;
        cfg.measure_to_ns = cfg.duration_ns;
        cfg.interval_ns = S;
        cfg.workloads = vec![common::workload(1, 10_000, 6_250.0, flows * S / 6_250, 1000)];
        peak_heap_of_run(&cfg)
    };
    let (short, r) = run(10_000);
    let short_flows = r.workload_flows.len();
    let (long, r) = run(100_000);
    let long_flows = r.workload_flows.len();
    assert!(long_flows > 99_000 && r.workloads[0].refused == 0, "{:?}", r.workloads);
    let allowance = (long_flows - short_flows) * 110 + 256 * 1024;
    assert!(
        long <= short + allowance,
        "peak heap {short} B for {short_flows} flows, {long} B for {long_flows}: grew by more than {allowance} B"
    );
}
