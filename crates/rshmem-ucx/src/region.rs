//! Memory registration: [`Region`], and the [`Ucp`] methods that register memory.

use crate::context::Ucp;
use crate::status::{check, Result, UcxError};
use crate::sys;
use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

impl Ucp {
    /// Registers the existing memory `[addr, addr + len)` for remote access (nothing beyond the
    /// range is registered; UCX allocates nothing). The memory must stay mapped until the
    /// region is dropped.
    pub fn mem_map(self: &Arc<Self>, addr: *mut u8, len: usize) -> Result<Region> {
        self.map(addr, len, false)
    }

    /// [`Ucp::mem_map`] with `UCP_MEM_MAP_NONBLOCK`: pages are neither populated nor pinned
    /// up front, but when communication first touches them (on-demand paging where the
    /// network supports it), for a large range of which little is ever used.
    pub fn mem_map_on_demand(self: &Arc<Self>, addr: *mut u8, len: usize) -> Result<Region> {
        self.map(addr, len, true)
    }

    /// Allocates memory through UCX at exactly `[addr, addr + len)`, replacing what is mapped
    /// there (`UCP_MEM_MAP_ALLOCATE | UCP_MEM_MAP_FIXED`), and registers it. On one host, memory
    /// that UCX allocated from its shared-memory domains is what its shared-memory transports
    /// reach one-sidedly (a put is a copy, an atomic a CPU atomic); memory it merely registered
    /// takes a system call per operation or the target's progress. The new memory reads as
    /// zero. When the region drops, the range is left reserved (inaccessible, backed by
    /// nothing) rather than unmapped, so the caller's reservation stays whole.
    ///
    /// # Safety
    /// `[addr, addr + len)` is page-aligned, lies in a mapping the caller owns, and holds
    /// nothing anyone still uses: its contents are lost.
    pub unsafe fn mem_alloc_fixed(self: &Arc<Self>, addr: *mut u8, len: usize) -> Result<Region> {
        let mut r = self.map_with(
            addr,
            len,
            sys::UCP_MEM_MAP_ALLOCATE | sys::UCP_MEM_MAP_FIXED,
        )?;
        r.fixed = true;
        Ok(r)
    }

    fn map(self: &Arc<Self>, addr: *mut u8, len: usize, on_demand: bool) -> Result<Region> {
        self.map_with(
            addr,
            len,
            if on_demand {
                sys::UCP_MEM_MAP_NONBLOCK
            } else {
                0
            },
        )
    }

    fn map_with(self: &Arc<Self>, addr: *mut u8, len: usize, flags: u32) -> Result<Region> {
        if addr.is_null() || len == 0 {
            return Err(UcxError::InvalidArgument {
                routine: "Ucp::mem_map",
                message: format!("empty range (addr {addr:p}, len {len})"),
            });
        }
        let params = sys::ucp_mem_map_params_t {
            field_mask: u64::from(
                sys::UCP_MEM_MAP_PARAM_FIELD_ADDRESS
                    | sys::UCP_MEM_MAP_PARAM_FIELD_LENGTH
                    | sys::UCP_MEM_MAP_PARAM_FIELD_FLAGS,
            ),
            address: addr.cast(),
            length: len,
            flags,
            ..Default::default()
        };
        let mut memh: sys::ucp_mem_h = std::ptr::null_mut();
        // SAFETY: params name an existing range (registered, or replaced under FIXED: the
        // caller of `mem_alloc_fixed` vouched for it); memh is an out pointer.
        check("ucp_mem_map", unsafe {
            self.lib.ucp_mem_map(self.ctx, &params, &mut memh)
        })?;
        Ok(Region {
            ucp: self.clone(),
            memh,
            addr: addr as u64,
            len,
            fixed: false,
        })
    }
}

/// Memory registered with [`Ucp::mem_map`]; unregistered on drop.
pub struct Region {
    ucp: Arc<Ucp>,
    memh: sys::ucp_mem_h,
    addr: u64,
    len: usize,
    /// Allocated at a fixed address ([`Ucp::mem_alloc_fixed`]): reserved again on drop.
    fixed: bool,
}

// SAFETY: memory handles belong to the thread-safe context (mt_workers_shared).
unsafe impl Send for Region {}
// SAFETY: as for Send; `pack_rkey` takes the context lock inside UCX.
unsafe impl Sync for Region {}

impl fmt::Debug for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Region({:#x}, {} bytes)", self.addr, self.len)
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

    /// The packed remote key, for peers' [`Endpoint::unpack_rkey`].
    ///
    /// [`Endpoint::unpack_rkey`]: crate::Endpoint::unpack_rkey
    pub fn pack_rkey(&self) -> Result<Vec<u8>> {
        let mut buf: *mut c_void = std::ptr::null_mut();
        let mut size = 0usize;
        let lib = &self.ucp.lib;
        // SAFETY: memh is live; buf and size are out pointers.
        check("ucp_rkey_pack", unsafe {
            lib.ucp_rkey_pack(self.ucp.ctx, self.memh, &mut buf, &mut size)
        })?;
        // SAFETY: UCX returned `size` bytes at `buf`, released right after the copy.
        let v = unsafe { std::slice::from_raw_parts(buf as *const u8, size) }.to_vec();
        // SAFETY: buf came from ucp_rkey_pack.
        unsafe { lib.ucp_rkey_buffer_release(buf) };
        Ok(v)
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: memh came from ucp_mem_map on this context and is dropped once.
        unsafe { self.ucp.lib.ucp_mem_unmap(self.ucp.ctx, self.memh) };
        if self.fixed {
            // SAFETY: the range was the caller's (mem_alloc_fixed's contract) and UCX just
            // unmapped it; an inaccessible mapping keeps it from being handed out again.
            unsafe {
                libc::mmap(
                    self.addr as *mut c_void,
                    self.len,
                    libc::PROT_NONE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
        }
    }
}
