//! The opened provider: fabric, domain, the shared address vector, memory registration and
//! the atomic support table.

use crate::bindings as sys;
use crate::endpoint::EpInner;
use crate::library::Lib;
use crate::{AtomicKind, AtomicOp, AtomicType, OfiError, Result};
use std::ffi::{c_int, CStr, CString};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The library [`Ofi::open`] loads.
pub const DEFAULT_LIBRARY: &str = "libfabric.so.1";

/// The newest libfabric API this crate asks for (older libraries are asked for their own,
/// down to 1.5, the first with today's memory-registration modes).
pub const API_VERSION: (u32, u32) = (1, 17);

/// Receive queue depth asked of the provider: enough for one-sided traffic, where an
/// operation refused for a full queue is retried after progress (`tcp;ofi_rxm`'s default
/// of 2048 gave the posted atomics nothing more and each PE 2 MB more memory).
///
/// The transmit depth is the provider's default (`tcp;ofi_rxm`: 2048, or
/// `FI_OFI_RXM_TX_SIZE`), as Sandia OpenSHMEM leaves it: posted atomics and small puts
/// hold a slot until the target acknowledges them, so a burst deeper than the queue is
/// paced by the target's round trips. With 256, the OSU posted adds at 4 PEs over
/// `tcp;ofi_rxm` took 8.4-11.5 us each (3 jobs of 3), with 2048 1.5-6.1 us in 3 jobs of 5,
/// and the 8 B put message rate rose from 0.19-0.32 to 0.59-0.66 M/s. A fixed 2048 would exclude
/// `sockets`, whose limit is lower.
const RX_DEPTH: usize = 256;

/// What the crate needs of a provider (named in errors).
const NEEDS: &str = "reliable datagram endpoints (FI_EP_RDM) with RMA and atomics \
                     (FI_RMA | FI_ATOMIC), thread-safe domains and no mode bits";

/// Options for [`Ofi::open_with`].
#[derive(Debug, Clone)]
pub struct OpenOptions<'a> {
    /// The library to `dlopen` (default [`DEFAULT_LIBRARY`]).
    pub library: &'a str,
    /// The provider to use, as `fi_info` names it (`"tcp;ofi_rxm"`, `"sockets"`, `"cxi"`);
    /// `None`: the first that fits, among those `FI_PROVIDER` allows.
    pub provider: Option<&'a str>,
    /// The domain (NIC) to use, e.g. `"lo"`; `None`: the provider's first.
    pub domain: Option<&'a str>,
}

impl Default for OpenOptions<'_> {
    fn default() -> Self {
        OpenOptions {
            library: DEFAULT_LIBRARY,
            provider: None,
            domain: None,
        }
    }
}

/// The loaded libfabric with one provider opened: its fabric, a thread-safe domain
/// (`FI_THREAD_SAFE`) and one address vector shared by every endpoint. Closed when the last
/// endpoint, region and handle are gone.
pub struct Ofi {
    pub(crate) lib: Lib,
    info: *mut sys::fi_info,
    fabric: *mut sys::fid_fabric,
    pub(crate) domain: *mut sys::fid_domain,
    pub(crate) av: *mut sys::fid_av,
    provider: String,
    fabric_name: String,
    domain_name: String,
    api: (u32, u32),
    mr_mode: c_int,
    pub(crate) manual_progress: bool,
    pub(crate) ordered_writes: bool,
    /// Messages (`FI_MSG`) granted, delivered in send order (`FI_ORDER_SAS`).
    ordered_messages: bool,
    pub(crate) inject_size: usize,
    delivery_complete: bool,
    /// Writes complete once sent and quiet reads back from each peer written
    /// ([`Ofi::flushes_by_read`]).
    pub(crate) flush_by_read: bool,
    /// Writes carry 8 bytes to the target's completion queue (`cq_data_size`).
    data_with_writes: bool,
    next_key: AtomicU64,
    /// Per form (`AtomicKind as usize`), bit `support_bit(ty, op)` set: supported.
    atomics: [u64; 3],
}

// SAFETY: the domain is opened FI_THREAD_SAFE, so libfabric serialises concurrent calls on it
// and on everything opened from it; the info is only read after opening; the library table is
// immutable function pointers.
unsafe impl Send for Ofi {}
// SAFETY: as for Send.
unsafe impl Sync for Ofi {}

impl fmt::Debug for Ofi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ofi")
            .field("provider", &self.provider)
            .field("fabric", &self.fabric_name)
            .field("domain", &self.domain_name)
            .finish()
    }
}

fn c_str(p: *const std::ffi::c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: a non-null NUL-terminated string of a fi_info libfabric filled in.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// `strdup`, for strings put in a `fi_info` that `fi_freeinfo` frees.
fn dup(routine: &'static str, what: &str, s: &str) -> Result<*mut std::ffi::c_char> {
    let c = CString::new(s).map_err(|_| OfiError::InvalidArgument {
        routine,
        message: format!("{what} {s:?} contains a NUL byte"),
    })?;
    // SAFETY: c is a C string; the copy is freed by fi_freeinfo.
    Ok(unsafe { libc::strdup(c.as_ptr()) })
}

impl Ofi {
    /// Opens `libfabric.so.1` and the first provider that fits (respecting `FI_PROVIDER`).
    pub fn open() -> Result<Arc<Ofi>> {
        Self::open_with(&OpenOptions::default())
    }

    /// As [`Ofi::open`], with options.
    pub fn open_with(opts: &OpenOptions<'_>) -> Result<Arc<Ofi>> {
        let lib = Lib::open(opts.library)?;
        let lib_api = lib.version();
        let api = lib_api.min(API_VERSION).max((1, 5));
        // Ask for delivery completion (a completed write is visible at its target, what
        // quiet needs); providers without it complete at transmission, and
        // `delivery_complete` says so.
        // Messages too (`FI_MSG`, for [`crate::Endpoint::send_message`]) where the provider
        // has them with the rest.
        let mut last = None;
        for (delivery, messages) in [(true, true), (true, false), (false, true), (false, false)] {
            match Self::getinfo(&lib, api, opts, delivery, messages) {
                Ok(info) => return Self::open_info(lib, api, info, delivery),
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("tried at least once"))
    }

    fn getinfo(
        lib: &Lib,
        api: (u32, u32),
        opts: &OpenOptions<'_>,
        delivery: bool,
        messages: bool,
    ) -> Result<*mut sys::fi_info> {
        const R: &str = "Ofi::open";
        // SAFETY: fi_dupinfo(NULL) is fi_allocinfo: a zeroed fi_info with every attribute
        // struct allocated, freed below with fi_freeinfo.
        let hints = unsafe { (lib.dupinfo)(std::ptr::null()) };
        if hints.is_null() {
            return Err(OfiError::InvalidArgument {
                routine: R,
                message: "fi_allocinfo returned NULL (out of memory)".into(),
            });
        }
        let mut info: *mut sys::fi_info = std::ptr::null_mut();
        let res = (|| {
            // SAFETY: hints and its attribute structs were allocated by fi_allocinfo; the
            // strings are strdup'ed, as fi_freeinfo frees them.
            unsafe {
                let h = &mut *hints;
                h.caps = sys::FI_RMA
                    | sys::FI_ATOMIC
                    | sys::FI_READ
                    | sys::FI_WRITE
                    | sys::FI_REMOTE_READ
                    | sys::FI_REMOTE_WRITE;
                if messages {
                    h.caps |= sys::FI_MSG | sys::FI_SEND | sys::FI_RECV;
                }
                h.mode = 0;
                (*h.ep_attr).type_ = sys::FI_EP_RDM;
                let d = &mut *h.domain_attr;
                d.threading = sys::FI_THREAD_SAFE;
                d.mr_mode = sys::FI_MR_VIRT_ADDR
                    | sys::FI_MR_ALLOCATED
                    | sys::FI_MR_PROV_KEY
                    | sys::FI_MR_ENDPOINT;
                if delivery {
                    (*h.tx_attr).op_flags = sys::FI_DELIVERY_COMPLETE;
                }
                (*h.rx_attr).size = RX_DEPTH;
                if let Some(p) = opts.provider {
                    (*h.fabric_attr).prov_name = dup(R, "provider", p)?;
                }
                if let Some(n) = opts.domain {
                    d.name = dup(R, "domain", n)?;
                }
                let ret = (lib.getinfo)(
                    sys::fi_version(api.0, api.1),
                    std::ptr::null(),
                    std::ptr::null(),
                    0,
                    hints,
                    &mut info,
                );
                if ret == -sys::FI_ENODATA || (ret == 0 && info.is_null()) {
                    let wanted = match (opts.provider, std::env::var("FI_PROVIDER")) {
                        (Some(p), _) => format!("{p:?}"),
                        (None, Ok(env)) => format!("{env:?} (FI_PROVIDER)"),
                        (None, Err(_)) => "(any)".to_string(),
                    };
                    return Err(OfiError::NoProvider {
                        wanted: match opts.domain {
                            Some(d) => format!("{wanted} on domain {d:?}"),
                            None => wanted,
                        },
                        needs: NEEDS,
                    });
                }
                lib.check("fi_getinfo", ret)
            }
        })();
        // SAFETY: allocated by fi_dupinfo above, freed once.
        unsafe { (lib.freeinfo)(hints) };
        res.map(|()| info)
    }

    fn open_info(
        lib: Lib,
        api: (u32, u32),
        info: *mut sys::fi_info,
        delivery_complete: bool,
    ) -> Result<Arc<Ofi>> {
        // SAFETY: `info` is the non-empty list fi_getinfo returned; its attribute structs
        // are filled in.
        let (provider, fabric_name, domain_name, mr_mode, manual, msg_order, inject, caps, cq_data) = unsafe {
            let i = &*info;
            let d = &*i.domain_attr;
            let f = &*i.fabric_attr;
            (
                c_str(f.prov_name),
                c_str(f.name),
                c_str(d.name),
                d.mr_mode,
                d.data_progress == sys::FI_PROGRESS_MANUAL,
                (*i.tx_attr).msg_order,
                (*i.tx_attr).inject_size,
                i.caps,
                d.cq_data_size,
            )
        };
        let sockets = provider == "sockets";
        let mut ofi = Ofi {
            lib,
            info,
            fabric: std::ptr::null_mut(),
            domain: std::ptr::null_mut(),
            av: std::ptr::null_mut(),
            provider,
            fabric_name,
            domain_name,
            api,
            mr_mode,
            manual_progress: manual,
            ordered_writes: msg_order & sys::FI_ORDER_WAW != 0,
            ordered_messages: caps & sys::FI_MSG != 0 && msg_order & sys::FI_ORDER_SAS != 0,
            inject_size: inject,
            delivery_complete,
            // A read issued after writes to a peer is served after them, and the provider's
            // delivery completion of a write costs a message from its target.
            flush_by_read: delivery_complete
                && msg_order & (sys::FI_ORDER_RAW | sys::FI_ORDER_RMA_RAW) != 0,
            // sockets (libfabric 1.17) hands a write's data on the completion of the next
            // message received, without FI_REMOTE_CQ_DATA, rather than in an entry of its
            // own (a unit test: tests::messages).
            data_with_writes: cq_data >= 8 && !sockets,
            next_key: AtomicU64::new(1),
            atomics: [0; 3],
        };
        // From here on, Drop closes what was opened.
        // SAFETY: the fabric attributes of the chosen info; `fabric` is an out pointer.
        ofi.lib.check("fi_fabric", unsafe {
            (ofi.lib.fabric)((*info).fabric_attr, &mut ofi.fabric, std::ptr::null_mut())
        })?;
        // SAFETY: fi_domain: the fabric's ops table call with the chosen info.
        ofi.lib.check("fi_domain", unsafe {
            ((*(*ofi.fabric).ops).domain)(ofi.fabric, info, &mut ofi.domain, std::ptr::null_mut())
        })?;
        // SAFETY: info is valid; reading the domain attributes.
        let av_type = match unsafe { (*(*info).domain_attr).av_type } {
            sys::FI_AV_UNSPEC => sys::FI_AV_TABLE,
            t => t,
        };
        let mut attr = sys::fi_av_attr {
            type_: av_type,
            rx_ctx_bits: 0,
            count: 0,
            ep_per_node: 0,
            name: std::ptr::null(),
            map_addr: std::ptr::null_mut(),
            flags: 0,
        };
        // SAFETY: fi_av_open: the domain's ops table call; attr is complete; av out pointer.
        ofi.lib.check("fi_av_open", unsafe {
            ((*(*ofi.domain).ops).av_open)(ofi.domain, &mut attr, &mut ofi.av, std::ptr::null_mut())
        })?;
        ofi.atomics = ofi.query_atomics();
        Ok(Arc::new(ofi))
    }

    fn query_atomics(&self) -> [u64; 3] {
        let mut bits = [0u64; 3];
        // SAFETY: the domain's ops table; the size check is FI_CHECK_OP's.
        let query = unsafe {
            let ops = &*(*self.domain).ops;
            let end = std::mem::offset_of!(sys::fi_ops_domain, query_atomic);
            if ops.size > end {
                ops.query_atomic
            } else {
                None
            }
        };
        let Some(query) = query else { return bits };
        for kind in AtomicKind::ALL {
            for ty in AtomicType::ALL {
                for op in AtomicOp::ALL {
                    if !kind.allows(op) {
                        continue;
                    }
                    let mut attr = sys::fi_atomic_attr { count: 0, size: 0 };
                    // SAFETY: fi_query_atomic on the live domain; attr is an out struct.
                    let ret =
                        unsafe { query(self.domain, ty.fi(), op.fi(), &mut attr, kind.flags()) };
                    if ret == 0 && attr.count >= 1 && attr.size == ty.size() {
                        bits[kind as usize] |= 1 << support_bit(ty, op);
                    }
                }
            }
        }
        bits
    }

    /// The provider's name (e.g. `"tcp;ofi_rxm"`).
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// The fabric's name (e.g. `"127.0.0.1/32"`).
    pub fn fabric_name(&self) -> &str {
        &self.fabric_name
    }

    /// The domain's name (e.g. `"lo"`).
    pub fn domain_name(&self) -> &str {
        &self.domain_name
    }

    /// The libfabric API version asked for (the library's own, at most [`API_VERSION`]).
    pub fn api_version(&self) -> (u32, u32) {
        self.api
    }

    /// The loaded library's API version.
    pub fn library_version(&self) -> (u32, u32) {
        self.lib.version()
    }

    /// Whether the provider needs the application to drive data transfers (tcp, sockets'
    /// `manual` mode): then a peer's operations on this process's memory progress only while
    /// some thread calls into its endpoint (see [`crate::ProgressThread`]).
    pub fn manual_progress(&self) -> bool {
        self.manual_progress
    }

    /// Whether writes and atomics to a peer are delivered in issue order (`FI_ORDER_WAW`):
    /// then [`crate::Endpoint::fence`] costs nothing; otherwise it waits for earlier writes.
    pub fn ordered_writes(&self) -> bool {
        self.ordered_writes
    }

    /// Whether endpoints can send and receive messages ([`crate::Endpoint::send_message`],
    /// [`crate::Endpoint::receive_messages`]), delivered in the order one endpoint sent them
    /// (`FI_MSG` with `FI_ORDER_SAS`).
    pub fn ordered_messages(&self) -> bool {
        self.ordered_messages
    }

    /// Whether completions mean delivery at the target (`FI_DELIVERY_COMPLETE`), which
    /// [`crate::Endpoint::quiet`] needs to make writes visible there.
    pub fn delivery_complete(&self) -> bool {
        self.delivery_complete
    }

    /// Whether puts complete once sent, and [`crate::Endpoint::quiet`] (and a fence where
    /// writes are not ordered) then reads a byte back from each peer written since: the
    /// provider serves a read after the writes issued before it to the same peer
    /// (`FI_ORDER_RMA_RAW`), so the read's completion says they were delivered. Over
    /// `tcp;ofi_rxm` a write's delivery completion is an acknowledgement from its target,
    /// one message per put; this way a quiet after any number of puts to a peer costs one
    /// round trip. Fetching atomics, posted atomics and messages still complete at
    /// delivery.
    pub fn flushes_by_read(&self) -> bool {
        self.flush_by_read
    }

    /// Whether a write can carry 8 bytes to its target's completion queue
    /// ([`crate::Endpoint::put_with_data_nb`], remote CQ data), which an endpoint that
    /// receives hands to its handler once the data is in place ([`crate::Arrival::Data`]).
    pub fn writes_with_data(&self) -> bool {
        self.data_with_writes
    }

    /// The memory registration mode bits the provider asked for (`FI_MR_*`).
    pub fn mr_mode(&self) -> i32 {
        self.mr_mode
    }

    /// Whether remote addresses are virtual addresses (`FI_MR_VIRT_ADDR`) rather than offsets
    /// into a region. The operations of this crate take virtual addresses either way.
    pub fn virtual_addresses(&self) -> bool {
        self.mr_mode & sys::FI_MR_VIRT_ADDR != 0
    }

    /// Largest write sent inline (the source reusable at once).
    pub fn inject_size(&self) -> usize {
        self.inject_size
    }

    /// Whether the provider supports atomic `op` on `ty` in the form `kind`
    /// (`fi_query_atomic`).
    pub fn atomic_supported(&self, kind: AtomicKind, ty: AtomicType, op: AtomicOp) -> bool {
        kind.allows(op) && self.atomics[kind as usize] & (1 << support_bit(ty, op)) != 0
    }

    /// The atomics OpenSHMEM 1.5 needs that the provider lacks, as `"kind op type"` strings
    /// (empty: all present). Needed: on 4- and 8-byte integers (signed and unsigned) posted
    /// and fetching add, and, or, xor, set (posted write), swap (fetching write), fetch
    /// (fetching read) and compare-and-swap; on `float` and `double` set, swap and fetch.
    pub fn missing_shmem_atomics(&self) -> Vec<String> {
        use AtomicKind::{Compare, Fetch, Post};
        use AtomicOp::*;
        let mut needed = Vec::new();
        for ty in [
            AtomicType::I32,
            AtomicType::U32,
            AtomicType::I64,
            AtomicType::U64,
        ] {
            for op in [Sum, Band, Bor, Bxor] {
                needed.push((Post, ty, op));
                needed.push((Fetch, ty, op));
            }
            needed.extend([(Post, ty, Write), (Fetch, ty, Write), (Fetch, ty, Read)]);
            needed.push((Compare, ty, CompareSwap));
        }
        for ty in [AtomicType::F32, AtomicType::F64] {
            needed.extend([(Post, ty, Write), (Fetch, ty, Write), (Fetch, ty, Read)]);
        }
        needed
            .into_iter()
            .filter(|&(k, t, o)| !self.atomic_supported(k, t, o))
            .map(|(k, t, o)| format!("{k:?} {o:?} {t:?}"))
            .collect()
    }

    /// `Ok` if every atomic OpenSHMEM needs is supported ([`Ofi::missing_shmem_atomics`]),
    /// else an error naming the provider and what is missing.
    pub fn check_shmem_atomics(&self) -> Result<()> {
        let missing = self.missing_shmem_atomics();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(OfiError::Unsupported {
                routine: "Ofi::check_shmem_atomics",
                provider: self.provider.clone(),
                what: format!("the atomics {}", missing.join(", ")),
            })
        }
    }

    /// Inserts a peer endpoint's name ([`crate::Endpoint::name`]) into the address vector
    /// every endpoint of this `Ofi` shares; the address is then valid on all of them.
    pub fn insert(&self, name: &[u8]) -> Result<Addr> {
        if name.is_empty() {
            return Err(OfiError::InvalidArgument {
                routine: "Ofi::insert",
                message: "empty endpoint name".into(),
            });
        }
        let mut addr: sys::fi_addr_t = u64::MAX;
        // SAFETY: fi_av_insert on the live AV (no event queue bound: synchronous); the name
        // bytes are read during the call; addr is an out pointer for one address.
        let ret = unsafe {
            ((*(*self.av).ops).insert)(
                self.av,
                name.as_ptr().cast(),
                1,
                &mut addr,
                0,
                std::ptr::null_mut(),
            )
        };
        if ret == 1 && addr != u64::MAX {
            Ok(Addr(addr))
        } else if ret < 0 {
            Err(self.lib.error("fi_av_insert", ret as isize))
        } else {
            Err(OfiError::InvalidArgument {
                routine: "Ofi::insert",
                message: format!("the provider refused the name ({} bytes)", name.len()),
            })
        }
    }

    /// Registers `[addr, addr + len)` for remote reads, writes and atomics through any
    /// endpoint. The memory must be allocated (`FI_MR_ALLOCATED`) and stay mapped until the
    /// region is dropped. Providers whose regions belong to one endpoint (`FI_MR_ENDPOINT`:
    /// cxi) refuse this: use [`crate::Endpoint::register`] with the endpoint peers target.
    pub fn register(self: &Arc<Self>, addr: *mut u8, len: usize) -> Result<Region> {
        if self.mr_mode & sys::FI_MR_ENDPOINT != 0 {
            return Err(OfiError::Unsupported {
                routine: "Ofi::register",
                provider: self.provider.clone(),
                what: "regions of the whole domain (FI_MR_ENDPOINT): register through the \
                       endpoint that serves them (Endpoint::register)"
                    .into(),
            });
        }
        self.register_on(addr, len, None)
    }

    /// [`Ofi::register`], bound to `ep` where the provider wants it (`FI_MR_ENDPOINT`).
    pub(crate) fn register_on(
        self: &Arc<Self>,
        addr: *mut u8,
        len: usize,
        ep: Option<Arc<EpInner>>,
    ) -> Result<Region> {
        if addr.is_null() || len == 0 {
            return Err(OfiError::InvalidArgument {
                routine: "Ofi::register",
                message: format!("empty range (addr {addr:p}, len {len})"),
            });
        }
        let requested = self.next_key.fetch_add(1, Ordering::Relaxed);
        let mut mr: *mut sys::fid_mr = std::ptr::null_mut();
        let access = sys::FI_REMOTE_READ | sys::FI_REMOTE_WRITE | sys::FI_READ | sys::FI_WRITE;
        // SAFETY: fi_mr_reg through the domain's MR ops table; the caller keeps the range
        // mapped for the region's life; mr is an out pointer.
        self.lib.check("fi_mr_reg", unsafe {
            ((*(*self.domain).mr).reg)(
                &raw mut (*self.domain).fid,
                addr.cast_const().cast(),
                len,
                access,
                0,
                requested,
                0,
                &mut mr,
                std::ptr::null_mut(),
            )
        })?;
        let mut region = Region {
            _ofi: self.clone(),
            mr,
            addr: addr as u64,
            len,
            key: 0,
            _ep: None,
        };
        if let Some(ep) = ep.filter(|_| self.mr_mode & sys::FI_MR_ENDPOINT != 0) {
            // SAFETY: fi_mr_bind and fi_mr_enable through the MR's fid ops, with the live
            // endpoint, which the region keeps open until the MR is closed.
            unsafe {
                let fid = &raw mut (*mr).fid;
                self.lib
                    .check("fi_mr_bind", ((*(*fid).ops).bind)(fid, ep.fid(), 0))?;
                self.lib.check(
                    "fi_mr_enable",
                    ((*(*fid).ops).control)(fid, sys::FI_ENABLE, std::ptr::null_mut()),
                )?;
            }
            region._ep = Some(ep);
        }
        // SAFETY: fi_mr_key reads the registered (and, if bound, enabled) MR's key field.
        region.key = unsafe { (*mr).key };
        Ok(region)
    }

    /// Converts a remote virtual address into what the provider expects (the address itself,
    /// or its offset in the region), checking that `[raddr, raddr + len)` is in the region.
    pub(crate) fn target(
        &self,
        routine: &'static str,
        raddr: u64,
        len: usize,
        key: &RemoteKey,
    ) -> Result<u64> {
        let inside = raddr >= key.base
            && (raddr - key.base)
                .checked_add(len as u64)
                .is_some_and(|end| end <= key.len);
        if !inside {
            return Err(OfiError::InvalidArgument {
                routine,
                message: format!(
                    "[{raddr:#x}, +{len}) is outside the remote region [{:#x}, +{})",
                    key.base, key.len
                ),
            });
        }
        Ok(if self.virtual_addresses() {
            raddr
        } else {
            raddr - key.base
        })
    }

    pub(crate) fn info(&self) -> *mut sys::fi_info {
        self.info
    }

    pub(crate) fn fabric(&self) -> *mut sys::fid_fabric {
        self.fabric
    }
}

/// Closes a libfabric object (`fi_close`); errors at teardown are of no use.
///
/// # Safety
/// `fid` must be a live object, closed once.
pub(crate) unsafe fn close(fid: *mut sys::fid) {
    if !fid.is_null() {
        // SAFETY: the caller's contract.
        unsafe { ((*(*fid).ops).close)(fid) };
    }
}

impl Drop for Ofi {
    fn drop(&mut self) {
        // SAFETY: every endpoint and region holds an Arc<Ofi>, so none is left; each object
        // is closed once, children first; the info list is freed once.
        unsafe {
            if !self.av.is_null() {
                close(&raw mut (*self.av).fid);
            }
            if !self.domain.is_null() {
                close(&raw mut (*self.domain).fid);
            }
            if !self.fabric.is_null() {
                close(&raw mut (*self.fabric).fid);
            }
            (self.lib.freeinfo)(self.info);
        }
    }
}

fn support_bit(ty: AtomicType, op: AtomicOp) -> u32 {
    ty as u32 * AtomicOp::ALL.len() as u32 + op as u32
}

/// A peer endpoint's address in the shared address vector ([`Ofi::insert`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Addr(pub u64);

/// Memory registered with [`Ofi::register`]; unregistered on drop.
pub struct Region {
    /// Keeps the domain open while the MR lives.
    _ofi: Arc<Ofi>,
    mr: *mut sys::fid_mr,
    addr: u64,
    len: usize,
    key: u64,
    /// The endpoint the MR is bound to (`FI_MR_ENDPOINT`), closed after it.
    _ep: Option<Arc<EpInner>>,
}

// SAFETY: the MR belongs to the thread-safe domain and is only closed on drop.
unsafe impl Send for Region {}
// SAFETY: as for Send; nothing mutates it after registration.
unsafe impl Sync for Region {}

impl fmt::Debug for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Region({:#x}, {} bytes, key {:#x})",
            self.addr, self.len, self.key
        )
    }
}

impl Region {
    /// The registered range's start address.
    pub fn addr(&self) -> u64 {
        self.addr
    }

    /// The registered range's length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false (empty regions are refused).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// What a peer needs to reach this region: key, base address and length. Send it as
    /// bytes ([`RemoteKey::to_bytes`]).
    pub fn remote_key(&self) -> RemoteKey {
        RemoteKey {
            key: self.key,
            base: self.addr,
            len: self.len as u64,
        }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: the MR came from fi_mr_reg and is closed once.
        unsafe { close(&raw mut (*self.mr).fid) };
    }
}

/// A peer region's key, base address and length ([`Region::remote_key`]); plain data, valid
/// on every endpoint of the peer's provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteKey {
    /// The protection key (`fi_mr_key`).
    pub key: u64,
    /// The region's start in the peer's address space.
    pub base: u64,
    /// The region's length.
    pub len: u64,
}

impl RemoteKey {
    /// Length of [`RemoteKey::to_bytes`].
    pub const BYTES: usize = 24;

    /// Key, base and length as 24 little-endian bytes.
    pub fn to_bytes(&self) -> [u8; Self::BYTES] {
        let mut b = [0u8; Self::BYTES];
        b[..8].copy_from_slice(&self.key.to_le_bytes());
        b[8..16].copy_from_slice(&self.base.to_le_bytes());
        b[16..].copy_from_slice(&self.len.to_le_bytes());
        b
    }

    /// Parses [`RemoteKey::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<RemoteKey> {
        if bytes.len() != Self::BYTES {
            return Err(OfiError::InvalidArgument {
                routine: "RemoteKey::from_bytes",
                message: format!("{} bytes (a remote key has {})", bytes.len(), Self::BYTES),
            });
        }
        let word = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        Ok(RemoteKey {
            key: word(0),
            base: word(8),
            len: word(16),
        })
    }
}
