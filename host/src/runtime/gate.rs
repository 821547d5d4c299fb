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

/// The right to run one script. Dropping it frees the slot, unless work
/// it started is still going on (a compilation outliving its caller, say):
/// the slot is free once that has ended too.
#[derive(Debug)]
pub struct Permit {
    slot: Arc<Slot>,
}

/// The slots a permit holds, shared with the work done under it.
#[derive(Debug)]
pub(crate) struct Slot {
    _process: OwnedSemaphorePermit,
    _tenant: Option<OwnedSemaphorePermit>,
    /// Held while compiling, so one permit never compiles two scripts at
    /// once.
    pub(crate) compiling: Arc<tokio::sync::Mutex<()>>,
}

impl Permit {
    /// A share of the slot for work that must hold it even if the permit's
    /// owner goes away first.
    pub(crate) fn share(&self) -> Arc<Slot> {
        self.slot.clone()
    }
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
/// or answers at once which one is full: the process's when both are.
///
/// The tenant's slot is taken before the process's, so that a tenant over
/// its cap never holds, even for a moment, a process slot another tenant
/// could have had.
pub(crate) fn admit(process: &Gate, tenant: Option<&Gate>) -> Result<Permit, Busy> {
    if process.slots.available_permits() == 0 {
        return Err(Busy::Process);
    }
    let t = match tenant {
        Some(gate) => Some(
            gate.try_take()
                .ok_or_else(|| tenant_refusal(process, gate))?,
        ),
        None => None,
    };
    // Another request may have taken the last process slot meanwhile.
    let p = process.try_take().ok_or(Busy::Process)?;
    Ok(Permit {
        slot: Arc::new(Slot {
            _process: p,
            _tenant: t,
            compiling: Arc::default(),
        }),
    })
}

/// Why a full tenant gate refused: the tenant's cap only if it is lower
/// than the process's. A tenant whose cap is the process's (the anonymous
/// tenant of a server without tenants, say) fills up only with the process,
/// so its refusal is the process's, whatever the order in which other
/// requests are taking or releasing their two slots at that moment.
fn tenant_refusal(process: &Gate, tenant: &Gate) -> Busy {
    if tenant.capacity() >= process.capacity() {
        Busy::Process
    } else {
        Busy::Tenant
    }
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
    fn a_shared_slot_stays_taken_until_every_share_is_gone() {
        let gate = Gate::new(1);
        let permit = admit(&gate, None).expect("slot");
        let share = permit.share();
        drop(permit);
        assert_eq!(gate.live(), 1, "the work under the permit still runs");
        assert_eq!(admit(&gate, None).unwrap_err(), Busy::Process);
        drop(share);
        assert_eq!(gate.live(), 0);
    }

    #[test]
    fn a_full_process_gate_does_not_hold_a_tenant_slot() {
        let process = Gate::new(1);
        let tenant = Gate::new(4);
        let _a = admit(&process, None).expect("first");
        assert_eq!(admit(&process, Some(&tenant)).unwrap_err(), Busy::Process);
        assert_eq!(
            tenant.live(),
            0,
            "the refused request released its tenant slot"
        );
    }

    #[test]
    fn a_full_process_is_busy_even_for_a_full_tenant() {
        let process = Gate::new(1);
        let tenant = Gate::new(1);
        let _a = admit(&process, Some(&tenant)).expect("first");
        assert_eq!(admit(&process, Some(&tenant)).unwrap_err(), Busy::Process);
    }

    #[test]
    fn a_tenant_as_large_as_the_process_is_never_the_cause() {
        // Four admissions in flight have taken their tenant slots and not
        // yet their process slots: the process gate still shows four free.
        let process = Gate::new(4);
        let tenant = Gate::new(4);
        let _in_flight: Vec<_> = (0..4).map(|_| tenant.try_take().expect("slot")).collect();
        assert_eq!(admit(&process, Some(&tenant)).unwrap_err(), Busy::Process);
        // A smaller tenant is its own cause.
        let small = Gate::new(2);
        let _held: Vec<_> = (0..2).map(|_| small.try_take().expect("slot")).collect();
        assert_eq!(admit(&process, Some(&small)).unwrap_err(), Busy::Tenant);
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
