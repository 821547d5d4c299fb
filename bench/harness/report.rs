//! The table the benchmarks print, and small statistics.

use std::fmt;
use std::time::Duration;

/// One row: what was measured, vfsbox's figure, the peer's, the ratio,
/// and the goal with whether it was met.
pub(crate) struct Row {
    pub(crate) what: String,
    pub(crate) vfsbox: String,
    pub(crate) peer: String,
    pub(crate) ratio: String,
    pub(crate) goal: String,
}

#[derive(Default)]
pub(crate) struct Table {
    rows: Vec<Row>,
}

impl Table {
    pub(crate) fn row(
        &mut self,
        what: &str,
        vfsbox: String,
        peer: String,
        ratio: String,
        goal: String,
    ) {
        eprintln!("{what}: {vfsbox} | {peer} | {ratio} | {goal}");
        self.rows.push(Row {
            what: what.to_owned(),
            vfsbox,
            peer,
            ratio,
            goal,
        });
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "| measure | vfsbox | peer (same run) | ratio | goal |")?;
        writeln!(f, "| --- | --- | --- | --- | --- |")?;
        for r in &self.rows {
            writeln!(
                f,
                "| {} | {} | {} | {} | {} |",
                r.what, r.vfsbox, r.peer, r.ratio, r.goal
            )?;
        }
        Ok(())
    }
}

/// The value at `q` (0..=1) of sorted samples.
pub(crate) fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
}

/// Median and 99th percentile of samples.
pub(crate) fn median_p99(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    (quantile(&samples, 0.5), quantile(&samples, 0.99))
}

pub(crate) fn median(samples: Vec<Duration>) -> Duration {
    median_p99(samples).0
}

pub(crate) fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

pub(crate) fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

pub(crate) fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "**missed**" }
}

/// The machine the numbers come from.
pub(crate) fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines().next().map(|l| {
                l.split_whitespace()
                    .nth(1)
                    .unwrap_or("0")
                    .parse::<u64>()
                    .unwrap_or(0)
            })
        })
        .unwrap_or(0);
    format!("Machine: {cpu}, {cores} cores, {} GiB.\n", mem >> 20)
}
