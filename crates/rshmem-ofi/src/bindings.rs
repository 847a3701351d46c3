//! The part of libfabric's C API this crate uses, written by hand from the libfabric 1.17
//! headers (`rdma/fabric.h`, `fi_domain.h`, `fi_endpoint.h`, `fi_cm.h`, `fi_rma.h`,
//! `fi_atomic.h`, `fi_eq.h`, `fi_errno.h`), so that building needs no libfabric headers.
//!
//! Only six functions are exported by `libfabric.so.1`; everything else (`fi_domain`,
//! `fi_write`, `fi_cntr_read`, ...) is a static inline function of the headers that calls
//! through the operation tables of the `fid_*` structs, which are laid out here. Function
//! pointers this crate never calls are typed `*const c_void` (same size). The layouts are
//! compared with the headers' `offsetof`/`sizeof` by a unit test where the headers exist
//! (`tests::layouts::layouts_match_the_headers`).

#![allow(non_camel_case_types, dead_code, missing_docs, unreachable_pub)]

use std::ffi::{c_char, c_int, c_void};

/// Unused function pointer slot of an operation table.
type Unused = *const c_void;

pub const fn fi_version(major: u32, minor: u32) -> u32 {
    (major << 16) | minor
}

// Capabilities and operation flags (fabric.h).
pub const FI_MSG: u64 = 1 << 1;
pub const FI_RMA: u64 = 1 << 2;
pub const FI_ATOMIC: u64 = 1 << 4;
pub const FI_READ: u64 = 1 << 8;
pub const FI_WRITE: u64 = 1 << 9;
pub const FI_RECV: u64 = 1 << 10;
pub const FI_SEND: u64 = 1 << 11;
pub const FI_TRANSMIT: u64 = FI_SEND;
pub const FI_REMOTE_READ: u64 = 1 << 12;
pub const FI_REMOTE_WRITE: u64 = 1 << 13;
pub const FI_REMOTE_CQ_DATA: u64 = 1 << 17;
pub const FI_FENCE: u64 = 1 << 21;
pub const FI_COMPLETION: u64 = 1 << 24;
pub const FI_INJECT: u64 = 1 << 25;
pub const FI_INJECT_COMPLETE: u64 = 1 << 26;
pub const FI_TRANSMIT_COMPLETE: u64 = 1 << 27;
pub const FI_DELIVERY_COMPLETE: u64 = 1 << 28;
pub const FI_SELECTIVE_COMPLETION: u64 = 1 << 59;
// Mode bits.
pub const FI_CONTEXT: u64 = 1 << 59;
pub const FI_CONTEXT2: u64 = 1 << 52;
// fi_atomic.h: fi_query_atomic flags.
pub const FI_FETCH_ATOMIC: u64 = 1 << 58;
pub const FI_COMPARE_ATOMIC: u64 = 1 << 59;

// Memory registration modes (domain_attr.mr_mode).
pub const FI_MR_LOCAL: c_int = 1 << 2;
pub const FI_MR_RAW: c_int = 1 << 3;
pub const FI_MR_VIRT_ADDR: c_int = 1 << 4;
pub const FI_MR_ALLOCATED: c_int = 1 << 5;
pub const FI_MR_PROV_KEY: c_int = 1 << 6;
pub const FI_MR_MMU_NOTIFY: c_int = 1 << 7;
pub const FI_MR_RMA_EVENT: c_int = 1 << 8;
pub const FI_MR_ENDPOINT: c_int = 1 << 9;
pub const FI_MR_HMEM: c_int = 1 << 10;

// Message ordering (tx_attr.msg_order).
pub const FI_ORDER_RAW: u64 = 1 << 1;
pub const FI_ORDER_WAW: u64 = 1 << 4;
pub const FI_ORDER_SAS: u64 = 1 << 8;
pub const FI_ORDER_RMA_RAW: u64 = 1 << 33;
pub const FI_ORDER_RMA_WAW: u64 = 1 << 35;
pub const FI_ORDER_ATOMIC_WAW: u64 = 1 << 39;

// Enums (C enums are `int`-sized on the platforms libfabric supports).
pub const FI_EP_RDM: c_int = 3;
pub const FI_AV_UNSPEC: c_int = 0;
pub const FI_AV_MAP: c_int = 1;
pub const FI_AV_TABLE: c_int = 2;
pub const FI_PROGRESS_UNSPEC: c_int = 0;
pub const FI_PROGRESS_AUTO: c_int = 1;
pub const FI_PROGRESS_MANUAL: c_int = 2;
pub const FI_THREAD_SAFE: c_int = 1;
pub const FI_WAIT_NONE: c_int = 0;
pub const FI_WAIT_UNSPEC: c_int = 1;
pub const FI_WAIT_FD: c_int = 3;
pub const FI_GETWAIT: c_int = 5; // control command
pub const FI_CQ_FORMAT_CONTEXT: c_int = 1;
pub const FI_CQ_FORMAT_MSG: c_int = 2;
pub const FI_CQ_FORMAT_DATA: c_int = 3;
pub const FI_CQ_COND_NONE: c_int = 0;
pub const FI_CNTR_EVENTS_COMP: c_int = 0;
pub const FI_ENABLE: c_int = 6; // control command

// enum fi_datatype.
pub const FI_INT32: c_int = 4;
pub const FI_UINT32: c_int = 5;
pub const FI_INT64: c_int = 6;
pub const FI_UINT64: c_int = 7;
pub const FI_FLOAT: c_int = 8;
pub const FI_DOUBLE: c_int = 9;

// enum fi_op.
pub const FI_MIN: c_int = 0;
pub const FI_MAX: c_int = 1;
pub const FI_SUM: c_int = 2;
pub const FI_PROD: c_int = 3;
pub const FI_LOR: c_int = 4;
pub const FI_LAND: c_int = 5;
pub const FI_BOR: c_int = 6;
pub const FI_BAND: c_int = 7;
pub const FI_LXOR: c_int = 8;
pub const FI_BXOR: c_int = 9;
pub const FI_ATOMIC_READ: c_int = 10;
pub const FI_ATOMIC_WRITE: c_int = 11;
pub const FI_CSWAP: c_int = 12;

// Error numbers (fi_errno.h: system errno values below 256, libfabric's own from 256).
pub const FI_SUCCESS: c_int = 0;
pub const FI_EAGAIN: c_int = libc::EAGAIN;
pub const FI_ENOSYS: c_int = libc::ENOSYS;
pub const FI_ENODATA: c_int = libc::ENODATA;
pub const FI_EOPNOTSUPP: c_int = libc::EOPNOTSUPP;
pub const FI_ETIMEDOUT: c_int = libc::ETIMEDOUT;
pub const FI_ETOOSMALL: c_int = 257;
pub const FI_EAVAIL: c_int = 259;

pub type fi_addr_t = u64;

#[repr(C)]
pub struct fi_ops {
    pub size: usize,
    pub close: unsafe extern "C" fn(fid: *mut fid) -> c_int,
    pub bind: unsafe extern "C" fn(fid: *mut fid, bfid: *mut fid, flags: u64) -> c_int,
    pub control: unsafe extern "C" fn(fid: *mut fid, command: c_int, arg: *mut c_void) -> c_int,
    pub ops_open: Unused,
    pub tostr: Unused,
    pub ops_set: Unused,
}

/// Every fabric interface descriptor starts with this.
#[repr(C)]
pub struct fid {
    pub fclass: usize,
    pub context: *mut c_void,
    pub ops: *mut fi_ops,
}

#[repr(C)]
pub struct fi_tx_attr {
    pub caps: u64,
    pub mode: u64,
    pub op_flags: u64,
    pub msg_order: u64,
    pub comp_order: u64,
    pub inject_size: usize,
    pub size: usize,
    pub iov_limit: usize,
    pub rma_iov_limit: usize,
    pub tclass: u32,
}

#[repr(C)]
pub struct fi_rx_attr {
    pub caps: u64,
    pub mode: u64,
    pub op_flags: u64,
    pub msg_order: u64,
    pub comp_order: u64,
    pub total_buffered_recv: usize,
    pub size: usize,
    pub iov_limit: usize,
}

#[repr(C)]
pub struct fi_ep_attr {
    pub type_: c_int,
    pub protocol: u32,
    pub protocol_version: u32,
    pub max_msg_size: usize,
    pub msg_prefix_size: usize,
    pub max_order_raw_size: usize,
    pub max_order_war_size: usize,
    pub max_order_waw_size: usize,
    pub mem_tag_format: u64,
    pub tx_ctx_cnt: usize,
    pub rx_ctx_cnt: usize,
    pub auth_key_size: usize,
    pub auth_key: *mut u8,
}

#[repr(C)]
pub struct fi_domain_attr {
    pub domain: *mut fid_domain,
    pub name: *mut c_char,
    pub threading: c_int,
    pub control_progress: c_int,
    pub data_progress: c_int,
    pub resource_mgmt: c_int,
    pub av_type: c_int,
    pub mr_mode: c_int,
    pub mr_key_size: usize,
    pub cq_data_size: usize,
    pub cq_cnt: usize,
    pub ep_cnt: usize,
    pub tx_ctx_cnt: usize,
    pub rx_ctx_cnt: usize,
    pub max_ep_tx_ctx: usize,
    pub max_ep_rx_ctx: usize,
    pub max_ep_stx_ctx: usize,
    pub max_ep_srx_ctx: usize,
    pub cntr_cnt: usize,
    pub mr_iov_limit: usize,
    pub caps: u64,
    pub mode: u64,
    pub auth_key: *mut u8,
    pub auth_key_size: usize,
    pub max_err_data: usize,
    pub mr_cnt: usize,
    pub tclass: u32,
}

#[repr(C)]
pub struct fi_fabric_attr {
    pub fabric: *mut fid_fabric,
    pub name: *mut c_char,
    pub prov_name: *mut c_char,
    pub prov_version: u32,
    pub api_version: u32,
}

#[repr(C)]
pub struct fi_info {
    pub next: *mut fi_info,
    pub caps: u64,
    pub mode: u64,
    pub addr_format: u32,
    pub src_addrlen: usize,
    pub dest_addrlen: usize,
    pub src_addr: *mut c_void,
    pub dest_addr: *mut c_void,
    pub handle: *mut fid,
    pub tx_attr: *mut fi_tx_attr,
    pub rx_attr: *mut fi_rx_attr,
    pub ep_attr: *mut fi_ep_attr,
    pub domain_attr: *mut fi_domain_attr,
    pub fabric_attr: *mut fi_fabric_attr,
    pub nic: *mut c_void,
}

#[repr(C)]
pub struct fi_ops_fabric {
    pub size: usize,
    pub domain: unsafe extern "C" fn(
        fabric: *mut fid_fabric,
        info: *mut fi_info,
        dom: *mut *mut fid_domain,
        context: *mut c_void,
    ) -> c_int,
    pub passive_ep: Unused,
    pub eq_open: Unused,
    pub wait_open: Unused,
    pub trywait:
        unsafe extern "C" fn(fabric: *mut fid_fabric, fids: *mut *mut fid, count: c_int) -> c_int,
    pub domain2: Unused,
}

#[repr(C)]
pub struct fid_fabric {
    pub fid: fid,
    pub ops: *mut fi_ops_fabric,
    pub api_version: u32,
}

#[repr(C)]
pub struct fi_av_attr {
    pub type_: c_int,
    pub rx_ctx_bits: c_int,
    pub count: usize,
    pub ep_per_node: usize,
    pub name: *const c_char,
    pub map_addr: *mut c_void,
    pub flags: u64,
}

#[repr(C)]
pub struct fi_cq_attr {
    pub size: usize,
    pub flags: u64,
    pub format: c_int,
    pub wait_obj: c_int,
    pub signaling_vector: c_int,
    pub wait_cond: c_int,
    pub wait_set: *mut c_void,
}

#[repr(C)]
pub struct fi_cntr_attr {
    pub events: c_int,
    pub wait_obj: c_int,
    pub wait_set: *mut c_void,
    pub flags: u64,
}

#[repr(C)]
pub struct fi_atomic_attr {
    pub count: usize,
    pub size: usize,
}

#[repr(C)]
pub struct fi_ops_domain {
    pub size: usize,
    pub av_open: unsafe extern "C" fn(
        domain: *mut fid_domain,
        attr: *mut fi_av_attr,
        av: *mut *mut fid_av,
        context: *mut c_void,
    ) -> c_int,
    pub cq_open: unsafe extern "C" fn(
        domain: *mut fid_domain,
        attr: *mut fi_cq_attr,
        cq: *mut *mut fid_cq,
        context: *mut c_void,
    ) -> c_int,
    pub endpoint: unsafe extern "C" fn(
        domain: *mut fid_domain,
        info: *mut fi_info,
        ep: *mut *mut fid_ep,
        context: *mut c_void,
    ) -> c_int,
    pub scalable_ep: Unused,
    pub cntr_open: unsafe extern "C" fn(
        domain: *mut fid_domain,
        attr: *mut fi_cntr_attr,
        cntr: *mut *mut fid_cntr,
        context: *mut c_void,
    ) -> c_int,
    pub poll_open: Unused,
    pub stx_ctx: Unused,
    pub srx_ctx: Unused,
    pub query_atomic: Option<
        unsafe extern "C" fn(
            domain: *mut fid_domain,
            datatype: c_int,
            op: c_int,
            attr: *mut fi_atomic_attr,
            flags: u64,
        ) -> c_int,
    >,
    pub query_collective: Unused,
    pub endpoint2: Unused,
}

#[repr(C)]
pub struct fi_ops_mr {
    pub size: usize,
    pub reg: unsafe extern "C" fn(
        fid: *mut fid,
        buf: *const c_void,
        len: usize,
        access: u64,
        offset: u64,
        requested_key: u64,
        flags: u64,
        mr: *mut *mut fid_mr,
        context: *mut c_void,
    ) -> c_int,
    pub regv: Unused,
    pub regattr: Unused,
}

#[repr(C)]
pub struct fid_domain {
    pub fid: fid,
    pub ops: *mut fi_ops_domain,
    pub mr: *mut fi_ops_mr,
}

#[repr(C)]
pub struct fi_ops_av {
    pub size: usize,
    pub insert: unsafe extern "C" fn(
        av: *mut fid_av,
        addr: *const c_void,
        count: usize,
        fi_addr: *mut fi_addr_t,
        flags: u64,
        context: *mut c_void,
    ) -> c_int,
    pub insertsvc: Unused,
    pub insertsym: Unused,
    pub remove: Unused,
    pub lookup: Unused,
    pub straddr: Unused,
    pub av_set: Unused,
}

#[repr(C)]
pub struct fid_av {
    pub fid: fid,
    pub ops: *mut fi_ops_av,
}

#[repr(C)]
pub struct fid_mr {
    pub fid: fid,
    pub mem_desc: *mut c_void,
    pub key: u64,
}

#[repr(C)]
pub struct fi_ops_ep {
    pub size: usize,
    pub cancel: Unused,
    pub getopt: Unused,
    pub setopt: Unused,
    pub tx_ctx: Unused,
    pub rx_ctx: Unused,
    pub rx_size_left: Unused,
    pub tx_size_left: Unused,
}

#[repr(C)]
pub struct fi_ops_cm {
    pub size: usize,
    pub setname: Unused,
    pub getname:
        unsafe extern "C" fn(fid: *mut fid, addr: *mut c_void, addrlen: *mut usize) -> c_int,
    pub getpeer: Unused,
    pub connect: Unused,
    pub listen: Unused,
    pub accept: Unused,
    pub reject: Unused,
    pub shutdown: Unused,
    pub join: Unused,
}

#[repr(C)]
pub struct fi_rma_iov {
    pub addr: u64,
    pub len: usize,
    pub key: u64,
}

#[repr(C)]
pub struct fi_msg_rma {
    pub msg_iov: *const libc::iovec,
    pub desc: *mut *mut c_void,
    pub iov_count: usize,
    pub addr: fi_addr_t,
    pub rma_iov: *const fi_rma_iov,
    pub rma_iov_count: usize,
    pub context: *mut c_void,
    pub data: u64,
}

#[repr(C)]
pub struct fi_ioc {
    pub addr: *mut c_void,
    pub count: usize,
}

#[repr(C)]
pub struct fi_rma_ioc {
    pub addr: u64,
    pub count: usize,
    pub key: u64,
}

#[repr(C)]
pub struct fi_msg_atomic {
    pub msg_iov: *const fi_ioc,
    pub desc: *mut *mut c_void,
    pub iov_count: usize,
    pub addr: fi_addr_t,
    pub rma_iov: *const fi_rma_ioc,
    pub rma_iov_count: usize,
    pub datatype: c_int,
    pub op: c_int,
    pub context: *mut c_void,
    pub data: u64,
}

#[repr(C)]
pub struct fi_ops_rma {
    pub size: usize,
    pub read: unsafe extern "C" fn(
        ep: *mut fid_ep,
        buf: *mut c_void,
        len: usize,
        desc: *mut c_void,
        src_addr: fi_addr_t,
        addr: u64,
        key: u64,
        context: *mut c_void,
    ) -> isize,
    pub readv: Unused,
    pub readmsg: Unused,
    pub write: unsafe extern "C" fn(
        ep: *mut fid_ep,
        buf: *const c_void,
        len: usize,
        desc: *mut c_void,
        dest_addr: fi_addr_t,
        addr: u64,
        key: u64,
        context: *mut c_void,
    ) -> isize,
    pub writev: Unused,
    pub writemsg:
        unsafe extern "C" fn(ep: *mut fid_ep, msg: *const fi_msg_rma, flags: u64) -> isize,
    pub inject: unsafe extern "C" fn(
        ep: *mut fid_ep,
        buf: *const c_void,
        len: usize,
        dest_addr: fi_addr_t,
        addr: u64,
        key: u64,
    ) -> isize,
    pub writedata: Unused,
    pub injectdata: Unused,
}

#[repr(C)]
pub struct fi_ops_atomic {
    pub size: usize,
    pub write: unsafe extern "C" fn(
        ep: *mut fid_ep,
        buf: *const c_void,
        count: usize,
        desc: *mut c_void,
        dest_addr: fi_addr_t,
        addr: u64,
        key: u64,
        datatype: c_int,
        op: c_int,
        context: *mut c_void,
    ) -> isize,
    pub writev: Unused,
    pub writemsg:
        unsafe extern "C" fn(ep: *mut fid_ep, msg: *const fi_msg_atomic, flags: u64) -> isize,
    pub inject: unsafe extern "C" fn(
        ep: *mut fid_ep,
        buf: *const c_void,
        count: usize,
        dest_addr: fi_addr_t,
        addr: u64,
        key: u64,
        datatype: c_int,
        op: c_int,
    ) -> isize,
    pub readwrite: unsafe extern "C" fn(
        ep: *mut fid_ep,
        buf: *const c_void,
        count: usize,
        desc: *mut c_void,
        result: *mut c_void,
        result_desc: *mut c_void,
        dest_addr: fi_addr_t,
        addr: u64,
        key: u64,
        datatype: c_int,
        op: c_int,
        context: *mut c_void,
    ) -> isize,
    pub readwritev: Unused,
    pub readwritemsg: Unused,
    pub compwrite: unsafe extern "C" fn(
        ep: *mut fid_ep,
        buf: *const c_void,
        count: usize,
        desc: *mut c_void,
        compare: *const c_void,
        compare_desc: *mut c_void,
        result: *mut c_void,
        result_desc: *mut c_void,
        dest_addr: fi_addr_t,
        addr: u64,
        key: u64,
        datatype: c_int,
        op: c_int,
        context: *mut c_void,
    ) -> isize,
    pub compwritev: Unused,
    pub compwritemsg: Unused,
    pub writevalid: Unused,
    pub readwritevalid: Unused,
    pub compwritevalid: Unused,
}

#[repr(C)]
pub struct fi_msg {
    pub msg_iov: *const libc::iovec,
    pub desc: *mut *mut c_void,
    pub iov_count: usize,
    pub addr: fi_addr_t,
    pub context: *mut c_void,
    pub data: u64,
}

#[repr(C)]
pub struct fi_ops_msg {
    pub size: usize,
    pub recv: Unused,
    pub recvv: Unused,
    pub recvmsg: unsafe extern "C" fn(ep: *mut fid_ep, msg: *const fi_msg, flags: u64) -> isize,
    pub send: Unused,
    pub sendv: Unused,
    pub sendmsg: unsafe extern "C" fn(ep: *mut fid_ep, msg: *const fi_msg, flags: u64) -> isize,
    pub inject: Unused,
    pub senddata: Unused,
    pub injectdata: Unused,
}

#[repr(C)]
pub struct fid_ep {
    pub fid: fid,
    pub ops: *mut fi_ops_ep,
    pub cm: *mut fi_ops_cm,
    pub msg: *mut fi_ops_msg,
    pub rma: *mut fi_ops_rma,
    pub tagged: *mut c_void,
    pub atomic: *mut fi_ops_atomic,
    pub collective: *mut c_void,
}

#[repr(C)]
pub struct fi_cq_err_entry {
    pub op_context: *mut c_void,
    pub flags: u64,
    pub len: usize,
    pub buf: *mut c_void,
    pub data: u64,
    pub tag: u64,
    pub olen: usize,
    pub err: c_int,
    pub prov_errno: c_int,
    pub err_data: *mut c_void,
    pub err_data_size: usize,
}

#[repr(C)]
pub struct fi_ops_cq {
    pub size: usize,
    pub read: unsafe extern "C" fn(cq: *mut fid_cq, buf: *mut c_void, count: usize) -> isize,
    pub readfrom: Unused,
    pub readerr:
        unsafe extern "C" fn(cq: *mut fid_cq, buf: *mut fi_cq_err_entry, flags: u64) -> isize,
    pub sread: unsafe extern "C" fn(
        cq: *mut fid_cq,
        buf: *mut c_void,
        count: usize,
        cond: *const c_void,
        timeout: c_int,
    ) -> isize,
    pub sreadfrom: Unused,
    pub signal: unsafe extern "C" fn(cq: *mut fid_cq) -> c_int,
    pub strerror: Unused,
}

#[repr(C)]
pub struct fid_cq {
    pub fid: fid,
    pub ops: *mut fi_ops_cq,
}

#[repr(C)]
pub struct fi_ops_cntr {
    pub size: usize,
    pub read: unsafe extern "C" fn(cntr: *mut fid_cntr) -> u64,
    pub readerr: unsafe extern "C" fn(cntr: *mut fid_cntr) -> u64,
    pub add: Unused,
    pub set: Unused,
    pub wait: unsafe extern "C" fn(cntr: *mut fid_cntr, threshold: u64, timeout: c_int) -> c_int,
    pub adderr: Unused,
    pub seterr: Unused,
}

#[repr(C)]
pub struct fid_cntr {
    pub fid: fid,
    pub ops: *mut fi_ops_cntr,
}

/// One entry of `FI_CQ_FORMAT_CONTEXT`.
#[repr(C)]
pub struct fi_cq_entry {
    pub op_context: *mut c_void,
}

/// One entry of `FI_CQ_FORMAT_MSG`.
#[repr(C)]
pub struct fi_cq_msg_entry {
    pub op_context: *mut c_void,
    pub flags: u64,
    pub len: usize,
}

/// One entry of `FI_CQ_FORMAT_DATA`.
#[repr(C)]
pub struct fi_cq_data_entry {
    pub op_context: *mut c_void,
    pub flags: u64,
    pub len: usize,
    pub buf: *mut c_void,
    pub data: u64,
}

impl fi_cq_data_entry {
    /// An entry for the provider to fill.
    pub const EMPTY: fi_cq_data_entry = fi_cq_data_entry {
        op_context: std::ptr::null_mut(),
        flags: 0,
        len: 0,
        buf: std::ptr::null_mut(),
        data: 0,
    };
}

// The exported functions (their default symbol versions in libfabric 1.x: fi_getinfo,
// fi_freeinfo and fi_dupinfo are FABRIC_1.3, fi_fabric FABRIC_1.1, the rest FABRIC_1.0).
pub type FiGetinfo = unsafe extern "C" fn(
    version: u32,
    node: *const c_char,
    service: *const c_char,
    flags: u64,
    hints: *const fi_info,
    info: *mut *mut fi_info,
) -> c_int;
pub type FiFreeinfo = unsafe extern "C" fn(info: *mut fi_info);
pub type FiDupinfo = unsafe extern "C" fn(info: *const fi_info) -> *mut fi_info;
pub type FiFabric = unsafe extern "C" fn(
    attr: *mut fi_fabric_attr,
    fabric: *mut *mut fid_fabric,
    context: *mut c_void,
) -> c_int;
pub type FiStrerror = unsafe extern "C" fn(errnum: c_int) -> *const c_char;
pub type FiVersion = unsafe extern "C" fn() -> u32;

/// The exported functions, with the symbol version each is looked up by.
pub const SYMBOLS: [(&str, &str); 6] = [
    ("fi_getinfo", "FABRIC_1.3"),
    ("fi_freeinfo", "FABRIC_1.3"),
    ("fi_dupinfo", "FABRIC_1.3"),
    ("fi_fabric", "FABRIC_1.1"),
    ("fi_strerror", "FABRIC_1.0"),
    ("fi_version", "FABRIC_1.0"),
];
