//! The lock protocols (`ops::lock`), agreed at init through the launcher's key exchange:
//! PEs that mixed FIFO hand-off and stealing on one lock would break both, so every PE
//! must choose the same, whatever its own environment or machine says.

use std::collections::HashMap;

use rshmem_boot::{BootError, Bootstrap};
use rshmem_util::config::LockProtocol;
use rshmem_util::{wait, Config};

use super::sys;

/// Whether each face's locks steal (a running PE may take a free lock ahead of the queue).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LockModes {
    /// `shmem_set_lock` (`SHMEM_LOCK_PROTOCOL`).
    pub shmem: bool,
    /// Coarray Fortran's LOCK (`RSHMEM_CAF_LOCK`).
    pub caf: bool,
}

fn letter(p: LockProtocol) -> char {
    match p {
        LockProtocol::Auto => 'a',
        LockProtocol::Fifo => 'f',
        LockProtocol::Steal => 's',
    }
}

/// Publishes this PE's part before the key exchange's fence: its machine's CPUs for the
/// job and the protocols it asks for.
pub(crate) fn offer(boot: &dyn Bootstrap, cfg: &Config) -> Result<(), BootError> {
    let want = format!(
        "{}:{}{}",
        wait::job_cpus(),
        letter(cfg.lock_protocol),
        letter(cfg.caf_lock)
    );
    boot.put("lock", &want)
}

/// After the fence: a face steals when some PE asks for `steal`, or for `auto` on a
/// machine that runs more PEs of the job than it has CPUs (`keys`: every PE's host key).
pub(crate) fn agree(boot: &dyn Bootstrap, keys: &[String]) -> Result<LockModes, BootError> {
    let mut per_machine: HashMap<&str, usize> = HashMap::new();
    for k in keys {
        *per_machine.entry(sys::machine_of(k)).or_default() += 1;
    }
    let mut modes = LockModes::default();
    for (pe, key) in keys.iter().enumerate() {
        let v = boot.get(pe, "lock")?;
        let (cpus, wants) = v.split_once(':').unwrap_or(("0", ""));
        let crowded = per_machine[sys::machine_of(key)] > cpus.parse().unwrap_or(usize::MAX);
        let steals = |w: Option<char>| w == Some('s') || (w == Some('a') && crowded);
        let mut w = wants.chars();
        modes.shmem |= steals(w.next());
        modes.caf |= steals(w.next());
    }
    Ok(modes)
}
