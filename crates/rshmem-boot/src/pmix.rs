//! A PMIx client (Open MPI's `mpirun`, Slurm's `srun --mpi=pmix`, PRRTE's `prterun`) over the
//! OpenPMIx library `libpmix.so.2`, loaded at run time so that building rshmem needs no
//! PMIx. The few declarations below are written by hand from OpenPMIx 4.2's `pmix.h` and
//! `pmix_common.h` (sizes and offsets checked with a C program against Debian's headers:
//! `pmix_proc_t` 260 bytes, rank at 256; `pmix_value_t` 32, data at 8; `pmix_info_t` 552,
//! flags at 512, value at 520). They are stable across PMIx 3, 4 and 5.
//!
//! Wire-up cost: every PE puts its values once, one fence collects all of them into each
//! node's PMIx server (and from there into each client's local store), and every `get`
//! afterwards is answered from that store without a message (`PMIX_OPTIONAL`).
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use crate::{BootError, Bootstrap};

/// The library loaded, by its soname (Debian/Ubuntu `libpmix2`, RHEL `pmix`), unless
/// [`LIBRARY_VAR`] names another.
const LIBRARY: &str = "libpmix.so.2";

/// The row of `rshmem_util`'s environment table (`SHMEM_PMIX_LIBRARY`) naming the PMIx
/// library to load instead of [`LIBRARY`].
const LIBRARY_VAR: &str = "PMIX_LIBRARY";

fn library() -> String {
    rshmem_util::config::env_value(LIBRARY_VAR)
        .map(|(_, v)| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| LIBRARY.to_owned())
}

const NSLEN: usize = 256;
const KEYLEN: usize = 512;

/// `pmix_proc_t`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Proc {
    nspace: [c_char; NSLEN],
    rank: u32,
}

/// `pmix_value_t`: a type tag and a 24-byte union (the largest members are `struct timeval`,
/// `pmix_byte_object_t` and `pmix_envar_t`).
#[repr(C)]
struct Value {
    kind: u16,
    data: [u64; 3],
}

/// `pmix_info_t`.
#[repr(C)]
struct Info {
    key: [c_char; KEYLEN],
    flags: u32,
    value: Value,
}

const _: () = assert!(std::mem::size_of::<Proc>() == 260);
const _: () = assert!(std::mem::size_of::<Value>() == 32);
const _: () = assert!(std::mem::size_of::<Info>() == 552);
const _: () = assert!(std::mem::offset_of!(Info, value) == 520);

// Data types (pmix_data_type_t) and scopes used here.
const T_BOOL: u16 = 1;
const T_STRING: u16 = 3;
const T_SIZE: u16 = 4;
const T_INT: u16 = 6;
const T_INT32: u16 = 9;
const T_UINT16: u16 = 13;
const T_UINT32: u16 = 14;
const T_UINT64: u16 = 15;
const T_PROC_RANK: u16 = 40;
const SCOPE_GLOBAL: u8 = 3;
const RANK_WILDCARD: u32 = u32::MAX - 1;

type Status = c_int;

/// The entry points used, resolved once.
struct Api {
    init: unsafe extern "C" fn(*mut Proc, *mut Info, usize) -> Status,
    finalize: unsafe extern "C" fn(*const Info, usize) -> Status,
    abort: unsafe extern "C" fn(c_int, *const c_char, *mut Proc, usize) -> Status,
    put: unsafe extern "C" fn(u8, *const c_char, *mut Value) -> Status,
    commit: unsafe extern "C" fn() -> Status,
    fence: unsafe extern "C" fn(*const Proc, usize, *const Info, usize) -> Status,
    get: unsafe extern "C" fn(
        *const Proc,
        *const c_char,
        *const Info,
        usize,
        *mut *mut Value,
    ) -> Status,
    value_destruct: unsafe extern "C" fn(*mut Value),
    error_string: unsafe extern "C" fn(Status) -> *const c_char,
}

/// Loads the library once per process; it stays loaded (its threads run until exit).
fn api() -> Result<&'static Api, String> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(|| {
        // SAFETY: loading OpenPMIx runs only its ELF constructors, which set up no state
        // that conflicts with ours.
        let lib = unsafe { libloading::Library::new(library()) }.map_err(|e| e.to_string())?;
        let lib: &'static libloading::Library = Box::leak(Box::new(lib));
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the field's type is the function's C signature in pmix.h 4.2
                // (unchanged since PMIx 3); the library is never unloaded.
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| format!("{}: {e}", $name))?
            };
        }
        Ok(Api {
            init: sym!("PMIx_Init"),
            finalize: sym!("PMIx_Finalize"),
            abort: sym!("PMIx_Abort"),
            put: sym!("PMIx_Put"),
            commit: sym!("PMIx_Commit"),
            fence: sym!("PMIx_Fence"),
            get: sym!("PMIx_Get"),
            value_destruct: sym!("PMIx_Value_destruct"),
            error_string: sym!("PMIx_Error_string"),
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}

impl Api {
    fn error(&self, call: &'static str, status: Status) -> BootError {
        // SAFETY: PMIx_Error_string returns a static NUL-terminated string for any status.
        let text = unsafe { CStr::from_ptr((self.error_string)(status)) }
            .to_string_lossy()
            .into_owned();
        BootError::Pmix { call, status, text }
    }

    fn check(&self, call: &'static str, status: Status) -> Result<(), BootError> {
        if status == 0 {
            Ok(())
        } else {
            Err(self.error(call, status))
        }
    }
}

fn bool_info(key: &str, on: bool) -> Info {
    let mut info = Info {
        key: [0; KEYLEN],
        flags: 0,
        value: Value {
            kind: T_BOOL,
            data: [u64::from(on), 0, 0],
        },
    };
    for (d, s) in info.key.iter_mut().zip(key.bytes()) {
        *d = s as c_char;
    }
    info
}

/// What a `PMIx_Get` returned, copied out of the library's value.
enum Got {
    Text(String),
    Number(u64),
    Other(u16),
}

/// A PE's connection to its PMIx server.
pub struct PmixClient {
    api: &'static Api,
    me: Proc,
    rank: usize,
    size: usize,
    job_id: String,
    nodes: Option<Vec<usize>>,
    finalized: AtomicBool,
}

impl std::fmt::Debug for PmixClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PmixClient")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("job_id", &self.job_id)
            .finish()
    }
}

/// Our keys live under this prefix, apart from PMIx's reserved `pmix.` ones.
fn pmix_key(key: &str) -> Result<CString, BootError> {
    crate::check_key(key)?;
    Ok(CString::new(format!("rshmem.{key}")).expect("checked key has no NUL"))
}

impl PmixClient {
    /// Loads `libpmix.so.2` and connects to the server the environment names
    /// (`PMIX_NAMESPACE`, `PMIX_RANK`, `PMIX_SERVER_URI*`). `launcher` names who started
    /// this process, for the messages.
    pub fn connect(launcher: &str) -> Result<Self, BootError> {
        let api = api().map_err(|e| BootError::Unjoinable {
            launcher: launcher.to_owned(),
            reason: format!("the PMIx client library cannot be loaded ({e})"),
            fix: "install it (Debian/Ubuntu: apt-get install libpmix2; RHEL: dnf install \
                  pmix), or launch with oshrun, mpiexec.hydra or srun --mpi=pmi2"
                .into(),
        })?;
        let mut me = Proc {
            nspace: [0; NSLEN],
            rank: 0,
        };
        // SAFETY: `me` is a valid pmix_proc_t the call fills in; no info array.
        let st = unsafe { (api.init)(&mut me, std::ptr::null_mut(), 0) };
        if st != 0 {
            let e = api.error("PMIx_Init", st);
            return Err(BootError::Unjoinable {
                launcher: launcher.to_owned(),
                reason: e.to_string(),
                fix: "the PMIx server named by PMIX_SERVER_URI* is not reachable; start the \
                      program with the launcher itself (a process it did not start cannot \
                      join its job)"
                    .into(),
            });
        }
        let rank = me.rank as usize;
        let mut client = PmixClient {
            api,
            me,
            rank,
            size: 0,
            job_id: String::new(),
            nodes: None,
            finalized: AtomicBool::new(false),
        };
        // SAFETY: PMIx_Init wrote a NUL-terminated namespace into the array.
        let ns = unsafe { CStr::from_ptr(me.nspace.as_ptr()) }.to_string_lossy();
        // The job id names /dev/shm files: keep it to file-name characters.
        client.job_id = ns
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let size = match client.get_raw(RANK_WILDCARD, c"pmix.job.size", false)? {
            Got::Number(n) if n > 0 => n as usize,
            _ => {
                return Err(BootError::Protocol {
                    cmd: "PMIx_Get(pmix.job.size)",
                    reply: String::new(),
                    reason: "the server gave no job size".into(),
                })
            }
        };
        client.size = size;
        client.nodes = client.node_map();
        Ok(client)
    }

    fn proc_of(&self, rank: u32) -> Proc {
        Proc { rank, ..self.me }
    }

    /// `PMIx_Get` of `key` for `rank`; `local` asks the client's store only (never the
    /// server). A missing key is `NotFound`.
    fn get_raw(&self, rank: u32, key: &CStr, local: bool) -> Result<Got, BootError> {
        let p = self.proc_of(rank);
        let info = bool_info("pmix.optional", true);
        let (ip, n) = if local {
            (&info as *const Info, 1)
        } else {
            (std::ptr::null(), 0)
        };
        let mut v: *mut Value = std::ptr::null_mut();
        // SAFETY: `p` and `key` outlive the call, `ip` points at `n` infos, and `v`
        // receives a value the library allocated (or stays null on error).
        let st = unsafe { (self.api.get)(&p, key.as_ptr(), ip, n, &mut v) };
        if st != 0 || v.is_null() {
            return Err(match st {
                // PMIX_ERR_NOT_FOUND
                -46 => BootError::NotFound {
                    rank: rank as usize,
                    key: key.to_string_lossy().into_owned(),
                    msg: "not found".into(),
                },
                st => self.api.error("PMIx_Get", st),
            });
        }
        // SAFETY: `v` is a valid pmix_value_t from PMIx_Get; its union is read as the
        // member its type tag names.
        let got = unsafe {
            let d = (*v).data.as_ptr() as *const u8;
            match (*v).kind {
                T_STRING => {
                    let s = *(d as *const *const c_char);
                    if s.is_null() {
                        Got::Text(String::new())
                    } else {
                        Got::Text(CStr::from_ptr(s).to_string_lossy().into_owned())
                    }
                }
                T_UINT16 => Got::Number(u64::from(*(d as *const u16))),
                T_UINT32 | T_PROC_RANK => Got::Number(u64::from(*(d as *const u32))),
                T_UINT64 | T_SIZE => Got::Number(*(d as *const u64)),
                T_INT | T_INT32 => Got::Number(*(d as *const i32) as u64),
                k => Got::Other(k),
            }
        };
        // SAFETY: PMIX_VALUE_RELEASE: destruct the contents, then free the malloc'd value.
        unsafe {
            (self.api.value_destruct)(v);
            libc::free(v as *mut c_void);
        }
        Ok(got)
    }

    /// The node of every rank: `pmix.nodeid` per rank, else `pmix.hname` numbered in order
    /// of appearance; `None` if the server gives neither. Job data the server registered
    /// with the client at start-up, so these gets stay in this process.
    fn node_map(&self) -> Option<Vec<usize>> {
        let by_id: Option<Vec<usize>> = (0..self.size as u32)
            .map(|r| match self.get_raw(r, c"pmix.nodeid", true) {
                Ok(Got::Number(n)) => Some(n as usize),
                _ => None,
            })
            .collect();
        if by_id.is_some() {
            return by_id;
        }
        let mut names: Vec<String> = Vec::new();
        (0..self.size as u32)
            .map(|r| match self.get_raw(r, c"pmix.hname", true) {
                Ok(Got::Text(h)) => Some(match names.iter().position(|n| *n == h) {
                    Some(i) => i,
                    None => {
                        names.push(h);
                        names.len() - 1
                    }
                }),
                _ => None,
            })
            .collect()
    }

    fn not_finalized(&self, cmd: &'static str) -> Result<(), BootError> {
        if self.finalized.load(Ordering::Acquire) {
            Err(BootError::Finalized { cmd })
        } else {
            Ok(())
        }
    }

    fn fence_with(&self, collect: bool) -> Result<(), BootError> {
        let info = bool_info("pmix.collect", true);
        let (ip, n) = if collect {
            (&info as *const Info, 1)
        } else {
            (std::ptr::null(), 0)
        };
        // SAFETY: no proc array means every proc of our namespace; `ip` points at `n` infos.
        let st = unsafe { (self.api.fence)(std::ptr::null(), 0, ip, n) };
        self.api.check("PMIx_Fence", st)
    }
}

impl Bootstrap for PmixClient {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn job_id(&self) -> &str {
        &self.job_id
    }

    fn nodes(&self) -> Option<&[usize]> {
        self.nodes.as_deref()
    }

    fn put(&self, key: &str, value: &str) -> Result<(), BootError> {
        self.not_finalized("PMIx_Put")?;
        let k = pmix_key(key)?;
        crate::check_value(value, crate::MAX_VALUE_LEN)?;
        let s = CString::new(value).expect("checked value has no NUL");
        let mut v = Value {
            kind: T_STRING,
            data: [s.as_ptr() as u64, 0, 0],
        };
        // SAFETY: `v` holds a string the call copies (PMIx_Put takes no ownership); `k`
        // and `s` outlive the call.
        let st = unsafe { (self.api.put)(SCOPE_GLOBAL, k.as_ptr(), &mut v) };
        self.api.check("PMIx_Put", st)
    }

    fn fence(&self) -> Result<(), BootError> {
        self.not_finalized("PMIx_Fence")?;
        // SAFETY: no arguments; sends this process's puts to its server.
        let st = unsafe { (self.api.commit)() };
        self.api.check("PMIx_Commit", st)?;
        self.fence_with(true)
    }

    fn get(&self, rank: usize, key: &str) -> Result<String, BootError> {
        self.not_finalized("PMIx_Get")?;
        crate::check_rank(rank, self.size)?;
        let k = pmix_key(key)?;
        match self.get_raw(rank as u32, &k, true) {
            Ok(Got::Text(s)) => Ok(s),
            Ok(Got::Number(n)) => Ok(n.to_string()),
            Ok(Got::Other(t)) => Err(BootError::Protocol {
                cmd: "PMIx_Get",
                reply: format!("type {t}"),
                reason: format!("rank {rank}'s {key:?} is not a string"),
            }),
            Err(BootError::NotFound { msg, .. }) => Err(BootError::NotFound {
                rank,
                key: key.to_owned(),
                msg,
            }),
            Err(e) => Err(e),
        }
    }

    fn barrier(&self) -> Result<(), BootError> {
        self.not_finalized("PMIx_Fence")?;
        self.fence_with(false)
    }

    fn abort(&self, code: i32, msg: &str) -> ! {
        let status = crate::exit_status(code);
        // Neither mpirun nor srun is sure to print the message: the PE does.
        crate::print_abort_msg(msg);
        let text = CString::new(msg.replace('\0', " ")).unwrap_or_default();
        // SAFETY: no proc array means the whole namespace; `text` outlives the call. The
        // server kills the job; if it is gone, exiting is all that is left.
        unsafe { (self.api.abort)(status, text.as_ptr(), std::ptr::null_mut(), 0) };
        std::process::exit(status)
    }

    fn finalize(&self) -> Result<(), BootError> {
        if self.finalized.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        // SAFETY: no info array; called once.
        let st = unsafe { (self.api.finalize)(std::ptr::null(), 0) };
        self.api.check("PMIx_Finalize", st)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_prefixed_and_checked() {
        assert_eq!(pmix_key("seg").unwrap().to_str().unwrap(), "rshmem.seg");
        assert!(pmix_key("a b").is_err());
        let i = bool_info("pmix.collect", true);
        assert_eq!(
            i.key[..12].iter().map(|&c| c as u8).collect::<Vec<_>>(),
            b"pmix.collect"
        );
        assert_eq!((i.value.kind, i.value.data[0]), (T_BOOL, 1));
    }
}
