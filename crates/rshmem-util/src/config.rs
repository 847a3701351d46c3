//! The typed table of environment variables: one row per variable gives its name, kind,
//! default, category and help. The table generates the frozen [`Config`], its parser
//! (`SHMEM_<NAME>`, then the deprecated `SMA_<NAME>`; the project's own `RSHMEM_*` names
//! as written), the `SHMEM_INFO` printer and the warning for unknown names.

use std::fmt::Write as _;

/// A variable whose value does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("environment variable {var}={value:?} is invalid: {reason}")]
pub struct ConfigError {
    /// The variable as the user spelled it (`SHMEM_...` or `SMA_...`).
    pub var: String,
    /// Its raw value.
    pub value: String,
    /// Why it does not parse.
    pub reason: String,
}

/// How a kind of variable parses and prints.
trait Kind {
    type Value: Clone + std::fmt::Debug;
    fn parse(s: &str) -> Result<Self::Value, String>;
    fn show(v: &Self::Value) -> String;
}

/// A byte count with an optional K/M/G/T suffix (powers of 1024).
struct Size;
impl Kind for Size {
    type Value = usize;
    fn parse(s: &str) -> Result<usize, String> {
        parse_size(s)
    }
    fn show(v: &usize) -> String {
        show_size(*v)
    }
}

/// Largest symmetric heap: 64 PiB, more than a process can address (57-bit virtual
/// addresses), so the sizes derived from it never overflow.
pub const HEAP_MAX: usize = 1 << 56;

/// The symmetric heap's size: a [`Size`] of at most [`HEAP_MAX`].
struct HeapSize;
impl Kind for HeapSize {
    type Value = usize;
    fn parse(s: &str) -> Result<usize, String> {
        match parse_size(s)? {
            v if v > HEAP_MAX => Err(format!(
                "{s:?} is larger than 64P ({HEAP_MAX} bytes), more than a process can address"
            )),
            v => Ok(v),
        }
    }
    fn show(v: &usize) -> String {
        show_size(*v)
    }
}

/// A size, or `auto` (`None`): the default is derived from another variable.
struct AutoSize;
impl Kind for AutoSize {
    type Value = Option<usize>;
    fn parse(s: &str) -> Result<Option<usize>, String> {
        match s.trim() {
            "" | "auto" => Ok(None),
            t => parse_size(t).map(Some),
        }
    }
    fn show(v: &Option<usize>) -> String {
        v.map_or("auto".into(), show_size)
    }
}

/// Seconds (a decimal number); 0 = never (`None`).
struct Secs;
impl Kind for Secs {
    type Value = Option<std::time::Duration>;
    fn parse(s: &str) -> Result<Self::Value, String> {
        match s.trim().parse::<f64>() {
            Ok(0.0) => Ok(None),
            Ok(v) if v > 0.0 => std::time::Duration::try_from_secs_f64(v)
                .map(Some)
                .map_err(|_| format!("{s:?} is too large")),
            _ => Err("expected a number of seconds (0 = never)".into()),
        }
    }
    fn show(v: &Self::Value) -> String {
        v.map_or("0".into(), |d| format!("{}", d.as_secs_f64()))
    }
}

/// `SHMEM_PROFILE`: 0, 1 or 2.
struct ProfileLevel;
impl Kind for ProfileLevel {
    type Value = usize;
    fn parse(s: &str) -> Result<usize, String> {
        count_in(s, 0, 2, "0 = off, 1 = sampled times, 2 = every call timed")
    }
    fn show(v: &usize) -> String {
        v.to_string()
    }
}

/// A lock protocol (`SHMEM_LOCK_PROTOCOL` for `shmem_set_lock`, `RSHMEM_CAF_LOCK` for
/// Coarray Fortran's LOCK).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockProtocol {
    /// `steal` when some host runs more PEs than it has cores, `fifo` otherwise.
    Auto,
    /// The MCS queue, handed from each holder to the next.
    Fifo,
    /// The queue, but a running image may take a free lock ahead of it.
    Steal,
}

struct LockKind;
impl Kind for LockKind {
    type Value = LockProtocol;
    fn parse(s: &str) -> Result<LockProtocol, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(LockProtocol::Auto),
            "fifo" => Ok(LockProtocol::Fifo),
            "steal" => Ok(LockProtocol::Steal),
            _ => Err("unknown lock protocol (available: auto, fifo, steal)".into()),
        }
    }
    fn show(v: &LockProtocol) -> String {
        match v {
            LockProtocol::Auto => "auto",
            LockProtocol::Fifo => "fifo",
            LockProtocol::Steal => "steal",
        }
        .into()
    }
}

/// Where oshrun runs each PE (`SHMEM_BIND_TO`, `oshrun --bind-to`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindTo {
    /// `core` when the job's PEs fit the cores oshrun may use, `none` otherwise.
    Auto,
    /// PE i on the i-th core (all its hardware threads) of oshrun's CPUs.
    Core,
    /// PE i on the i-th hardware thread (logical CPU) of oshrun's CPUs.
    Hwthread,
    /// No binding: every PE may run on all of oshrun's CPUs.
    None,
}

impl std::str::FromStr for BindTo {
    type Err = String;
    fn from_str(s: &str) -> Result<BindTo, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(BindTo::Auto),
            "core" => Ok(BindTo::Core),
            "hwthread" => Ok(BindTo::Hwthread),
            "none" => Ok(BindTo::None),
            _ => Err(format!(
                "{s:?} is not a binding (expected auto, core, hwthread or none)"
            )),
        }
    }
}

impl std::fmt::Display for BindTo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BindTo::Auto => "auto",
            BindTo::Core => "core",
            BindTo::Hwthread => "hwthread",
            BindTo::None => "none",
        })
    }
}

struct BindKind;
impl Kind for BindKind {
    type Value = BindTo;
    fn parse(s: &str) -> Result<BindTo, String> {
        s.parse()
    }
    fn show(v: &BindTo) -> String {
        v.to_string()
    }
}

/// A non-negative count.
struct Count;
impl Kind for Count {
    type Value = usize;
    fn parse(s: &str) -> Result<usize, String> {
        s.trim()
            .parse()
            .map_err(|_| "expected a non-negative integer".into())
    }
    fn show(v: &usize) -> String {
        v.to_string()
    }
}

/// Fewest team slots: the predefined teams (WORLD, SHARED, HOST, LEADERS) take four, and
/// the runtime's own copies of HOST and LEADERS (the hierarchical collectives of WORLD,
/// which must not share scratch with a user's collective on HOST in another thread) two.
pub const TEAMS_MIN: usize = 6;
/// Most team slots: each costs about 1 MiB of address space per PE (sparse, but reserved
/// for every PE of the host), so 65536 already reserves 64 GiB per PE.
pub const TEAMS_MAX: usize = 1 << 16;
/// Most copy-engine lanes: each is a thread and a queue.
pub const LANES_MAX: usize = 256;

fn count_in(s: &str, min: usize, max: usize, what: &str) -> Result<usize, String> {
    let v = Count::parse(s)?;
    if v < min {
        Err(format!("must be at least {min} ({what})"))
    } else if v > max {
        Err(format!("must be at most {max} ({what})"))
    } else {
        Ok(v)
    }
}

/// The number of team slots, within [`TEAMS_MIN`]..=[`TEAMS_MAX`].
struct Teams;
impl Kind for Teams {
    type Value = usize;
    fn parse(s: &str) -> Result<usize, String> {
        count_in(
            s,
            TEAMS_MIN,
            TEAMS_MAX,
            "the predefined teams WORLD, SHARED, HOST and LEADERS and the runtime's copies of HOST and LEADERS take 6 slots; each slot reserves about 1 MiB of address space",
        )
    }
    fn show(v: &usize) -> String {
        v.to_string()
    }
}

/// The number of copy-engine lanes, at most [`LANES_MAX`].
struct Lanes;
impl Kind for Lanes {
    type Value = usize;
    fn parse(s: &str) -> Result<usize, String> {
        count_in(s, 0, LANES_MAX, "each lane is a thread and a queue")
    }
    fn show(v: &usize) -> String {
        v.to_string()
    }
}

/// How PEs reach each other (`SHMEM_TRANSPORT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportMode {
    /// Shared memory among the PEs of a host, the network (`SHMEM_NETWORK`) between hosts.
    Auto,
    /// Shared memory only: every PE must be on this host.
    Shm,
    /// UCX to every PE, local ones and this one included.
    Ucx,
    /// libfabric to every PE, local ones and this one included.
    Ofi,
    /// As `Auto`, with each virtual host (`SHMEM_VIRTUAL_HOSTS`) counted as a host.
    Mixed,
}

struct Transport;
impl Kind for Transport {
    type Value = TransportMode;
    fn parse(s: &str) -> Result<TransportMode, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(TransportMode::Auto),
            "shm" => Ok(TransportMode::Shm),
            "ucx" => Ok(TransportMode::Ucx),
            "ofi" => Ok(TransportMode::Ofi),
            "mixed" => Ok(TransportMode::Mixed),
            _ => Err("expected auto, shm, ucx, ofi or mixed".into()),
        }
    }
    fn show(v: &TransportMode) -> String {
        match v {
            TransportMode::Auto => "auto",
            TransportMode::Shm => "shm",
            TransportMode::Ucx => "ucx",
            TransportMode::Ofi => "ofi",
            TransportMode::Mixed => "mixed",
        }
        .into()
    }
}

/// Which network reaches PEs off shared memory (`SHMEM_NETWORK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetworkChoice {
    /// UCX if its library loads, else libfabric.
    Auto,
    /// UCX.
    Ucx,
    /// libfabric.
    Ofi,
}

struct Network;
impl Kind for Network {
    type Value = NetworkChoice;
    fn parse(s: &str) -> Result<NetworkChoice, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(NetworkChoice::Auto),
            "ucx" => Ok(NetworkChoice::Ucx),
            "ofi" | "libfabric" => Ok(NetworkChoice::Ofi),
            _ => Err("expected auto, ucx or ofi".into()),
        }
    }
    fn show(v: &NetworkChoice) -> String {
        match v {
            NetworkChoice::Auto => "auto",
            NetworkChoice::Ucx => "ucx",
            NetworkChoice::Ofi => "ofi",
        }
        .into()
    }
}

/// A time in microseconds, or `auto` (`None`): a plain number is microseconds; `ns`,
/// `us`, `ms` and `s` suffixes are accepted.
struct WaitTime;
impl Kind for WaitTime {
    type Value = Option<std::time::Duration>;
    fn parse(s: &str) -> Result<Self::Value, String> {
        let t = s.trim().to_ascii_lowercase();
        if t.is_empty() || t == "auto" {
            return Ok(None);
        }
        let (num, unit_ns) = if let Some(n) = t.strip_suffix("ns") {
            (n, 1.0)
        } else if let Some(n) = t.strip_suffix("us") {
            (n, 1e3)
        } else if let Some(n) = t.strip_suffix("ms") {
            (n, 1e6)
        } else if let Some(n) = t.strip_suffix('s') {
            (n, 1e9)
        } else {
            (t.as_str(), 1e3)
        };
        match num.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && (0.0..=60e9).contains(&(v * unit_ns)) => {
                Ok(Some(std::time::Duration::from_nanos((v * unit_ns) as u64)))
            }
            _ => Err(format!(
                "{s:?} is not a time (expected auto, or a number of microseconds with an optional ns, us, ms or s suffix, at most 60 s)"
            )),
        }
    }
    fn show(v: &Self::Value) -> String {
        match v {
            None => "auto".into(),
            Some(d) => format!("{}us", d.as_micros()),
        }
    }
}

/// Free text (validated where it is used, e.g. algorithm names).
struct Text;
impl Kind for Text {
    type Value = String;
    fn parse(s: &str) -> Result<String, String> {
        Ok(s.trim().to_ascii_lowercase())
    }
    fn show(v: &String) -> String {
        v.clone()
    }
}

/// A file name, kept as written.
struct PathText;
impl Kind for PathText {
    type Value = String;
    fn parse(s: &str) -> Result<String, String> {
        Ok(s.trim().to_string())
    }
    fn show(v: &String) -> String {
        v.clone()
    }
}

/// A flag: 1/0, y/n, yes/no, true/false, on/off.
struct Bool;
impl Kind for Bool {
    type Value = bool;
    fn parse(s: &str) -> Result<bool, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "1" | "y" | "yes" | "true" | "on" => Ok(true),
            "0" | "n" | "no" | "false" | "off" | "" => Ok(false),
            _ => Err("expected 1/0, yes/no, true/false or on/off".into()),
        }
    }
    fn show(v: &bool) -> String {
        if *v { "1" } else { "0" }.into()
    }
}

/// Parses a size such as `512M`, `2g`, `1048576` or `1.5G` into bytes.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (num, mult): (&str, u64) = match t.char_indices().last() {
        None => return Err("empty size".into()),
        Some((i, c)) => match c.to_ascii_lowercase() {
            'k' => (&t[..i], 1 << 10),
            'm' => (&t[..i], 1 << 20),
            'g' => (&t[..i], 1 << 30),
            't' => (&t[..i], 1 << 40),
            'b' => (&t[..i], 1),
            _ => (t, 1),
        },
    };
    let bad =
        || format!("{s:?} is not a size (expected a number with an optional K, M, G or T suffix)");
    let num = num.trim();
    if num.is_empty() {
        return Err(bad());
    }
    if let Ok(n) = num.parse::<u64>() {
        return n
            .checked_mul(mult)
            .and_then(|v| usize::try_from(v).ok())
            .ok_or_else(|| format!("{s:?} is too large"));
    }
    match num.parse::<f64>() {
        Ok(f) if f.is_finite() && f >= 0.0 => {
            let v = f * mult as f64;
            if v < usize::MAX as f64 {
                Ok(v as usize)
            } else {
                Err(format!("{s:?} is too large"))
            }
        }
        _ => Err(bad()),
    }
}

/// Formats a byte count with the largest exact-ish binary unit (`1G`, `512M`, `1.5G`).
pub fn show_size(v: usize) -> String {
    const UNITS: [(&str, usize); 4] = [
        ("T", 1 << 40),
        ("G", 1 << 30),
        ("M", 1 << 20),
        ("K", 1 << 10),
    ];
    for (u, m) in UNITS {
        if v >= m {
            return if v.is_multiple_of(m) {
                format!("{}{u}", v / m)
            } else {
                format!("{:.2}{u}", v as f64 / m as f64)
            };
        }
    }
    format!("{v}B")
}

/// Prefixes of the rows that are the project's own names, read as written (no `SHMEM_` or
/// `SMA_` spelling): the library's and the launcher's (`OSHRUN_*`, set by oshrun for its PEs).
const OWN: [&str; 2] = ["RSHMEM_", "OSHRUN_"];

/// Whether row `name` is one of the project's own names.
fn is_own(name: &str) -> bool {
    OWN.iter().any(|p| name.starts_with(p))
}

/// The names a row is read under, first match wins: `SHMEM_<NAME>`, then the deprecated
/// `SMA_<NAME>`; a row of the project's own (`RSHMEM_...`, `OSHRUN_...`) under that name alone.
fn spellings(name: &str) -> Vec<String> {
    if is_own(name) {
        vec![name.to_string()]
    } else {
        vec![format!("SHMEM_{name}"), format!("SMA_{name}")]
    }
}

/// The variable set for row `row` of the table and its value, under the row's spellings
/// (as [`Config::from_env`] reads it), for the readers that run before the table is read
/// or without it: the bootstrap, oshrun, the wait policy. Reading through here keeps every
/// variable the library reads a row that `SHMEM_INFO` lists.
///
/// # Panics
/// When `row` is not a row of the table.
pub fn env_value(row: &str) -> Option<(String, String)> {
    assert!(
        ROWS.iter().any(|r| r.name == row),
        "{row} is not a row of the environment table"
    );
    spellings(row)
        .into_iter()
        .find_map(|var| std::env::var(&var).ok().map(|v| (var, v)))
}

/// The name a row is shown under.
fn shown(name: &str) -> String {
    spellings(name).swap_remove(0)
}

macro_rules! env_table {
    ($( $field:ident $name:literal : $kind:ident ( $ty:ty ) = $default:literal, $cat:literal, $help:literal; )*) => {
        /// The frozen configuration, read once at init.
        #[derive(Debug, Clone)]
        pub struct Config {
            $(
                #[doc = $help]
                pub $field: $ty,
            )*
            /// Names of the variables the user set.
            pub provided: Vec<&'static str>,
        }

        /// One row of the table, for printing and name suggestions.
        #[derive(Debug, Clone, Copy)]
        pub struct Row {
            /// Name without prefix (`SYMMETRIC_SIZE`), or in full for the project's own
            /// `RSHMEM_*` names.
            pub name: &'static str,
            /// Default as text.
            pub default: &'static str,
            /// Category for `SHMEM_INFO`.
            pub category: &'static str,
            /// One-line help.
            pub help: &'static str,
        }

        /// Every known variable.
        pub const ROWS: &[Row] = &[
            $( Row { name: $name, default: $default, category: $cat, help: $help }, )*
        ];

        impl Config {
            /// Reads the configuration from `lookup` (the process environment in
            /// [`Config::from_env`]).
            pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
                let mut provided = Vec::new();
                Ok(Config {
                    $(
                        $field: {
                            let name = $name;
                            let found = spellings(name)
                                .into_iter()
                                .find_map(|var| lookup(&var).map(|v| (var, v)));
                            match found {
                                Some((var, value)) => {
                                    provided.push(name);
                                    <$kind as Kind>::parse(&value).map_err(|reason| ConfigError { var, value, reason })?
                                }
                                None => <$kind as Kind>::parse($default).expect("table default parses"),
                            }
                        },
                    )*
                    provided,
                })
            }

            /// The `SHMEM_INFO` listing: every variable with its value, by category.
            pub fn describe(&self) -> String {
                let mut rows: Vec<(&'static str, &'static str, String, &'static str, bool)> = vec![
                    $( ($cat, $name, <$kind as Kind>::show(&self.$field), $help,
                        self.provided.contains(&$name)), )*
                ];
                rows.sort_by_key(|r| r.0);
                let mut out = String::new();
                let mut cat = "";
                for (c, name, value, help, set) in rows {
                    if c != cat {
                        let _ = writeln!(out, "  [{c}]");
                        cat = c;
                    }
                    let mark = if set { " (set)" } else { "" };
                    let name = shown(name);
                    let _ = writeln!(out, "    {name:<30} = {value:<10}{mark}  {help}");
                }
                out
            }
        }
    };
}

env_table! {
    symmetric_size "SYMMETRIC_SIZE": HeapSize(usize) = "1G", "openshmem",
        "Symmetric heap size of each PE (K/M/G/T suffixes); reserved up front, committed on use.";
    symmetric_data "SYMMETRIC_DATA": Bool(bool) = "1", "openshmem",
        "Make a C program's global and static variables symmetric (moves them onto shared memory at init).";
    debug "DEBUG": Bool(bool) = "0", "openshmem",
        "Validate every call's arguments and check that collective calls agree across PEs.";
    info "INFO": Bool(bool) = "0", "openshmem",
        "Print this configuration at init (PE 0).";
    version "VERSION": Bool(bool) = "0", "openshmem",
        "Print the library name and version at init (PE 0).";
    profile "PROFILE": ProfileLevel(usize) = "0", "openshmem",
        "Count calls, bytes and time per routine family and print a per-PE and job-wide summary at finalize (PE 0): 0 = off, 1 = on with time sampled (1 call in 128 per family), 2 = every call timed. shmem_pcontrol changes the counting at run time. The same on every PE.";
    fault_tolerant "FAULT_TOLERANT": Bool(bool) = "0", "openshmem",
        "Fault-tolerant mode: when a PE dies, oshrun keeps the others running (the job still exits non-zero); survivors see the failure as errors of the collectives and waits that involve it, can list the failed PEs and build a team of the survivors. Shared memory only. Read by oshrun and by the PEs.";
    teams_max "TEAMS_MAX": Teams(usize) = "1024", "teams",
        "Most teams alive at once per PE (6 to 65536, the 4 predefined teams and the runtime's 2 internal copies of HOST and LEADERS included); sizes the runtime area of each segment (about 1 MiB of address space per team).";
    barrier_algorithm "BARRIER_ALGORITHM": Text(String) = "auto", "collectives",
        "Team sync/barrier algorithm: auto (hierarchical on a WORLD that spans hosts, dissemination elsewhere), dissemination, linear, hierarchical (HOST, LEADERS, HOST; WORLD only).";
    bcast_algorithm "BCAST_ALGORITHM": Text(String) = "auto", "collectives",
        "Broadcast algorithm: auto (ll up to 512 B on node-local teams of up to 8 PEs, staged above it up to 32 KiB on node-local teams of 3+ PEs; on other teams across hosts binomial; where UCX maps every PE (its shared memory, one host) binomial up to 16 KiB (512 B on 2 PEs), shm above; on a WORLD that spans hosts binomial up to 16 KiB, hierarchical above; shm elsewhere), shm (single-copy pull), linear (root pushes), ll (low latency: the root stores sequence-tagged words into every member, no sync), staged (the root copies into staging chunks of its own, members copy out; no sync; node-local teams), tree (pipelined k-ary tree), binomial (pushes down a binomial tree: messages up to 16 KiB, chunks put into the children's destinations above), hierarchical (one transfer per host, then within each host; WORLD only).";
    reduce_algorithm "REDUCE_ALGORITHM": Text(String) = "auto", "collectives",
        "Reduction algorithm: auto (ll up to 512 B on node-local teams), shm (single-copy reduce-scatter), linear (rank 0 folds), ll (low latency: sequence-tagged 8-byte stores, one-shot up to 8 PEs, recursive doubling above; node-local teams up to 512 B), ll_rd (ll always by recursive doubling), recursive_doubling, ring, rabenseifner, direct (each member folds its chunk of every source and puts it into every destination, counted there: auto's choice on teams across hosts above 16 KiB on 2 PEs, above 64 KiB on more, Rabenseifner's below; where UCX maps every PE auto takes shm above 16 KiB, 512 B on 2 PEs), hierarchical.";
    reduce_crossover "REDUCE_CROSSOVER": Size(usize) = "1K", "collectives",
        "With SHMEM_REDUCE_ALGORITHM=auto, teams of 3+ PEs reduce vectors up to this size by recursive doubling, larger ones single-copy.";
    collect_algorithm "COLLECT_ALGORITHM": Text(String) = "auto", "collectives",
        "Collect algorithm: auto, shm (single-copy pull), linear (each PE pushes).";
    fcollect_algorithm "FCOLLECT_ALGORITHM": Text(String) = "auto", "collectives",
        "Fcollect algorithm: auto (ll up to 512 B per PE, 256 B on 2 PEs, on node-local teams of up to 8: each PE stores its block into every other, no sync; shm elsewhere), shm (single-copy pull), linear (each PE pushes).";
    alltoall_algorithm "ALLTOALL_ALGORITHM": Text(String) = "auto", "collectives",
        "Alltoall(s) algorithm: auto, shm (single-copy pull), linear (each PE pushes).";
    virtual_hosts "VIRTUAL_HOSTS": Count(usize) = "0", "teams",
        "Split the PEs into this many virtual hosts (contiguous blocks) for HOST/LEADERS; 0 = real hosts. With SHMEM_TRANSPORT=mixed they are transport boundaries too.";
    transport "TRANSPORT": Transport(TransportMode) = "auto", "transport",
        "How PEs reach each other: auto (shared memory on the host, the network (SHMEM_NETWORK) to other hosts), shm (shared memory only; a PE on another host is an init error), ucx (UCX to every PE, this one included), ofi (libfabric to every PE, this one included; FI_PROVIDER picks the provider, else the first with RMA and atomics), mixed (as auto, with each SHMEM_VIRTUAL_HOSTS block counted as a host: the network between blocks).";
    network "NETWORK": Network(NetworkChoice) = "auto", "transport",
        "The network to PEs off shared memory under SHMEM_TRANSPORT=auto or mixed: auto (UCX if its library loads, else libfabric), ucx, ofi (libfabric: FI_PROVIDER and libfabric's own FI_* variables apply). Every PE must make the same choice.";
    bootstrap "BOOTSTRAP": Text(String) = "auto", "launch",
        "How a PE joins its job: auto (PMI-1 when the launcher set PMI_FD or PMI_PORT: oshrun, mpiexec.hydra, srun --mpi=pmi2; PMIx when it set PMIX_NAMESPACE: Open MPI's mpirun, srun --mpi=pmix, prterun; one PE alone when no launcher started the process; an error when a launcher started it as one of several and offers neither), pmi1, pmix. Read by the bootstrap before this table.";
    pmix_library "PMIX_LIBRARY": PathText(String) = "libpmix.so.2", "launch",
        "The PMIx client library loaded at init under a PMIx launcher (a file name the dynamic loader finds, or a path).";
    ucx_library "UCX_LIBRARY": PathText(String) = "libucp.so.0", "transport",
        "The UCX library loaded at init when a PE is reached through UCX (a file name the dynamic loader finds, or a path).";
    ofi_library "OFI_LIBRARY": PathText(String) = "libfabric.so.1", "transport",
        "The libfabric library loaded at init when a PE is reached through libfabric (a file name the dynamic loader finds, or a path).";
    job_cpus "OSHRUN_JOB_CPUS": Count(usize) = "0", "waiting",
        "How many CPUs this host's PEs of the job share, which decides whether the host is oversubscribed (the WAIT_SPIN and WAIT_YIELD defaults): oshrun sets it to the CPUs it may use, since a PE it bound sees only its own core; 0 = what this process may use (affinity and CPU quota).";
    wait_spin "WAIT_SPIN": WaitTime(Option<std::time::Duration>) = "auto", "waiting",
        "How long a wait (wait_until, barrier, quiet, lock, request) spins before it yields the core; auto = 5us, or 0 when the machine has more PEs of the job than cores (simulated hosts included) (`rshmem-bench wait` measures the choice).";
    wait_yield "WAIT_YIELD": WaitTime(Option<std::time::Duration>) = "auto", "waiting",
        "How long a wait then yields (sched_yield) before it sleeps in naps of 1/16 of the time waited (20us to 2ms); auto = 2ms. With PEs bound to cores of their own (oshrun's default when they fit), a yield slower than 50us while no other thread of the PE is runnable makes this phase spin instead for 100ms.";
    copy_engine_threshold "COPY_ENGINE_THRESHOLD": Size(usize) = "128K", "contexts",
        "Non-blocking (_nbi, _nbe) transfers on the node of at least this size go to the background copy engine; smaller ones complete at once. The default is where post+wait with nothing to overlap costs no more than a plain copy; programs that compute between post and wait gain from about 8K (`rshmem-bench threshold`).";
    copy_engine_piece "COPY_ENGINE_PIECE": Size(usize) = "64K", "contexts",
        "Large engine transfers are cut into up to 16 pieces of at least this size, which a thread waiting for the transfer shares with the engine; 0 = never cut (the waiter then runs a transfer only if the engine has not started it).";
    copy_engine_lanes "COPY_ENGINE_LANES": Lanes(usize) = "1", "contexts",
        "Background copy threads (lanes); contexts and requests are spread over them. 0 = no engine: every transfer completes at once; at most 256.";
    bind_to "BIND_TO": BindKind(BindTo) = "auto", "launcher",
        "Where oshrun runs each PE (its --bind-to overrides this): core (PE i on the i-th core of the CPUs oshrun may use, e.g. a Slurm or cgroup cpuset), hwthread (the i-th logical CPU), none (anywhere in that set), auto (core when the PEs fit those cores, none when they do not: oversubscribed). Bound PEs keep their cores beside other programs (small collectives stay fast). Under any launcher, an unbound PE of a job whose PEs fit this machine's CPUs starts on the CPU of its rank among them, then may move (none: it starts where the launcher left it).";
    boot_warn_secs "RSHMEM_BOOT_WARN_SECS": Secs(Option<std::time::Duration>) = "30", "launcher",
        "Seconds a PE waits in a launcher (PMI) barrier before it warns that a PE may have left; 0 = never. Not under oshrun, which ends such a job itself.";
    caf_component_heap "RSHMEM_CAF_COMPONENT_HEAP": AutoSize(Option<usize>) = "auto", "coarrays",
        "Coarray Fortran: the symmetric heap of allocatable and pointer components (K/M/G/T suffixes); auto = an eighth of SHMEM_SYMMETRIC_SIZE.";
    caf_team_heap "RSHMEM_CAF_TEAM_HEAP": AutoSize(Option<usize>) = "auto", "coarrays",
        "Coarray Fortran: the arena FORM TEAM reserves for the initial team's children (K/M/G/T suffixes; a child team's is at most half its parent's free space); auto = SHMEM_SYMMETRIC_SIZE / 16.";
    lock_protocol "LOCK_PROTOCOL": LockKind(LockProtocol) = "auto", "waiting",
        "shmem_set_lock's protocol, the same on every PE: fifo (an MCS queue handed from holder to holder), steal (a running PE may take a free lock ahead of the queue), auto (steal when a host runs more PEs than it has cores, fifo otherwise).";
    caf_lock "RSHMEM_CAF_LOCK": LockKind(LockProtocol) = "auto", "coarrays",
        "Coarray Fortran LOCK protocol, the same on every image: fifo (an MCS queue handed from holder to holder), steal (a running image may take a free lock ahead of the queue), auto (steal when a host runs more images than it has cores, fifo otherwise).";
}

impl Config {
    /// Reads the process environment.
    pub fn from_env() -> Result<Config, ConfigError> {
        Config::from_lookup(|k| std::env::var(k).ok())
    }

    /// Warnings for `SHMEM_*`/`SMA_*` variables in `vars`, and the project's own
    /// `RSHMEM_CAF_*`/`RSHMEM_BOOT_*` ones, that no row knows, each with the closest
    /// known name. (Other `RSHMEM_*` names are the build's and the tests', not read here.)
    pub fn unknown_vars<'a>(vars: impl Iterator<Item = &'a str>) -> Vec<String> {
        let mut out = Vec::new();
        for var in vars {
            let own = ["RSHMEM_CAF_", "RSHMEM_BOOT_"]
                .iter()
                .any(|p| var.starts_with(p));
            let name = match var
                .strip_prefix("SHMEM_")
                .or_else(|| var.strip_prefix("SMA_"))
            {
                Some(n) => n,
                None if own => var,
                None => continue,
            };
            let known = ROWS.iter().any(|r| r.name == name && is_own(r.name) == own);
            if known || EXTERNAL.contains(&var) {
                continue;
            }
            let best = ROWS
                .iter()
                .filter(|r| is_own(r.name) == own)
                .map(|r| (edit_distance(name, r.name), r.name))
                .min()
                .map(|(_, n)| n)
                .unwrap_or("SYMMETRIC_SIZE");
            out.push(format!(
                "unknown environment variable {var} ignored (did you mean {}?)",
                shown(best)
            ));
        }
        out
    }
}

/// Names under the checked prefixes that are not configuration: other software's
/// `SHMEM_*` names, and the marker a PE leaves for the programs it starts
/// (`rshmem_boot::detect::PE_MARKER_VAR`: written and read by the library, never by users).
const EXTERNAL: &[&str] = &["RSHMEM_BOOT_PE"];

/// Levenshtein distance, for "did you mean" suggestions.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn wait_times_parse() {
        use std::time::Duration;
        assert_eq!(WaitTime::parse("auto"), Ok(None));
        assert_eq!(WaitTime::parse("7"), Ok(Some(Duration::from_micros(7))));
        assert_eq!(WaitTime::parse("2ms"), Ok(Some(Duration::from_millis(2))));
        assert_eq!(
            WaitTime::parse("1.5us"),
            Ok(Some(Duration::from_nanos(1500)))
        );
        assert_eq!(WaitTime::parse("0"), Ok(Some(Duration::ZERO)));
        assert!(WaitTime::parse("fast").is_err());
        assert!(WaitTime::parse("-1").is_err());
        assert!(WaitTime::parse("2h").is_err());
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("1024").unwrap(), 1024);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("512M").unwrap(), 512 << 20);
        assert_eq!(parse_size("2G").unwrap(), 2 << 30);
        assert_eq!(parse_size("1T").unwrap(), 1 << 40);
        assert_eq!(parse_size("1.5G").unwrap(), 3 << 29);
        assert!(parse_size("lots").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("-1M").is_err());
        // Near 2^64: a clear error, never a wrapped size.
        assert!(parse_size("18446744073709551616").is_err());
        for big in [
            "18446744072635809792",
            "18446744073709551615",
            "65P",
            "16777216T",
            "65537T",
        ] {
            let e = HeapSize::parse(big).unwrap_err();
            assert!(
                e.contains("larger than 64P")
                    || e.contains("not a size")
                    || e.contains("too large"),
                "{e}"
            );
        }
        assert_eq!(HeapSize::parse("64T"), Ok(64 << 40));
        assert_eq!(show_size(1 << 30), "1G");
        assert_eq!(show_size(3 << 29), "1.50G");
    }

    #[test]
    fn defaults_parse_and_rows_have_help() {
        let c = Config::from_lookup(|_| None).unwrap();
        assert_eq!(c.symmetric_size, 1 << 30);
        assert!(!c.debug);
        assert!(c.provided.is_empty());
        for r in ROWS {
            assert!(!r.help.is_empty(), "{} has no help", r.name);
        }
    }

    #[test]
    fn env_overrides_and_sma_synonym() {
        let env: HashMap<&str, &str> =
            [("SMA_SYMMETRIC_SIZE", "64M"), ("SHMEM_DEBUG", "yes")].into();
        let c = Config::from_lookup(|k| env.get(k).map(|v| v.to_string())).unwrap();
        assert_eq!(c.symmetric_size, 64 << 20);
        assert!(c.debug);
        assert!(c.describe().contains("SHMEM_SYMMETRIC_SIZE"));
    }

    #[test]
    fn bad_value_names_the_variable() {
        let e = Config::from_lookup(|k| (k == "SHMEM_SYMMETRIC_SIZE").then(|| "big".into()))
            .unwrap_err();
        assert_eq!(e.var, "SHMEM_SYMMETRIC_SIZE");
        assert!(e.to_string().contains("SHMEM_SYMMETRIC_SIZE=\"big\""));
    }

    #[test]
    fn bounded_counts_name_their_bound() {
        let with = |k: &'static str, v: &'static str| {
            Config::from_lookup(move |q| (q == k).then(|| v.into()))
        };
        let e = with("SHMEM_TEAMS_MAX", "0").unwrap_err();
        assert_eq!(e.var, "SHMEM_TEAMS_MAX");
        assert!(e.reason.contains("at least 6"), "{e}");
        assert!(with("SHMEM_TEAMS_MAX", "5").is_err());
        assert_eq!(with("SHMEM_TEAMS_MAX", "6").unwrap().teams_max, 6);
        assert!(with("SHMEM_TEAMS_MAX", "65537").is_err());
        let e = with("SHMEM_COPY_ENGINE_LANES", "100000").unwrap_err();
        assert_eq!(e.var, "SHMEM_COPY_ENGINE_LANES");
        assert!(e.reason.contains("at most 256"), "{e}");
        assert_eq!(
            with("SHMEM_COPY_ENGINE_LANES", "0")
                .unwrap()
                .copy_engine_lanes,
            0
        );
    }

    #[test]
    fn own_names_are_read_as_written_and_checked() {
        let with = |k: &'static str, v: &'static str| {
            Config::from_lookup(move |q| (q == k).then(|| v.into()))
        };
        let c = with("RSHMEM_CAF_COMPONENT_HEAP", "1T").unwrap();
        assert_eq!(c.caf_component_heap, Some(1 << 40));
        assert_eq!(c.provided, ["RSHMEM_CAF_COMPONENT_HEAP"]);
        assert!(with("SHMEM_RSHMEM_CAF_COMPONENT_HEAP", "1T")
            .unwrap()
            .provided
            .is_empty());
        let e = with("RSHMEM_BOOT_WARN_SECS", "abc").unwrap_err();
        assert_eq!(e.var, "RSHMEM_BOOT_WARN_SECS");
        assert_eq!(
            with("RSHMEM_BOOT_WARN_SECS", "0").unwrap().boot_warn_secs,
            None
        );
        assert!(with("RSHMEM_CAF_LOCK", "ticket").is_err());
        assert!(with("SHMEM_PROFILE", "5").is_err());
        assert_eq!(with("SHMEM_PROFILE", "2").unwrap().profile, 2);
        let d = Config::from_lookup(|_| None).unwrap().describe();
        assert!(d.contains("    RSHMEM_CAF_LOCK "), "{d}");
        assert!(d.contains("    SHMEM_SYMMETRIC_SIZE "), "{d}");
        let w = Config::unknown_vars(
            [
                "RSHMEM_CAF_COMPONENT_HEAPS",
                "RSHMEM_BLESS",
                "RSHMEM_CAF_LOCK",
            ]
            .into_iter(),
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("did you mean RSHMEM_CAF_COMPONENT_HEAP?"),
            "{w:?}"
        );
    }

    #[test]
    fn unknown_names_get_a_suggestion() {
        let w = Config::unknown_vars(["SHMEM_SYMETRIC_SIZE", "SHMEM_DEBUG", "PATH"].into_iter());
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("did you mean SHMEM_SYMMETRIC_SIZE"),
            "{}",
            w[0]
        );
        // The marker a PE leaves for the programs it starts is no misspelt setting.
        assert!(Config::unknown_vars(["RSHMEM_BOOT_PE"].into_iter()).is_empty());
    }

    #[test]
    fn launcher_rows_are_read_as_written() {
        assert_eq!(spellings("OSHRUN_JOB_CPUS"), ["OSHRUN_JOB_CPUS"]);
        assert_eq!(spellings("BIND_TO"), ["SHMEM_BIND_TO", "SMA_BIND_TO"]);
        let c = Config::from_lookup(|k| (k == "OSHRUN_JOB_CPUS").then(|| "6".into())).unwrap();
        assert_eq!(
            (c.job_cpus, c.provided.as_slice()),
            (6, &["OSHRUN_JOB_CPUS"][..])
        );
    }

    #[test]
    #[should_panic(expected = "not a row")]
    fn env_value_reads_only_rows() {
        env_value("NO_SUCH_ROW");
    }
}
