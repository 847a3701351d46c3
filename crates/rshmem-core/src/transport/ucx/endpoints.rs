//! Reaching a peer: a context's worker (made or taken from the pool on first use) and its
//! endpoints to the peers' service workers (opened on first use, wire-up completed).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use rshmem_ucx::{Endpoint, RemoteKey, UcxError};

use super::{status_of, Conn, CtxWorker, Ucx, DATA, HEAP, RUNTIME_AREA};
use crate::error::{Error, Result, UNNAMED};
use crate::transport::{CtxState, Seg, SymAddr};

/// What a connection that UCX finds no route for reports: the transports `UCX_TLS` allows
/// reach no other process (self, cma), or reach it only without the peer failure reports
/// our endpoints ask for (shared memory with its error handling turned off).
const NO_ROUTE: &str = "cannot connect to the PE through UCX: no transport that UCX_TLS \
     allows reaches it with peer failure reports (allow tcp, or sm between PEs of one host, \
     and leave the UCX_*_ERROR_HANDLING variables unset)";

impl Ucx {
    /// Connects the context's worker to every peer now, wire-up included (at init, for
    /// the default context, while every peer is alive and serving).
    /// The service worker's endpoints ([`Ucx::svc`]) are made the first time too.
    pub(crate) fn wire_up(&self, ctx: &CtxState) -> Result<()> {
        let w = self.worker(ctx)?;
        for pe in (0..self.peers.len()).filter(|&pe| self.peers[pe].is_some()) {
            if w.conns[pe].get().is_none() {
                self.open(w, pe)?;
            }
            self.svc_conn(pe)?;
        }
        Ok(())
    }

    /// The service worker's endpoint to `pe`'s service worker ([`Ucx::svc`]), made on first
    /// use with the worker to this thread alone (its wire-up flush progresses it).
    #[inline]
    pub(super) fn svc_conn(&self, pe: usize) -> Result<&Conn> {
        match self.svc.conns[pe].get() {
            Some(c) => Ok(c),
            None => self
                .service
                .exclusive(|| self.open_with(&self.svc, pe, false)),
        }
    }

    /// The context's worker, made (or taken from the pool) on first use.
    #[inline]
    pub(super) fn worker(&self, ctx: &CtxState) -> Result<&CtxWorker> {
        let p = ctx.ucx.0.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: workers live in `workers` until the transport drops, which no
            // operation races with.
            return Ok(unsafe { &*p });
        }
        self.attach(ctx)
    }

    #[cold]
    fn attach(&self, ctx: &CtxState) -> Result<&CtxWorker> {
        let reused = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let w = match reused {
            Some(w) => w,
            None => {
                let worker = self.ucp.worker().map_err(|e| Error::Transport {
                    routine: UNNAMED,
                    pe: None,
                    what: "cannot create a UCX worker for the context",
                    status: status_of(&e),
                })?;
                // Its waits serve the service worker where a wait left it out of the
                // progress thread's set: a peer blocked towards this PE likewise may wait
                // for it (a 2-PE 64 KiB reduction, gets and puts both ways, took 390-440 us
                // instead of 250-310 without this).
                worker.serve_while_blocked(&self.service);
                let worker = Arc::new(worker);
                let i = self.workers.push(Box::new(CtxWorker {
                    conns: (0..self.peers.len()).map(|_| OnceLock::new()).collect(),
                    worker,
                    issued: AtomicU64::new(0),
                    flushed: AtomicU64::new(0),
                }));
                // The box never moves nor drops before the transport: contexts keep its
                // address (and only ever read through it).
                &*self.workers[i] as *const CtxWorker as *mut CtxWorker
            }
        };
        match ctx.ucx.0.compare_exchange(
            std::ptr::null_mut(),
            w,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            // SAFETY: as in `worker`.
            Ok(_) => Ok(unsafe { &*w }),
            Err(other) => {
                // Another thread of a shared context attached one first.
                self.free.lock().unwrap_or_else(|e| e.into_inner()).push(w);
                // SAFETY: as in `worker`.
                Ok(unsafe { &*other })
            }
        }
    }

    /// The endpoint to `pe` on `w`, and the remote address and key of `addr` there.
    #[inline]
    pub(super) fn target<'w>(
        &self,
        w: &'w CtxWorker,
        pe: usize,
        addr: SymAddr,
    ) -> Result<(&'w Endpoint, u64, &'w RemoteKey)> {
        let conn = match w.conns[pe].get() {
            Some(c) => c,
            None => self.open(w, pe)?,
        };
        let region = match addr.seg {
            Seg::Heap if addr.off < self.heap_off => RUNTIME_AREA,
            Seg::Heap => HEAP,
            Seg::Data => DATA,
        };
        let peer = self.peers[pe].as_ref().expect("a UCX route has a peer");
        let key = conn.rkeys[region].as_ref().ok_or(Error::Transport {
            routine: UNNAMED,
            pe: Some(pe),
            what: "the peer has no such symmetric segment (global variables are symmetric on no PE or on every PE)",
            status: "",
        })?;
        Ok((&conn.ep, peer.base[region] + addr.off as u64, key))
    }

    /// `addr` on `pe` as mapped in this process ([`Conn::mapped`]), if it is.
    #[inline(always)]
    pub(super) fn mapped(w: &CtxWorker, pe: usize, addr: SymAddr) -> Option<*mut u8> {
        w.conns[pe].get().and_then(|c| c.at(addr))
    }

    /// The way every raise to `pe` takes: the service's endpoint (made at wire-up), and
    /// where it maps `pe`'s heap, `addr` there. Decided by this one endpoint, not by the
    /// sending context's (which a context opens on its first transfer to `pe`), so all
    /// raises to `pe` go alike, as messages or by the mapping; a count raised by the
    /// mapping could otherwise show before an earlier message's data had landed.
    pub(super) fn raise_route(&self, pe: usize, addr: SymAddr) -> Result<(&Conn, Option<*mut u8>)> {
        let conn = self.svc_conn(pe)?;
        Ok((conn, conn.at(addr)))
    }

    #[cold]
    fn open<'w>(&self, w: &'w CtxWorker, pe: usize) -> Result<&'w Conn> {
        self.open_with(w, pe, true)
    }

    /// [`Ucx::open`]; `wire_up`: complete the endpoint's wire-up now, by a flush of `w`.
    /// The service worker's endpoints skip it: its thread and waiters drive it anyway, and
    /// a flush of the whole service worker would also wait on its endpoints back to the
    /// peers' context workers, which a peer doing the same at init does not drive.
    #[cold]
    fn open_with<'w>(&self, w: &'w CtxWorker, pe: usize, wire_up: bool) -> Result<&'w Conn> {
        let peer = self.peers[pe].as_ref().expect("a UCX route has a peer");
        let fail = |what: &'static str| {
            move |e: UcxError| Error::Transport {
                routine: UNNAMED,
                pe: Some(pe),
                what,
                status: status_of(&e),
            }
        };
        let ep = w.worker.connect(&peer.worker).map_err(|e| {
            // No route at all: what the user can change is which transports UCX may use.
            let unreachable = matches!(&e, UcxError::Status { status, .. }
                if status.name() == "UCS_ERR_UNREACHABLE");
            let what = if unreachable {
                NO_ROUTE
            } else {
                "cannot connect to the PE through UCX"
            };
            fail(what)(e)
        })?;
        let mut rkeys = [None, None, None];
        for (i, k) in peer.rkeys.iter().enumerate() {
            if !k.is_empty() {
                rkeys[i] = Some(
                    ep.unpack_rkey(k)
                        .map_err(fail("cannot unpack the PE's UCX remote key"))?,
                );
            }
        }
        // Complete the wire-up now: until it is done UCX queues operations on the endpoint
        // (reporting them complete), and only a progress call of this worker sends them,
        // which a PE that goes on to compute might not make for a long time.
        if wire_up {
            w.worker
                .flush()
                .map_err(fail("cannot connect to the PE through UCX"))?;
        }
        // Where the peer's UCX allocated its heap segment (one key for the runtime area and
        // the heap: one allocation, hence one mapping).
        let one_allocation = peer.rkeys[HEAP] == peer.rkeys[RUNTIME_AREA];
        let mapped = rkeys[HEAP]
            .as_ref()
            .filter(|_| one_allocation)
            .and_then(|k| k.local_ptr(peer.base[HEAP] + self.heap_off as u64))
            .map_or(0, |p| p as usize - self.heap_off);
        if mapped != 0 {
            self.maps_peer.store(true, Ordering::Release);
        }
        // A racing thread may have opened one too: the first stays, ours is closed.
        let _ = w.conns[pe].set(Conn { rkeys, ep, mapped });
        Ok(w.conns[pe].get().expect("set above"))
    }

    pub(super) fn op_error(pe: usize, what: &'static str) -> impl Fn(UcxError) -> Error {
        move |e| Error::Transport {
            routine: UNNAMED,
            pe: Some(pe),
            what,
            status: status_of(&e),
        }
    }
}
