//! Prometheus metrics, rendered as text: live scripts, runs by outcome,
//! rejections by reason, limit hits, run duration and fuel, compile cache.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::limits::Limit;
use crate::runtime::{Outcome, Report, Runtime};

const DURATION_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];
const FUEL_BUCKETS: &[f64] = &[1e5, 1e6, 1e7, 1e8, 1e9, 1e10];

#[derive(Debug)]
struct Histogram {
    bounds: &'static [f64],
    counts: Vec<AtomicU64>,
    sum: Mutex<f64>,
    count: AtomicU64,
}

impl Histogram {
    fn new(bounds: &'static [f64]) -> Histogram {
        Histogram {
            bounds,
            counts: bounds.iter().map(|_| AtomicU64::new(0)).collect(),
            sum: Mutex::new(0.0),
            count: AtomicU64::new(0),
        }
    }

    fn observe(&self, v: f64) {
        for (bound, count) in self.bounds.iter().zip(&self.counts) {
            if v <= *bound {
                count.fetch_add(1, Ordering::Relaxed);
            }
        }
        *self.sum.lock().unwrap_or_else(|e| e.into_inner()) += v;
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        for (bound, count) in self.bounds.iter().zip(&self.counts) {
            let _ = writeln!(
                out,
                "{name}_bucket{{le=\"{bound}\"}} {}",
                count.load(Ordering::Relaxed)
            );
        }
        let count = self.count.load(Ordering::Relaxed);
        let sum = *self.sum.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(
            out,
            "{name}_bucket{{le=\"+Inf\"}} {count}\n{name}_sum {sum}\n{name}_count {count}"
        );
    }
}

/// The server's counters.
#[derive(Debug)]
pub struct Metrics {
    runs: Mutex<BTreeMap<&'static str, u64>>,
    /// MCP tool calls by tool and outcome (`ok`, `error`).
    mcp_calls: Mutex<BTreeMap<(String, &'static str), u64>>,
    rejections: Mutex<BTreeMap<&'static str, u64>>,
    limit_hits: Mutex<BTreeMap<&'static str, u64>>,
    duration: Histogram,
    fuel: Histogram,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            runs: Mutex::default(),
            mcp_calls: Mutex::default(),
            rejections: Mutex::default(),
            limit_hits: Mutex::default(),
            duration: Histogram::new(DURATION_BUCKETS),
            fuel: Histogram::new(FUEL_BUCKETS),
        }
    }
}

fn bump(map: &Mutex<BTreeMap<&'static str, u64>>, key: &'static str) {
    *map.lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_default() += 1;
}

impl Metrics {
    /// Counts a request refused before it ran, by reason (its error code).
    pub fn rejected(&self, reason: &'static str) {
        bump(&self.rejections, reason);
    }

    /// Counts a finished run.
    pub fn ran(&self, report: &Report) {
        let outcome = match &report.outcome {
            Outcome::Exited { .. } => "exited",
            Outcome::Trapped { .. } => "trapped",
            Outcome::BudgetExceeded { limit, .. } => {
                bump(&self.limit_hits, limit.as_str());
                "budget_exceeded"
            }
        };
        bump(&self.runs, outcome);
        self.duration
            .observe(report.usage.elapsed_ms as f64 / 1000.0);
        self.fuel.observe(report.usage.fuel_consumed as f64);
    }

    /// Counts a run that failed in the host.
    pub fn failed(&self) {
        bump(&self.runs, "failed");
    }

    /// Counts an MCP tool call by tool and whether its result is an error.
    pub fn mcp_call(&self, tool: &str, is_error: bool) {
        let outcome = if is_error { "error" } else { "ok" };
        *self
            .mcp_calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry((tool.to_owned(), outcome))
            .or_default() += 1;
    }

    /// The metrics in Prometheus text format.
    pub fn render(&self, runtime: &Runtime) -> String {
        let mut out = String::new();
        let gauge = |out: &mut String, name: &str, help: &str, v: u64| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}");
        };
        gauge(
            &mut out,
            "vfsbox_live_scripts",
            "Scripts running now.",
            runtime.live_scripts() as u64,
        );
        gauge(
            &mut out,
            "vfsbox_script_slots",
            "Scripts that may run at once.",
            runtime.gate().capacity() as u64,
        );
        gauge(
            &mut out,
            "vfsbox_free_slots",
            "Scripts that could start now.",
            runtime
                .gate()
                .capacity()
                .saturating_sub(runtime.live_scripts()) as u64,
        );
        let counter = |out: &mut String,
                       name: &str,
                       help: &str,
                       label: &str,
                       map: &Mutex<BTreeMap<&'static str, u64>>,
                       all: &[&'static str]| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
            let map = map.lock().unwrap_or_else(|e| e.into_inner());
            let keys: std::collections::BTreeSet<&str> =
                all.iter().copied().chain(map.keys().copied()).collect();
            for key in keys {
                let _ = writeln!(
                    out,
                    "{name}{{{label}=\"{key}\"}} {}",
                    map.get(key).copied().unwrap_or(0)
                );
            }
        };
        counter(
            &mut out,
            "vfsbox_runs_total",
            "Runs by outcome.",
            "outcome",
            &self.runs,
            &["exited", "trapped", "budget_exceeded", "failed"],
        );
        counter(
            &mut out,
            "vfsbox_rejections_total",
            "Requests refused before running, by reason.",
            "reason",
            &self.rejections,
            &["busy", "tenant_busy", "draining", "unauthorized"],
        );
        let limits: Vec<&'static str> = Limit::ALL.iter().map(|l| l.as_str()).collect();
        counter(
            &mut out,
            "vfsbox_limit_hits_total",
            "Runs ended by a limit.",
            "limit",
            &self.limit_hits,
            &limits,
        );
        let _ = writeln!(
            out,
            "# HELP vfsbox_mcp_calls_total MCP tool calls by tool and outcome.\n# TYPE vfsbox_mcp_calls_total counter"
        );
        for ((tool, outcome), n) in self
            .mcp_calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            let _ = writeln!(
                out,
                "vfsbox_mcp_calls_total{{tool=\"{tool}\",outcome=\"{outcome}\"}} {n}"
            );
        }
        self.duration.render(
            &mut out,
            "vfsbox_run_duration_seconds",
            "Wall-clock time of runs.",
        );
        self.fuel
            .render(&mut out, "vfsbox_run_fuel", "Fuel consumed by runs.");
        let cache = runtime.cache_stats();
        let _ = writeln!(
            out,
            "# HELP vfsbox_compile_cache_hits_total Scripts found compiled.\n# TYPE vfsbox_compile_cache_hits_total counter\nvfsbox_compile_cache_hits_total {}\n# HELP vfsbox_compile_cache_misses_total Scripts not found compiled in memory: compiled, or loaded from the fleet's shared store.\n# TYPE vfsbox_compile_cache_misses_total counter\nvfsbox_compile_cache_misses_total {}",
            cache.hits, cache.misses
        );
        let _ = writeln!(
            out,
            "# HELP vfsbox_shared_artifacts_total Compiled scripts looked up in the fleet's shared store: loaded (hit), absent (miss), refused because their tag did not verify or they did not load (rejected).\n# TYPE vfsbox_shared_artifacts_total counter\nvfsbox_shared_artifacts_total{{result=\"hit\"}} {}\nvfsbox_shared_artifacts_total{{result=\"miss\"}} {}\nvfsbox_shared_artifacts_total{{result=\"rejected\"}} {}",
            cache.shared_hits, cache.shared_misses, cache.shared_rejected
        );
        out
    }
}
