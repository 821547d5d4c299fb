//! The host side of the `vfsbox:script` world: the `fs`, `search` and
//! `budget` imports, `wasi:filesystem` served over the same documents, and
//! the WASI subset a script may use.
//!
//! Every import has the same shape: a method on [`ScriptHost`], the run's
//! state for these imports, registered with one `add_to_linker` call. Each
//! import charges the run's budget before doing work, and awaits its backend
//! only for the time left before the run's deadline.

mod budget;
mod filesystem;
mod fs;
mod search;

pub(crate) use filesystem::FilesState;

use std::future::Future;

use wasmtime::component::{HasData, HasSelf, Linker, ResourceTable};
use wasmtime_wasi::p2::bindings as wasi;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::audit::{AuditError, AuditLog, Caller};
use crate::runtime::LimitExceeded;
use crate::runtime::budget::Budget;
use crate::vfs::{FsError, PathError, VPath, Vfs};

/// Generated from `wit/`, the one source of truth for the interface.
pub(crate) mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "script",
        imports: { default: async | trappable },
        trappable_error_type: {
            "vfsbox:script/types.error" => super::HostError,
        },
        with: {
            "wasi:cli/exit": wasmtime_wasi::p2::bindings::cli::exit,
            "wasi:clocks/wall-clock": wasmtime_wasi::p2::bindings::clocks::wall_clock,
        },
    });
}

/// `wasi:filesystem` 0.2, generated from the WASI packages in `wit/deps`,
/// implemented by [`filesystem`] over the VFS. Its streams, pollables and
/// errors are `wasi:io`'s, the ones the linker already has; its descriptors
/// are this host's own, never a host file (wasmtime-wasi's filesystem is not
/// linked).
pub(crate) mod filesystem_bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        inline: "
            package vfsbox:host;
            world filesystem {
                import wasi:filesystem/types@0.2.12;
                import wasi:filesystem/preopens@0.2.12;
            }
        ",
        world: "vfsbox:host/filesystem",
        imports: { default: async | trappable },
        trappable_error_type: {
            "wasi:filesystem/types.error-code" => super::filesystem::Failure,
        },
        with: {
            "wasi:io": wasmtime_wasi_io::bindings::wasi::io,
            "wasi:clocks/wall-clock": wasmtime_wasi::p2::bindings::clocks::wall_clock,
            "wasi:filesystem/types.descriptor": super::filesystem::Descriptor,
            "wasi:filesystem/types.directory-entry-stream": super::filesystem::DirectoryEntries,
        },
    });
}

use bindings::vfsbox::script::types;

/// The state of one run that the `vfsbox:script` imports use.
#[derive(Debug)]
pub(crate) struct ScriptHost {
    pub(crate) vfs: Vfs,
    pub(crate) cwd: VPath,
    pub(crate) budget: Budget,
    pub(crate) audit: AuditLog,
    pub(crate) caller: Caller,
    pub(crate) script_id: String,
    /// What `wasi:filesystem` keeps for the run: its open handles and the
    /// metadata it has learnt.
    pub(crate) files: filesystem::FilesState,
}

/// What an import returns on failure: an error the guest sees, or a trap
/// that ends the run (a spent limit, a failed audit write).
#[derive(Debug)]
pub(crate) enum HostError {
    Guest(types::Error),
    Trap(wasmtime::Error),
}

/// The WIT error for a filesystem error.
fn wit_error(e: FsError) -> types::Error {
    match e {
        FsError::NotFound(s) => types::Error::NotFound(s),
        FsError::NotADirectory(s) => types::Error::NotADirectory(s),
        FsError::IsADirectory(s) => types::Error::IsADirectory(s),
        FsError::InvalidPath(s) => types::Error::InvalidPath(s),
        FsError::Denied(s) => types::Error::Denied(s),
        FsError::Unavailable(s) => types::Error::Unavailable(s),
    }
}

impl From<FsError> for HostError {
    fn from(e: FsError) -> Self {
        HostError::Guest(wit_error(e))
    }
}

impl From<LimitExceeded> for HostError {
    fn from(e: LimitExceeded) -> Self {
        HostError::Trap(wasmtime::Error::new(e))
    }
}

impl From<AuditError> for HostError {
    fn from(e: AuditError) -> Self {
        HostError::Trap(wasmtime::Error::new(e))
    }
}

impl types::Host for ScriptHost {
    fn convert_error(&mut self, err: HostError) -> wasmtime::Result<types::Error> {
        match err {
            HostError::Guest(e) => Ok(e),
            HostError::Trap(e) => Err(e),
        }
    }
}

impl ScriptHost {
    /// Resolves a path from the guest against the run's working directory.
    fn resolve(&self, path: &str) -> Result<VPath, HostError> {
        crate::vfs::resolve(&self.cwd, path).map_err(|e: PathError| {
            let shown: String = path.chars().take(64).collect();
            FsError::InvalidPath(format!("{shown:?}: {e}")).into()
        })
    }

    /// Awaits `work` for the time left before the deadline; at the deadline
    /// the work is dropped (cancelled) and the run ends.
    async fn before_deadline<T>(&self, work: impl Future<Output = T>) -> Result<T, HostError> {
        tokio::time::timeout_at(self.budget.deadline().into(), work)
            .await
            .map_err(|_| self.budget.deadline_exceeded().into())
    }
}

/// The resource-table view `wasi:io` needs.
struct IoTable;

impl HasData for IoTable {
    type Data<'a> = &'a mut ResourceTable;
}

/// The data of a run's store.
pub(crate) struct RunState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) host: ScriptHost,
}

impl std::fmt::Debug for RunState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunState")
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

impl WasiView for RunState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// The WASI interfaces a script may import, besides `vfsbox:script`. These
/// are all the linker provides: no sockets, no HTTP. The filesystem is the
/// documents, read-only, one preopened directory per mount ([`filesystem`]).
pub(crate) const ALLOWED_WASI: &[&str] = &[
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/stderr",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:cli/terminal-stderr",
    "wasi:clocks/monotonic-clock",
    "wasi:clocks/wall-clock",
    "wasi:filesystem/preopens",
    "wasi:filesystem/types",
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
    "wasi:random/random",
    "wasi:random/insecure",
    "wasi:random/insecure-seed",
];

/// The package of vfsbox's own interfaces.
pub(crate) const SCRIPT_PACKAGE: &str = "vfsbox:script/";

/// Adds the allowed WASI interfaces and the `vfsbox:script` imports.
pub(crate) fn add_to_linker(linker: &mut Linker<RunState>) -> wasmtime::Result<()> {
    use wasmtime_wasi::cli::{WasiCli, WasiCliView};
    use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView};
    use wasmtime_wasi::random::WasiRandom;
    use wasmtime_wasi_io::bindings::wasi::io;

    let l = linker;
    io::error::add_to_linker::<RunState, IoTable>(l, |s| &mut s.table)?;
    io::poll::add_to_linker::<RunState, IoTable>(l, |s| &mut s.table)?;
    io::streams::add_to_linker::<RunState, IoTable>(l, |s| &mut s.table)?;
    wasi::clocks::wall_clock::add_to_linker::<RunState, WasiClocks>(l, RunState::clocks)?;
    wasi::clocks::monotonic_clock::add_to_linker::<RunState, WasiClocks>(l, RunState::clocks)?;
    wasi::random::random::add_to_linker::<RunState, WasiRandom>(l, |s| s.wasi.random())?;
    wasi::random::insecure::add_to_linker::<RunState, WasiRandom>(l, |s| s.wasi.random())?;
    wasi::random::insecure_seed::add_to_linker::<RunState, WasiRandom>(l, |s| s.wasi.random())?;
    wasi::cli::exit::add_to_linker::<RunState, WasiCli>(l, RunState::cli)?;
    wasi::cli::environment::add_to_linker::<RunState, WasiCli>(l, RunState::cli)?;
    wasi::cli::stdin::add_to_linker::<RunState, WasiCli>(l, RunState::cli)?;
    wasi::cli::stdout::add_to_linker::<RunState, WasiCli>(l, RunState::cli)?;
    wasi::cli::stderr::add_to_linker::<RunState, WasiCli>(l, RunState::cli)?;
    wasi::cli::terminal_input::add_to_linker::<RunState, WasiCli>(l, RunState::cli)?;
    wasi::cli::terminal_output::add_to_linker::<RunState, WasiCli>(l, RunState::cli)?;
    wasi::cli::terminal_stdin::add_to_linker::<RunState, WasiCli>(l, RunState::cli)?;
    wasi::cli::terminal_stdout::add_to_linker::<RunState, WasiCli>(l, RunState::cli)?;
    wasi::cli::terminal_stderr::add_to_linker::<RunState, WasiCli>(l, RunState::cli)?;
    filesystem::add_to_linker(l)?;
    // Only a built-in component may import these (the Python interpreter's
    // runtime does); every use fails, as the WASI context allows no TCP,
    // UDP or name lookup.
    use wasmtime_wasi::sockets::{WasiSockets, WasiSocketsView};
    let options = wasi::sockets::network::LinkOptions::default();
    wasi::sockets::tcp::add_to_linker::<RunState, WasiSockets>(l, RunState::sockets)?;
    wasi::sockets::udp::add_to_linker::<RunState, WasiSockets>(l, RunState::sockets)?;
    wasi::sockets::tcp_create_socket::add_to_linker::<RunState, WasiSockets>(l, RunState::sockets)?;
    wasi::sockets::udp_create_socket::add_to_linker::<RunState, WasiSockets>(l, RunState::sockets)?;
    wasi::sockets::instance_network::add_to_linker::<RunState, WasiSockets>(l, RunState::sockets)?;
    wasi::sockets::network::add_to_linker::<RunState, WasiSockets>(l, &options, RunState::sockets)?;
    wasi::sockets::ip_name_lookup::add_to_linker::<RunState, WasiSockets>(l, RunState::sockets)?;
    use bindings::vfsbox::script as vfsbox;
    vfsbox::types::add_to_linker::<RunState, HasSelf<ScriptHost>>(l, |s| &mut s.host)?;
    vfsbox::fs::add_to_linker::<RunState, HasSelf<ScriptHost>>(l, |s| &mut s.host)?;
    vfsbox::search::add_to_linker::<RunState, HasSelf<ScriptHost>>(l, |s| &mut s.host)?;
    vfsbox::budget::add_to_linker::<RunState, HasSelf<ScriptHost>>(l, |s| &mut s.host)?;
    Ok(())
}
