//! The budget of one run: its deadline and the counters every host import
//! charges before doing work.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::limits::{Limit, Limits};
use crate::runtime::LimitExceeded;
use crate::vfs::VPath;

/// What a run may still use, and what it has used.
#[derive(Debug)]
pub(crate) struct Budget {
    pub(crate) limits: Limits,
    pub(crate) started: Instant,
    deadline: Instant,
    documents: HashSet<VPath>,
    bytes: ReadMeter,
    pub(crate) files_scanned: u64,
    pub(crate) bytes_scanned: u64,
    /// Fuel left as of the last call into the host.
    pub(crate) fuel_left: u64,
    pub(crate) memory: MemoryLimiter,
}

impl Budget {
    pub(crate) fn new(limits: Limits, started: Instant) -> Budget {
        Budget {
            deadline: started + limits.deadline,
            documents: HashSet::new(),
            bytes: ReadMeter::default(),
            files_scanned: 0,
            bytes_scanned: 0,
            fuel_left: limits.fuel,
            memory: MemoryLimiter::new(limits.memory),
            limits,
            started,
        }
    }

    /// Moves the deadline; the run ends when it passes.
    pub(crate) fn set_deadline(&mut self, deadline: Instant) {
        self.deadline = deadline;
    }

    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    pub(crate) fn time_left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// The error that ends a run at its deadline.
    pub(crate) fn deadline_exceeded(&self) -> LimitExceeded {
        self.clock().exceeded()
    }

    /// The run's deadline, for a reader that outlives the call that opened
    /// it (a document stream).
    pub(crate) fn clock(&self) -> Deadline {
        Deadline {
            at: self.deadline,
            started: self.started,
            allowed: self.limits.deadline,
        }
    }

    pub(crate) fn documents_read(&self) -> u64 {
        self.documents.len() as u64
    }

    pub(crate) fn documents_left(&self) -> u64 {
        self.limits
            .document_reads
            .saturating_sub(self.documents_read())
    }

    pub(crate) fn bytes_read(&self) -> u64 {
        self.bytes.get()
    }

    pub(crate) fn bytes_left(&self) -> u64 {
        self.limits.bytes_read.saturating_sub(self.bytes_read())
    }

    /// The run's byte counter, for a reader that outlives the call that
    /// opened it (a document stream): it charges the same cap.
    pub(crate) fn meter(&self) -> ReadMeter {
        self.bytes.clone()
    }

    /// Counts `path` as read, against the document cap, before any of its
    /// bytes are: what opening a document costs. Its bytes are charged as
    /// they are delivered.
    pub(crate) fn charge_document(&mut self, path: &VPath) -> Result<(), LimitExceeded> {
        self.charge_read(path, 0)
    }

    /// Charges a read of up to `bytes` bytes of `path` before it happens:
    /// a new document against the document cap, the bytes against the byte
    /// cap and against the memory the script has left to receive them.
    pub(crate) fn charge_read(&mut self, path: &VPath, bytes: u64) -> Result<(), LimitExceeded> {
        if !self.documents.contains(path) && self.documents_left() == 0 {
            return Err(LimitExceeded {
                limit: Limit::DocumentReads,
                used: self.documents_read() + 1,
                allowed: self.limits.document_reads,
            });
        }
        if bytes > self.bytes_left() {
            return Err(self.bytes.exceeded(bytes, self.limits.bytes_read));
        }
        // The bytes are copied into the script's memory; a read that could
        // never fit there is refused before the host buffers it.
        let needed = self.memory.current.saturating_add(bytes);
        if needed > self.memory.cap {
            self.memory.denied = Some(needed);
            return Err(LimitExceeded {
                limit: Limit::Memory,
                used: needed,
                allowed: self.memory.cap,
            });
        }
        self.documents.insert(path.clone());
        self.bytes.charge(bytes, self.limits.bytes_read)
    }

    pub(crate) fn scan_files_left(&self) -> u64 {
        self.limits.scan_files.saturating_sub(self.files_scanned)
    }

    pub(crate) fn scan_bytes_left(&self) -> u64 {
        self.limits.scan_bytes.saturating_sub(self.bytes_scanned)
    }
}

/// When a run ends, and the error that says it did.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    pub(crate) at: Instant,
    started: Instant,
    allowed: Duration,
}

impl Deadline {
    pub(crate) fn exceeded(&self) -> LimitExceeded {
        LimitExceeded {
            limit: Limit::Deadline,
            used: millis(self.started.elapsed()),
            allowed: millis(self.allowed),
        }
    }
}

/// The bytes a run has read: one counter shared by the run's imports and
/// the document streams it opened, all charging one cap.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReadMeter(Arc<AtomicU64>);

impl ReadMeter {
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Adds `bytes`, unless that would pass `cap`: then nothing is added
    /// and the run must end.
    pub(crate) fn charge(&self, bytes: u64, cap: u64) -> Result<(), LimitExceeded> {
        self.0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |read| {
                read.checked_add(bytes).filter(|&total| total <= cap)
            })
            .map(drop)
            .map_err(|_| self.exceeded(bytes, cap))
    }

    fn exceeded(&self, bytes: u64, cap: u64) -> LimitExceeded {
        LimitExceeded {
            limit: Limit::BytesRead,
            used: self.get().saturating_add(bytes),
            allowed: cap,
        }
    }
}

pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Caps the linear memory of all memories of a store together, and records
/// a denial so the run's outcome can say "memory" precisely.
#[derive(Debug)]
pub(crate) struct MemoryLimiter {
    cap: u64,
    current: u64,
    pub(crate) peak: u64,
    /// The total the last growth asked for, if it was denied and nothing
    /// grew since (a guest that handles the denial and goes on is not
    /// ended by it).
    pub(crate) denied: Option<u64>,
    /// The total before the last approved growth, to restore if the growth
    /// then fails.
    before_growth: u64,
}

/// Tables may hold at most this many elements.
const MAX_TABLE_ELEMENTS: usize = 100_000;

impl MemoryLimiter {
    fn new(cap: u64) -> MemoryLimiter {
        MemoryLimiter {
            cap,
            current: 0,
            peak: 0,
            denied: None,
            before_growth: 0,
        }
    }

    pub(crate) fn cap(&self) -> u64 {
        self.cap
    }
}

impl wasmtime::ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self
            .current
            .saturating_sub(current as u64)
            .saturating_add(desired as u64);
        if total > self.cap {
            self.denied = Some(total);
            return Ok(false);
        }
        self.before_growth = self.current;
        self.current = total;
        self.peak = self.peak.max(total);
        self.denied = None;
        Ok(true)
    }

    fn memory_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        // Approved, then refused below us (the pool's slot is smaller):
        // the memory did not grow.
        self.current = self.before_growth;
        Ok(())
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }

    fn instances(&self) -> usize {
        64
    }

    fn tables(&self) -> usize {
        64
    }

    fn memories(&self) -> usize {
        8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::ResourceLimiter;

    fn path(s: &str) -> VPath {
        VPath::parse_absolute(s).expect("path")
    }

    fn budget(limits: Limits) -> Budget {
        Budget::new(limits, Instant::now())
    }

    #[test]
    fn counts_each_document_once() {
        let mut b = budget(Limits {
            document_reads: 2,
            ..Limits::default()
        });
        b.charge_read(&path("/f/a"), 1).expect("first");
        b.charge_read(&path("/f/a"), 1)
            .expect("same document again");
        b.charge_read(&path("/f/b"), 1).expect("second");
        let err = b.charge_read(&path("/f/c"), 1).expect_err("third document");
        assert_eq!(
            (err.limit, err.used, err.allowed),
            (Limit::DocumentReads, 3, 2)
        );
        assert_eq!(b.documents_read(), 2);
    }

    #[test]
    fn refuses_reads_past_the_byte_cap_before_they_happen() {
        let mut b = budget(Limits {
            bytes_read: 100,
            ..Limits::default()
        });
        b.charge_read(&path("/f/a"), 60).expect("fits");
        let err = b.charge_read(&path("/f/b"), 41).expect_err("over");
        assert_eq!(
            (err.limit, err.used, err.allowed),
            (Limit::BytesRead, 101, 100)
        );
        assert_eq!(b.bytes_read(), 60, "a refused read charges nothing");
        let meter = b.meter();
        let err = meter
            .charge(41, 100)
            .expect_err("a stream's bytes count too");
        assert_eq!((err.used, err.allowed), (101, 100));
        meter.charge(40, 100).expect("fits");
        assert_eq!(b.bytes_read(), 100, "one counter for imports and streams");
    }

    #[test]
    fn refuses_reads_that_cannot_fit_in_memory() {
        let mut b = budget(Limits {
            memory: 1000,
            ..Limits::default()
        });
        assert_eq!(b.memory.memory_growing(0, 600, None).ok(), Some(true));
        let err = b.charge_read(&path("/f/a"), 500).expect_err("does not fit");
        assert_eq!(err.limit, Limit::Memory);
        assert_eq!(b.memory.denied, Some(1100));
    }

    #[test]
    fn limits_all_memories_together_and_records_denials() {
        let mut m = MemoryLimiter::new(100);
        assert_eq!(m.memory_growing(0, 60, None).ok(), Some(true));
        assert_eq!(m.memory_growing(0, 30, None).ok(), Some(true));
        assert_eq!(m.denied, None);
        assert_eq!(m.memory_growing(60, 80, None).ok(), Some(false));
        assert_eq!(m.denied, Some(110));
        assert_eq!(m.peak, 90);
    }

    #[test]
    fn a_denial_the_guest_survives_is_forgotten_at_the_next_growth() {
        let mut m = MemoryLimiter::new(100);
        assert_eq!(m.memory_growing(0, 150, None).ok(), Some(false));
        assert_eq!(m.denied, Some(150));
        assert_eq!(m.memory_growing(0, 50, None).ok(), Some(true));
        assert_eq!(m.denied, None, "a later trap is not the memory limit's");
    }

    #[test]
    fn a_growth_that_fails_after_approval_is_not_counted() {
        let mut m = MemoryLimiter::new(100);
        assert_eq!(m.memory_growing(0, 40, None).ok(), Some(true));
        assert_eq!(m.memory_growing(40, 90, None).ok(), Some(true));
        m.memory_grow_failed(wasmtime::Error::msg("no room in the slot"))
            .expect("handled");
        assert_eq!(m.current, 40);
        assert_eq!(m.memory_growing(40, 100, None).ok(), Some(true));
    }
}
