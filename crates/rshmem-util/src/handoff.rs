//! Who sleeps on a network's event file descriptor: a progress thread, or the threads of the
//! process that wait anyway (UCX's service worker, libfabric's service completion queue).
//!
//! The progress thread sleeps in an epoll set holding its stop fd and, while no thread
//! waits, the network's event fd. A waiter takes the event fd out of that set (one system
//! call, no wake-up: [`Handoff::claim`]), drives the network itself and naps on the fd
//! ([`Handoff::nap`]); the last waiter to leave re-arms the network and puts the fd back
//! ([`Handoff::release`]), which wakes the thread only if an event is already pending. So an
//! arrival wakes the one thread that needs it: over TCP, a thread woken for every message
//! that a waiter served anyway cost a 2-PE barrier about 8 system calls and a wake-up
//! (issue 27), and a libfabric fetching atomic twice the time of Sandia OpenSHMEM's (issue 30).
//! Most waits end lazily ([`Handoff::release_lazily`]), and every wait that drives the
//! network marks the fd in use ([`Handoff::touch`]): the thread takes it back only once
//! the process has stopped driving it for a while.

use std::cell::Cell;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The epoll set of a progress thread and who holds its event fd.
#[derive(Debug)]
pub struct Handoff {
    state: Mutex<Hold>,
    /// `Hold::held`, readable without the lock: a blocking operation asks
    /// ([`Handoff::claim_if_out`]) at every network operation, and mostly the fd is in.
    out: AtomicBool,
    /// Waits that drove the network so far ([`Handoff::touch`]): the thread takes a lazily
    /// released fd back only after a whole linger in which neither this nor
    /// `Hold::releases` changed.
    /// Written by the waiting threads alone, read by the thread once per linger.
    driven: AtomicU64,
    epoll: RawFd,
    stop: RawFd,
    event: RawFd,
}

/// Who holds the event fd (changed with the epoll set under the handoff's lock).
#[derive(Debug)]
struct Hold {
    /// Threads holding a claim.
    waiters: usize,
    /// The fd is out of the thread's set: claimed, or released lazily and not taken back.
    held: bool,
    /// Claims ended lazily ([`Handoff::release_lazily`]) so far: the thread takes the fd
    /// back after a whole [`LINGER`] in which this did not change. A count, not a time:
    /// a clock reading in every release was a fifth of a 0.2 us atomic through UCX's
    /// shared memory (each operation claims while the fd is out).
    releases: u64,
    /// The thread sleeps with no timeout (the fd was in its set when it went to sleep).
    untimed: bool,
    /// The length of the thread's next timed sleep while the fd is out: [`LINGER`], doubled
    /// after each sleep that found the fd still in use, up to [`LINGER_MAX`].
    linger: Duration,
}

/// How long a lazily released fd stays with the waiters before the progress thread takes
/// it back ([`Handoff::release_lazily`]): the thread's first look, once the fd went out.
pub const LINGER: Duration = Duration::from_millis(1);
/// The longest the thread sleeps while the fd is out: each look that finds it still in use
/// doubles the next sleep, up to this. A loop of waits then wakes the thread about 250
/// times a second, not 2,000 (two per [`LINGER`]: each wake took the core from a PE that
/// shares it: a 2-PE reduction and barrier over UCX's TCP took 25.8 us, 22.4 after, issue 27); a PE that
/// leaves such a loop to compute is served at most twice this later.
pub const LINGER_MAX: Duration = Duration::from_millis(4);

impl Default for Hold {
    fn default() -> Hold {
        Hold {
            waiters: 0,
            held: false,
            releases: 0,
            untimed: false,
            linger: LINGER,
        }
    }
}

impl Drop for Handoff {
    fn drop(&mut self) {
        // SAFETY: both fds were created by `Handoff::new` and are closed once, here.
        unsafe {
            libc::close(self.epoll);
            libc::close(self.stop);
        }
    }
}

/// Adds `fd` to (with `add` false, removes it from) `epoll`, level-triggered for input.
fn epoll_set(epoll: RawFd, fd: RawFd, add: bool) -> io::Result<()> {
    let mut ev = libc::epoll_event {
        events: libc::EPOLLIN as u32,
        u64: fd as u64,
    };
    let op = if add {
        libc::EPOLL_CTL_ADD
    } else {
        libc::EPOLL_CTL_DEL
    };
    // SAFETY: both fds are open (the set is ours; the caller keeps `fd` open while the
    // handoff lives); `ev` is a live epoll_event.
    if unsafe { libc::epoll_ctl(epoll, op, fd, &mut ev) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl Handoff {
    /// A handoff of the network's `event` fd, which must stay open while it lives.
    pub fn new(event: RawFd) -> io::Result<Handoff> {
        // SAFETY: plain system calls; each fd is owned by the handoff (closed by its Drop)
        // or closed here when the next step fails.
        let stop = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if stop < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: as above.
        let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epoll < 0 {
            let e = io::Error::last_os_error();
            // SAFETY: created above, closed once.
            unsafe { libc::close(stop) };
            return Err(e);
        }
        let h = Handoff {
            state: Mutex::new(Hold::default()),
            out: AtomicBool::new(false),
            driven: AtomicU64::new(0),
            epoll,
            stop,
            event,
        };
        epoll_set(epoll, stop, true)?;
        epoll_set(epoll, event, true)?;
        Ok(h)
    }

    fn hold(&self) -> std::sync::MutexGuard<'_, Hold> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A waiter claims the network: the first takes the event fd from the thread's set
    /// (unless it is still out, released lazily: then no system call at all). Until
    /// [`Handoff::release`], the claimant must drive the network between its checks.
    pub fn claim(&self) {
        let mut h = self.hold();
        if !h.held {
            // A failure leaves the fd where it was: the thread then wakes for events too,
            // which costs time, never an event.
            let _ = epoll_set(self.epoll, self.event, false);
            h.held = true;
            self.out.store(true, Ordering::Relaxed);
        }
        h.waiters += 1;
    }

    /// [`Handoff::claim`] only if the fd is out of the thread's set already (no system
    /// call either way); whether it claimed.
    #[inline]
    pub fn claim_if_out(&self) -> bool {
        // A stale answer is harmless: the fd just went out (no claim, as before this
        // wait), or just came back (the lock below rechecks).
        self.out.load(Ordering::Relaxed) && self.claim_out()
    }

    /// [`Handoff::claim_if_out`] once the fd was seen out (every operation for
    /// [`LINGER`] after a wait: out of line, not cold).
    #[inline(never)]
    fn claim_out(&self) -> bool {
        let mut h = self.hold();
        if h.held {
            h.waiters += 1;
        }
        h.held
    }

    /// Whether the event fd is out of the thread's set (a waiter drives the network, or
    /// one did within [`LINGER`]).
    pub fn claimed(&self) -> bool {
        self.out.load(Ordering::Relaxed)
    }

    /// A wait for the network pauses for the first time, and drives the network (the
    /// caller's contract), whether or not it will claim: while the process keeps driving
    /// it so, the fd stays out of the thread's set. With the fd out this is one store;
    /// with it in (the first wait, or the first after a linger with none), the fd is taken
    /// out and released lazily at once, one system call. Only waits that drive count: the
    /// network is then served at least once per linger, or the thread takes it back.
    ///
    /// Counting only the waits that claimed let the thread take the fd back in a loop of
    /// 2-PE barriers over UCX's TCP: the PE that came second waited too briefly to claim,
    /// so from then on each arrival woke its thread, which took the core from a PE
    /// (650-13,000 wake-ups in 200,000 barriers, in about half the runs).
    #[inline]
    pub fn touch(&self) {
        if self.out.load(Ordering::Relaxed) {
            // One writer at a time in practice; a lost increment between two racing
            // threads still changes the value, which is all the thread looks for.
            let n = self.driven.load(Ordering::Relaxed);
            self.driven.store(n.wrapping_add(1), Ordering::Relaxed);
        } else {
            self.take_out();
        }
    }

    /// [`Handoff::touch`] with the fd in the thread's set.
    #[cold]
    #[inline(never)]
    fn take_out(&self) {
        self.claim();
        self.release_lazily();
    }

    /// Puts the fd back into the thread's set (under the lock, `h` its state).
    fn give_back(&self, h: &mut Hold) {
        let _ = epoll_set(self.epoll, self.event, true);
        h.held = false;
        h.linger = LINGER;
        self.out.store(false, Ordering::Relaxed);
    }

    /// The end of a claim, handing the fd back at once: the last claimant calls `rearm`
    /// (serve what is pending and arm the network so that its fd signals the next event;
    /// false if the network would not be armed) and gives the fd back. An fd given back
    /// unarmed may never signal, so the thread is then woken to drive the network until it
    /// can arm it: over `tcp;ofi_rxm` a connection's handshake keeps arming refused, and a
    /// peer's first read of a PE that had just left a wait for the launcher's barrier
    /// waited for ever (issue 30).
    pub fn release(&self, rearm: impl FnOnce() -> bool) {
        let mut h = self.hold();
        h.waiters -= 1;
        if h.waiters == 0 {
            let armed = rearm();
            self.give_back(&mut h);
            if !armed {
                self.wake();
            }
        }
    }

    /// The end of a claim, keeping the fd out of the thread's set for [`LINGER`]: a thread
    /// that waits again meanwhile (a loop of syncs) claims it with no system call, and the
    /// thread is not woken by the events that come between two waits, which the next wait
    /// serves. Past that the progress thread takes it back ([`Handoff::sleep`]), so a PE
    /// that went on computing is served [`LINGER`] to twice [`LINGER_MAX`] later. Before, each wait
    /// gave the fd back: in a loop of 2-PE barriers over UCX's TCP the peer's next message
    /// often came just after, woke the thread (1.6 context switches per barrier) and made
    /// the next wait meet it at the worker's lock: 30-40 us a barrier where OSHMEM takes 8.
    pub fn release_lazily(&self) {
        let mut h = self.hold();
        h.waiters -= 1;
        if h.waiters == 0 {
            h.releases = h.releases.wrapping_add(1);
            if h.untimed {
                // Its sleep would never end (the claim took the fd from a thread asleep
                // with it): woken once, it sleeps timed while the fd is out.
                h.untimed = false;
                self.wake();
            }
        }
    }

    /// The progress thread's sleep: until the event fd is readable while it is in the
    /// thread's set, or [`Handoff::stop`] (or a release that could not arm the network, or
    /// a lazy one while the sleep was untimed) woke it. While the fd is out the sleep is
    /// timed ([`LINGER`], growing to [`LINGER_MAX`] while the fd stays in use), and takes
    /// back an fd released lazily that long ago with no claim since: the thread then
    /// drives and arms the network before its next sleep.
    pub fn sleep(&self) -> io::Result<()> {
        let (timeout, releases, driven) = {
            let mut h = self.hold();
            // Timed while the fd is out, claimed or not: a waiter's lazy release then needs
            // no wake-up, and the thread takes the fd back on its own once the waits stop.
            h.untimed = !h.held;
            let timeout = if h.held {
                h.linger.as_millis() as i32
            } else {
                -1
            };
            (timeout, h.releases, self.driven.load(Ordering::Relaxed))
        };
        let mut ev = [libc::epoll_event { events: 0, u64: 0 }; 2];
        // SAFETY: `ev` is a valid array of 2 events; the set outlives the call.
        let r = unsafe { libc::epoll_wait(self.epoll, ev.as_mut_ptr(), 2, timeout) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        let woken = ev[..r.max(0) as usize]
            .iter()
            .any(|e| e.u64 == self.stop as u64);
        if woken {
            // Level-triggered: drained, or the thread would spin. A stop is not lost: its
            // flag is set before the write, and the thread looks at it next.
            let mut buf = 0u64;
            // SAFETY: reads 8 bytes into a live u64 from our non-blocking eventfd.
            unsafe { libc::read(self.stop, (&mut buf as *mut u64).cast(), 8) };
        }
        let mut h = self.hold();
        h.untimed = false;
        if r == 0 && timeout >= 0 && h.held {
            if h.waiters == 0
                && h.releases == releases
                && self.driven.load(Ordering::Relaxed) == driven
            {
                // A timed sleep that ran its course with no claim ended meanwhile, none
                // held and no wait driving: the last wait was at least that long ago.
                self.give_back(&mut h);
            } else {
                h.linger = (h.linger * 2).min(LINGER_MAX);
            }
        }
        Ok(())
    }

    /// Wakes the progress thread for good (it then sees its stop flag, set before).
    pub fn stop(&self) {
        self.wake();
    }

    /// Ends the progress thread's current or next sleep.
    fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our eventfd. A full counter (never
        // reached) would only mean a wake-up is pending already.
        unsafe { libc::write(self.stop, (&one as *const u64).cast(), 8) };
    }

    /// A claimant's nap: until the event fd is readable or `timeout` passes; true if an
    /// event ended it. The network must be armed first.
    pub fn nap(&self, timeout: Duration) -> bool {
        let mut fd = libc::pollfd {
            fd: self.event,
            events: libc::POLLIN,
            revents: 0,
        };
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: one valid pollfd on an open fd; a null signal mask keeps the thread's.
        let r = unsafe { libc::ppoll(&mut fd, 1, &ts, std::ptr::null()) };
        r > 0
    }
}

/// A network service whose event fd a [`Handoff`] passes between its progress thread and
/// the threads that wait ([`claim`]).
pub trait Service {
    /// Drives the service once, unless another thread is driving it; true if work was found.
    fn serve(&self) -> bool;
    /// Serves what is pending and arms the event fd (the last claimant, before the fd goes
    /// back to the progress thread); false if the network would not be armed (the thread
    /// is then woken to drive it).
    fn rearm(&self) -> bool;
    /// The handoff of the service's event fd.
    fn handoff(&self) -> &Handoff;
}

/// A service claimed by this thread, type-erased for the thread-local.
#[derive(Clone, Copy)]
struct Claimed {
    service: *const (),
    serve: unsafe fn(*const ()) -> bool,
}

thread_local! {
    /// The service this thread has claimed ([`claim`]), if any.
    static CLAIMED: Cell<Option<Claimed>> = const { Cell::new(None) };
}

/// # Safety
/// `p` points to a live `S`.
unsafe fn serve_erased<S: Service>(p: *const ()) -> bool {
    // SAFETY: the caller's contract.
    unsafe { &*p.cast::<S>() }.serve()
}

/// A waiting thread's claim on a service ([`claim`]): dropping it hands the event fd back
/// to the progress thread once no other thread holds a claim.
pub struct Claim<'s, S: Service> {
    service: &'s S,
    /// The thread's previous claim (claims nest).
    outer: Option<Claimed>,
}

impl<S: Service> std::fmt::Debug for Claim<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Claim")
    }
}

/// Claims `service` for the calling thread, which waits anyway: until the claim drops, the
/// progress thread is not woken by the service's events, and the thread must drive the
/// service between its checks and nap on the fd ([`Handoff::nap`]). Meanwhile the thread's
/// waits for its own operations serve it too ([`serve_claimed`]): a peer may wait for this
/// very service to answer them.
pub fn claim<S: Service>(service: &S) -> Claim<'_, S> {
    service.handoff().claim();
    claimed_by_this_thread(service)
}

/// [`claim`] if a wait released the service lazily and the progress thread has not taken it
/// back ([`Handoff::release_lazily`]): a thread about to block on its own operations (a
/// fence, a fetch) then serves its peers meanwhile, as a wait would. Else `None`: the
/// progress thread serves them. Without it two PEs that fenced towards each other just
/// after a wait each waited for the other's service until the thread took it back
/// ([`LINGER`]): a 2-PE reduction over libfabric's tcp took 140 us instead of 80.
#[inline]
pub fn claim_if_out<S: Service>(service: &S) -> Option<Claim<'_, S>> {
    service
        .handoff()
        .claim_if_out()
        .then(|| claimed_by_this_thread(service))
}

/// Records a claim just made on `service` as this thread's.
fn claimed_by_this_thread<S: Service>(service: &S) -> Claim<'_, S> {
    let outer = CLAIMED.with(|c| {
        c.replace(Some(Claimed {
            service: (service as *const S).cast(),
            serve: serve_erased::<S>,
        }))
    });
    Claim { service, outer }
}

impl<S: Service> Claim<'_, S> {
    /// Ends the claim handing the fd back to the progress thread at once
    /// ([`Handoff::release`]), before the thread blocks elsewhere for long.
    pub fn hand_back(self) {
        let s = self.service;
        CLAIMED.with(|c| c.set(self.outer));
        std::mem::forget(self);
        s.handoff().release(|| s.rearm());
    }
}

impl<S: Service> Drop for Claim<'_, S> {
    /// The end of a wait: [`Handoff::release_lazily`].
    fn drop(&mut self) {
        CLAIMED.with(|c| c.set(self.outer));
        self.service.handoff().release_lazily();
    }
}

/// Serves the service this thread has claimed, if any (a wait for the thread's own
/// operations); true if work was found.
pub fn serve_claimed() -> bool {
    match CLAIMED.with(Cell::get) {
        // SAFETY: set by a live `Claim` of this thread, whose service outlives it; reset
        // when it drops.
        Some(c) => unsafe { (c.serve)(c.service) },
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    fn eventfd() -> RawFd {
        // SAFETY: plain system call; closed by the test.
        unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) }
    }

    fn signal(fd: RawFd) {
        let one: u64 = 1;
        // SAFETY: 8 bytes to an open eventfd.
        unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
    }

    fn drain(fd: RawFd) {
        let mut v: u64 = 0;
        // SAFETY: 8 bytes from an open nonblocking eventfd into a live u64.
        unsafe { libc::read(fd, (&mut v as *mut u64).cast(), 8) };
    }

    /// A handoff of a fresh eventfd, to share with a thread playing the progress thread.
    fn shared_handoff() -> (RawFd, Arc<Handoff>) {
        let ev = eventfd();
        (ev, Arc::new(Handoff::new(ev).unwrap()))
    }

    /// Drops the last handle on `h`, then closes its eventfd.
    fn close(ev: RawFd, h: Arc<Handoff>) {
        drop(h);
        // SAFETY: opened by `shared_handoff`, closed once, after the handoff.
        unsafe { libc::close(ev) };
    }

    /// A thread playing the progress thread: sleeps on `h` until [`stop_sleeper`]; returns
    /// how many sleeps it made.
    fn sleeper(h: &Arc<Handoff>) -> (Arc<AtomicBool>, std::thread::JoinHandle<u32>) {
        let stop = Arc::new(AtomicBool::new(false));
        let t = {
            let (h, stop) = (h.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut sleeps = 0u32;
                while !stop.load(Ordering::Acquire) {
                    h.sleep().unwrap();
                    sleeps += 1;
                }
                sleeps
            })
        };
        (stop, t)
    }

    /// Polls every `poll` until the thread has taken the fd back (10 s at most); how long
    /// that took.
    fn until_taken_back(h: &Handoff, poll: Duration) -> Duration {
        let start = Instant::now();
        while h.claimed() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "never taken back"
            );
            std::thread::sleep(poll);
        }
        start.elapsed()
    }

    /// Stops a [`sleeper`]; its count of sleeps.
    fn stop_sleeper(
        h: &Handoff,
        (stop, t): (Arc<AtomicBool>, std::thread::JoinHandle<u32>),
    ) -> u32 {
        stop.store(true, Ordering::Release);
        h.stop();
        t.join().unwrap()
    }

    #[test]
    #[cfg_attr(miri, ignore = "epoll and ppoll")]
    fn an_event_wakes_the_thread_only_while_nobody_claims_it() {
        let (ev, h) = shared_handoff();
        h.claim();
        let (tx, rx) = std::sync::mpsc::channel();
        let t = {
            let h = h.clone();
            std::thread::spawn(move || {
                // While the fd is out, the thread's sleeps are timed (LINGER) and end in
                // nothing: it never touches the network.
                loop {
                    h.sleep().unwrap();
                    if !h.claimed() {
                        break;
                    }
                }
                tx.send(()).unwrap();
            })
        };
        signal(ev);
        // Claimed: the event is the claimant's; its nap ends at once.
        let start = Instant::now();
        assert!(h.nap(Duration::from_secs(5)));
        assert!(start.elapsed() < Duration::from_secs(4));
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        // Given back with the event pending: the thread wakes.
        h.release(|| true);
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        t.join().unwrap();
        drain(ev);
        // Stop wakes a sleeping thread.
        let t = {
            let h = h.clone();
            std::thread::spawn(move || h.sleep().unwrap())
        };
        h.stop();
        t.join().unwrap();
        close(ev, h);
    }

    #[test]
    #[cfg_attr(miri, ignore = "epoll")]
    fn a_release_that_cannot_arm_wakes_the_thread_once() {
        let (ev, h) = shared_handoff();
        let (tx, rx) = std::sync::mpsc::channel();
        let t = {
            let h = h.clone();
            std::thread::spawn(move || {
                for _ in 0..2 {
                    h.sleep().unwrap();
                    tx.send(()).unwrap();
                }
            })
        };
        // Armed, nothing pending: the thread sleeps on.
        h.claim();
        h.release(|| true);
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        // Not armed: the fd may never signal, so the thread is woken to drive the network.
        h.claim();
        h.release(|| false);
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        // The wake-up was consumed: the thread's next sleep lasts.
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        h.stop();
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        t.join().unwrap();
        close(ev, h);
    }

    #[test]
    #[cfg_attr(miri, ignore = "epoll")]
    fn the_thread_takes_a_lazily_released_fd_back_and_then_wakes_for_events() {
        let (ev, h) = shared_handoff();
        let (tx, rx) = std::sync::mpsc::channel();
        let t = {
            let h = h.clone();
            std::thread::spawn(move || {
                // Until the fd is back in its set and an event came.
                loop {
                    h.sleep().unwrap();
                    if !h.claimed() && rx.try_recv().is_ok() {
                        break;
                    }
                }
            })
        };
        // The thread sleeps untimed; a claim and a lazy release wake it once, so that it
        // takes the fd back LINGER later.
        std::thread::sleep(Duration::from_millis(20));
        h.claim();
        h.release_lazily();
        assert!(h.claimed());
        assert!(until_taken_back(&h, Duration::from_micros(100)) >= LINGER);
        // Back in its set: an event ends its (untimed) sleep.
        tx.send(()).unwrap();
        signal(ev);
        t.join().unwrap();
        close(ev, h);
    }

    #[test]
    #[cfg_attr(miri, ignore = "epoll")]
    fn a_loop_of_waits_wakes_the_thread_at_most_every_linger_max() {
        let (ev, h) = shared_handoff();
        let thread = sleeper(&h);
        std::thread::sleep(Duration::from_millis(20));
        // Waits one after the other, each released lazily, for 200 ms.
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(200) {
            h.claim();
            std::thread::sleep(Duration::from_micros(50));
            h.release_lazily();
        }
        let sleeps = stop_sleeper(&h, thread);
        // One wake for the first lazy release, looks at 1, 2, then every 4 ms (timers end
        // late, never early), and the stop. Before LINGER_MAX it woke 942 times here.
        let most = 3 + (200 / LINGER_MAX.as_millis() as u32) + 2;
        assert!(
            sleeps <= most,
            "{sleeps} wakes in 200 ms of waits (at most {most})"
        );
        close(ev, h);
    }

    #[test]
    #[cfg_attr(miri, ignore = "epoll")]
    fn waits_too_short_to_claim_keep_the_fd_out() {
        let (ev, h) = shared_handoff();
        let thread = sleeper(&h);
        std::thread::sleep(Duration::from_millis(20));
        // The first wait takes the fd out of the thread's set though it never claims.
        assert!(!h.claimed());
        h.touch();
        assert!(h.claimed());
        // Waits that begin every 100 us and never claim: the fd stays out, past many
        // lingers (before, the thread took it back and woke for every arrival).
        // (A stall of this thread longer than a linger lets the thread take it back
        // legitimately: a few are tolerated.)
        let (start, mut taken_back) = (Instant::now(), 0);
        while start.elapsed() < LINGER_MAX * 25 {
            taken_back += usize::from(!h.claimed());
            h.touch();
            std::thread::sleep(Duration::from_micros(100));
        }
        assert!(
            taken_back <= 3,
            "taken back {taken_back} times while waits went on"
        );
        // Once they stop, the thread takes it back.
        until_taken_back(&h, Duration::from_millis(1));
        stop_sleeper(&h, thread);
        close(ev, h);
    }

    struct Counting {
        handoff: Handoff,
        served: Cell<u32>,
        rearmed: Cell<u32>,
    }

    impl Service for Counting {
        fn serve(&self) -> bool {
            self.served.set(self.served.get() + 1);
            true
        }
        fn rearm(&self) -> bool {
            self.rearmed.set(self.rearmed.get() + 1);
            true
        }
        fn handoff(&self) -> &Handoff {
            &self.handoff
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "epoll")]
    fn a_claim_serves_its_thread_and_the_last_hand_back_rearms() {
        let ev = eventfd();
        let s = Counting {
            handoff: Handoff::new(ev).unwrap(),
            served: Cell::new(0),
            rearmed: Cell::new(0),
        };
        assert!(!serve_claimed(), "nothing claimed yet");
        {
            let outer = claim(&s);
            {
                let _inner = claim(&s);
                assert!(serve_claimed());
            }
            assert_eq!(s.rearmed.get(), 0, "a claim is still held");
            assert!(serve_claimed(), "the outer claim is this thread's again");
            outer.hand_back();
        }
        assert_eq!((s.served.get(), s.rearmed.get()), (2, 1));
        assert!(!serve_claimed());
        assert!(!s.handoff.claimed(), "handed back at once");
        // A claim that drops is released lazily: the fd stays out, with no rearm, until
        // the progress thread takes it back.
        drop(claim(&s));
        assert!(!serve_claimed());
        assert!(s.handoff.claimed());
        assert_eq!(s.rearmed.get(), 1);
        drop(s);
        // SAFETY: opened above, closed once.
        unsafe { libc::close(ev) };
    }

    #[test]
    #[cfg_attr(miri, ignore = "epoll")]
    fn only_the_last_claimant_rearms() {
        let ev = eventfd();
        let h = Handoff::new(ev).unwrap();
        let mut rearmed = 0;
        h.claim();
        h.claim();
        h.release(|| {
            rearmed += 1;
            true
        });
        assert_eq!(rearmed, 0);
        h.release(|| {
            rearmed += 1;
            true
        });
        assert_eq!(rearmed, 1);
        drop(h);
        // SAFETY: opened above, closed once.
        unsafe { libc::close(ev) };
    }
}
