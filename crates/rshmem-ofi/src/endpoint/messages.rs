//! Two-sided messages: the receive slots an endpoint posts, and sends to them.

use crate::bindings as sys;
use crate::{Addr, OfiError, Result};
use std::sync::Mutex;

use super::{ArrivalHandler, Endpoint, Receiver};

impl Endpoint {
    /// The longest message [`Endpoint::send_message`] sends.
    pub const MESSAGE_MAX: usize = 4096;

    /// Receives messages from now on ([`Ofi::ordered_messages`] must hold): `slots`
    /// receive buffers of `slot` bytes are posted, and each message that arrives is handed
    /// to `handler` by whichever thread reads the completion queue (its progress), one at
    /// a time, in arrival order; so is the data of each write that carries some
    /// ([`Endpoint::put_with_data_nb`]), once its bytes are in place. Once per endpoint.
    ///
    /// [`Ofi::ordered_messages`]: crate::Ofi::ordered_messages
    pub fn receive_messages(
        &self,
        slots: usize,
        slot: usize,
        handler: ArrivalHandler,
    ) -> Result<()> {
        const R: &str = "Endpoint::receive_messages";
        if !self.inner.ofi.ordered_messages() || slots == 0 || slot == 0 {
            return Err(OfiError::InvalidArgument {
                routine: R,
                message: format!(
                    "provider {} has no ordered messages, or no slots were asked for",
                    self.inner.ofi.provider()
                ),
            });
        }
        let layout = Receiver::layout(slots, slot);
        // SAFETY: a non-zero size; freed by EpInner's Drop with the same layout.
        let bufs = unsafe { std::alloc::alloc(layout) };
        if bufs.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        let rx = Receiver {
            bufs,
            slots,
            slot,
            handler,
            reader: Mutex::new(()),
        };
        if let Err(rx) = self.inner.recv.set(rx) {
            // SAFETY: allocated above with this layout, never posted.
            unsafe { std::alloc::dealloc(rx.bufs, layout) };
            return Err(OfiError::InvalidArgument {
                routine: R,
                message: "the endpoint receives messages already".into(),
            });
        }
        let rx = self.inner.recv.get().expect("set above");
        for i in 0..slots {
            rx.post(self.ep(), self.lib(), i)?;
        }
        Ok(())
    }

    /// Sends `bytes` (at most [`Endpoint::MESSAGE_MAX`]) to the endpoint `peer`, which
    /// must receive messages ([`Endpoint::receive_messages`]) into slots that hold them;
    /// returns at once (the bytes are copied: injected, or into the bounce arena). Counted
    /// as a write: delivered once [`Endpoint::quiet`] returns. Messages of one endpoint
    /// arrive in the order sent.
    pub fn send_message(&self, bytes: &[u8], peer: Addr) -> Result<()> {
        const R: &str = "Endpoint::send_message";
        if !self.inner.ofi.ordered_messages() || bytes.len() > Self::MESSAGE_MAX {
            return Err(OfiError::InvalidArgument {
                routine: R,
                message: format!(
                    "{} bytes: provider {} sends ordered messages of at most {} bytes ({})",
                    bytes.len(),
                    self.inner.ofi.provider(),
                    Self::MESSAGE_MAX,
                    if self.inner.ofi.ordered_messages() {
                        "too long"
                    } else {
                        "it has none"
                    }
                ),
            });
        }
        let inject = bytes.len() <= self.inner.ofi.inject_size;
        let src = if inject {
            bytes.as_ptr()
        } else {
            // SAFETY: `bytes` is readable and at most MESSAGE_MAX <= BOUNCE_MAX long.
            unsafe { self.bounce(bytes.as_ptr(), bytes.len())? }
        };
        let iov = libc::iovec {
            iov_base: src.cast_mut().cast(),
            iov_len: bytes.len(),
        };
        let msg = sys::fi_msg {
            msg_iov: &iov,
            desc: std::ptr::null_mut(),
            iov_count: 1,
            addr: peer.0,
            context: std::ptr::null_mut(),
            data: 0,
        };
        let flags = if inject {
            self.inject_flags()
        } else {
            self.delivered()
        };
        // SAFETY: fi_sendmsg through the endpoint's message ops; injected bytes are copied
        // before it returns, bounced ones stay in the arena until the writes complete.
        self.issue("fi_sendmsg", &self.writes, || unsafe {
            ((*(*self.ep()).msg).sendmsg)(self.ep(), &msg, flags)
        })
    }
}
