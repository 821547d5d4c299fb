//! Admission: at most N live scripts, answered at once when full.
//!
//! A [`Permit`] is taken before a script is compiled and is owned by its run
//! until the run's store is gone, whatever ends the run. Nothing ever waits
//! for a permit: when none is free the answer is [`Busy`] immediately.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A cap on live scripts: the process's, or one tenant's.
#[derive(Debug, Clone)]
pub struct Gate {
    slots: Arc<Semaphore>,
    cap: usize,
}

/// Why a script was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Busy {
    /// The process runs as many scripts as it may.
    #[error("the server is running as many scripts as it may; retry shortly")]
    Process,
    /// The tenant runs as many scripts as it may.
    #[error("this tenant is running as many scripts as it may; retry shortly")]
    Tenant,
}

/// The right to run one script. Dropping it frees the slot.
#[derive(Debug)]
pub struct Permit {
    _process: OwnedSemaphorePermit,
    _tenant: Option<OwnedSemaphorePermit>,
}

impl Gate {
    /// A gate of `cap` slots.
    pub fn new(cap: u32) -> Gate {
        let cap = cap as usize;
        Gate {
            slots: Arc::new(Semaphore::new(cap)),
            cap,
        }
    }

    /// How many slots there are.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// How many slots are taken.
    pub fn live(&self) -> usize {
        self.cap - self.slots.available_permits()
    }

    fn try_take(&self) -> Option<OwnedSemaphorePermit> {
        // Never waits: no free slot (or a closed gate) is a refusal.
        self.slots.clone().try_acquire_owned().ok()
    }
}

/// Takes a slot of the process gate and, if given, of the tenant's gate,
/// or answers at once which one is full.
pub(crate) fn admit(process: &Gate, tenant: Option<&Gate>) -> Result<Permit, Busy> {
    let p = process.try_take().ok_or(Busy::Process)?;
    let t = match tenant {
        Some(gate) => Some(gate.try_take().ok_or(Busy::Tenant)?),
        None => None,
    };
    Ok(Permit {
        _process: p,
        _tenant: t,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_up_to_the_cap_then_answers_busy() {
        let gate = Gate::new(2);
        let a = admit(&gate, None).expect("first");
        let _b = admit(&gate, None).expect("second");
        assert_eq!(gate.live(), 2);
        assert_eq!(admit(&gate, None).unwrap_err(), Busy::Process);
        drop(a);
        assert_eq!(gate.live(), 1);
        assert!(admit(&gate, None).is_ok());
    }

    #[test]
    fn a_full_tenant_is_refused_without_holding_a_process_slot() {
        let process = Gate::new(4);
        let tenant = Gate::new(1);
        let _a = admit(&process, Some(&tenant)).expect("first");
        assert_eq!(admit(&process, Some(&tenant)).unwrap_err(), Busy::Tenant);
        assert_eq!(
            process.live(),
            1,
            "the refused request released its process slot"
        );
        assert!(admit(&process, None).is_ok(), "other tenants still run");
    }
}
