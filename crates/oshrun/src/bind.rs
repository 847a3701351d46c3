//! Process binding: which CPUs each PE may run on (`--bind-to`, `SHMEM_BIND_TO`).
//!
//! PE i gets the i-th core (or hardware thread) of the CPUs oshrun itself may use, so a
//! job inside a Slurm allocation or a cgroup cpuset stays inside it. Two jobs started
//! side by side in the same set both start at its first core: binding assumes the job
//! has its CPUs to itself (`--bind-to none` when it does not).

use std::io;

pub use rshmem_util::config::BindTo;
pub use rshmem_util::cpus::{cpu_list, parse_cpu_list};

/// The binding the environment asks for when the command line does not (the table's
/// `BIND_TO` row: `SHMEM_BIND_TO`, then `SMA_BIND_TO`; `auto` when unset).
pub fn from_env() -> Result<BindTo, String> {
    match rshmem_util::config::env_value("BIND_TO") {
        Some((var, v)) => v.parse().map_err(|e| format!("{var}: {e}")),
        None => Ok(BindTo::Auto),
    }
}

/// What each PE is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The mode in force after `auto` was resolved (`Core`, `Hwthread` or `None`).
    pub mode: BindTo,
    /// The CPUs of PE i, or empty when PEs are not bound.
    pub cpus: Vec<Vec<usize>>,
    /// The CPUs oshrun may use (what every PE may use when not bound).
    pub allowed: Vec<usize>,
    /// Cores among `allowed`.
    pub cores: usize,
}

impl Plan {
    /// The CPUs PE `rank` is bound to, if it is bound.
    pub fn cpus_of(&self, rank: usize) -> Option<&[usize]> {
        self.cpus.get(rank).map(Vec::as_slice)
    }

    /// One line for `--report-bindings` and `SHMEM_INFO`.
    pub fn summary(&self, np: usize) -> String {
        let set = cpu_list(&self.allowed);
        match self.mode {
            BindTo::None => format!(
                "{np} PE(s) not bound: each may run on CPUs {set} ({} core(s))",
                self.cores
            ),
            mode => format!(
                "{np} PE(s) bound to a {} each, in order, among CPUs {set}",
                if mode == BindTo::Core {
                    "core"
                } else {
                    "hardware thread"
                }
            ),
        }
    }
}

/// Decides the binding of `np` PEs among `allowed` CPUs grouped into `cores` (each a list
/// of the CPUs of one core, in order).
pub fn plan(
    mode: BindTo,
    np: usize,
    allowed: &[usize],
    cores: &[Vec<usize>],
) -> Result<Plan, String> {
    let units: Vec<Vec<usize>> = match mode {
        BindTo::Auto if np <= cores.len() => cores.to_vec(),
        BindTo::Core => cores.to_vec(),
        BindTo::Hwthread => allowed.iter().map(|&c| vec![c]).collect(),
        BindTo::Auto | BindTo::None => Vec::new(),
    };
    let resolved = match mode {
        BindTo::Auto if units.is_empty() => BindTo::None,
        BindTo::Auto => BindTo::Core,
        m => m,
    };
    if resolved != BindTo::None && np > units.len() {
        return Err(format!(
            "--bind-to {resolved}: {np} PEs do not fit the {} {}(s) oshrun may use (CPUs {}); \
             run fewer PEs or use --bind-to none",
            units.len(),
            if resolved == BindTo::Core {
                "core"
            } else {
                "hardware thread"
            },
            cpu_list(allowed)
        ));
    }
    let mut cpus = units;
    cpus.truncate(if resolved == BindTo::None { 0 } else { np });
    Ok(Plan {
        mode: resolved,
        cpus,
        allowed: allowed.to_vec(),
        cores: cores.len(),
    })
}

/// The CPUs this process may run on, in increasing order.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain bits (all zero is a valid empty set); sched_getaffinity
    // writes at most `size_of::<cpu_set_t>()` bytes into it, and CPU_ISSET reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect())
    }
}

/// `allowed` grouped into cores, in order of each core's first allowed CPU: the CPUs
/// that `/sys/devices/system/cpu/cpuN/topology/core_cpus_list` (or the older
/// `thread_siblings_list`) names together. A CPU whose topology cannot be read is a core
/// of its own.
pub fn cores_of(allowed: &[usize]) -> Vec<Vec<usize>> {
    let mut cores: Vec<Vec<usize>> = Vec::new();
    for &cpu in allowed {
        let siblings = ["core_cpus_list", "thread_siblings_list"]
            .iter()
            .find_map(|f| {
                std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/topology/{f}"))
                    .ok()
                    .and_then(|s| parse_cpu_list(&s))
            })
            .unwrap_or_else(|| vec![cpu]);
        match cores
            .iter_mut()
            .find(|c| c.iter().any(|x| siblings.contains(x)))
        {
            Some(core) => core.push(cpu),
            None => cores.push(vec![cpu]),
        }
    }
    cores
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_way_smt() -> (Vec<usize>, Vec<Vec<usize>>) {
        // 4 cores of 2 threads, numbered as Linux does on x86: core k = CPUs k and k+4.
        let allowed: Vec<usize> = (0..8).collect();
        let cores = (0..4).map(|k| vec![k, k + 4]).collect();
        (allowed, cores)
    }

    #[test]
    fn auto_binds_cores_when_the_pes_fit() {
        let (allowed, cores) = two_way_smt();
        let p = plan(BindTo::Auto, 3, &allowed, &cores).unwrap();
        assert_eq!(p.mode, BindTo::Core);
        assert_eq!(p.cpus, vec![vec![0, 4], vec![1, 5], vec![2, 6]]);
        assert_eq!(p.cpus_of(3), None);
    }

    #[test]
    fn auto_does_not_bind_oversubscribed_jobs() {
        let (allowed, cores) = two_way_smt();
        let p = plan(BindTo::Auto, 5, &allowed, &cores).unwrap();
        assert_eq!(p.mode, BindTo::None);
        assert!(p.cpus.is_empty());
        assert!(p.summary(5).contains("not bound"), "{}", p.summary(5));
    }

    #[test]
    fn explicit_modes() {
        let (allowed, cores) = two_way_smt();
        let p = plan(BindTo::Hwthread, 6, &allowed, &cores).unwrap();
        assert_eq!(p.cpus_of(5), Some(&[5][..]));
        assert!(plan(BindTo::None, 2, &allowed, &cores)
            .unwrap()
            .cpus
            .is_empty());
        let e = plan(BindTo::Core, 5, &allowed, &cores).unwrap_err();
        assert!(e.contains("5 PEs do not fit the 4 core(s)"), "{e}");
        assert!(e.contains("CPUs 0-7"), "{e}");
        assert!(plan(BindTo::Hwthread, 9, &allowed, &cores).is_err());
    }

    #[test]
    fn this_process_has_cpus_in_cores() {
        let allowed = allowed_cpus().unwrap();
        assert!(!allowed.is_empty());
        let cores = cores_of(&allowed);
        let mut flat: Vec<usize> = cores.concat();
        flat.sort_unstable();
        assert_eq!(flat, allowed, "every allowed CPU is in exactly one core");
    }

    #[test]
    fn env_spellings() {
        assert_eq!("Core".parse::<BindTo>(), Ok(BindTo::Core));
        assert_eq!("hwthread".parse::<BindTo>(), Ok(BindTo::Hwthread));
        assert!("socket".parse::<BindTo>().is_err());
    }
}
