//! `vfsbox:script/budget`: what is left of the run's budget.

use super::ScriptHost;
use super::bindings::vfsbox::script::budget::{self as wit, Allowances};
use crate::runtime::budget::millis;

impl wit::Host for ScriptHost {
    async fn remaining(&mut self) -> wasmtime::Result<Allowances> {
        let b = &self.budget;
        Ok(Allowances {
            time_ms: millis(b.time_left()),
            fuel: b.fuel_left,
            document_reads: b.documents_left(),
            bytes_read: b.bytes_left(),
            scan_files: b.scan_files_left(),
            scan_bytes: b.scan_bytes_left(),
        })
    }
}
