//! The operation tables of the safe API: each per-operation method is one row here, and
//! each receiver turns the rows into its methods with its own generator macro, so an
//! operation is written once however many receivers have it.
//!
//! | table | rows | receivers (generator, module) |
//! |---|---|---|
//! | [`amo_table!`] | the 14 AMOs: class, name, arguments, [`AmoOp`](rshmem_core::AmoOp), doc phrase; fetching rows name their `_nbi`/`_nbe` forms | `Ctx` (`ctx_amos!`, atomic.rs), `SymAtomic` (`sym_amos!`), `SymAtomicVec` (`vec_amos!`), `NbiScope` (`nbi_amos!`, nbi.rs), `NbeScope` (`nbe_amos!`, nbe.rs) |
//! | [`rma_table!`] | put, get, p, g, iput, iget, ibput, ibget, put_signal, signal_set, signal_add: signature, body, doc, example | `Ctx` (`ctx_rma!`, rma.rs), `Shmem` (`shmem_rma!`, rma.rs: the default context) |
//!
//! A generator gets the whole table (`$gen! { ... }`) and matches the rows it needs;
//! identifiers the bodies use (arguments, `pe`, the state and routine name) come from
//! the row, so macro hygiene lets the body see them.
//!
//! The RMA rows' examples use `ops` for the receiver: each generator puts the line that
//! makes it (`let ops = &shmem;` or a private context) at the top, so one example tests
//! every receiver.

/// The atomic memory operations, in two lists: `fetch` (return the value before; these
/// have `_nbi` and `_nbe` forms, named in the row) and `post` (return nothing).
///
/// A row: `[class] name(value arguments) = op; "verb", "after"` (and for `fetch`, `"what"
/// returned; nbi_name, nbe_name`). The doc line is `verb <target> on `pe` after`.
macro_rules! amo_table {
    ($gen:ident) => {
        $gen! {
            fetch {
                [AmoExtended] atomic_fetch() = ::rshmem_core::AmoOp::Fetch;
                    "reads", "", "the value"; atomic_fetch_nbi, atomic_fetch_nbe;
                [AmoExtended] atomic_swap(value) = ::rshmem_core::AmoOp::Swap(value);
                    "sets", " to `value`", "the old value"; atomic_swap_nbi, atomic_swap_nbe;
                [AmoStandard] atomic_compare_swap(cond, value) =
                    ::rshmem_core::AmoOp::CompareSwap { cond, value };
                    "sets", " to `value` if it equals `cond`", "the old value";
                    atomic_compare_swap_nbi, atomic_compare_swap_nbe;
                [AmoStandard] atomic_fetch_inc() = ::rshmem_core::AmoOp::Add(T::ONE);
                    "adds one to", "", "the old value"; atomic_fetch_inc_nbi, atomic_fetch_inc_nbe;
                [AmoStandard] atomic_fetch_add(value) = ::rshmem_core::AmoOp::Add(value);
                    "adds `value` to", " (wrapping)", "the old value";
                    atomic_fetch_add_nbi, atomic_fetch_add_nbe;
                [AmoBitwise] atomic_fetch_and(value) = ::rshmem_core::AmoOp::And(value);
                    "bitwise and of `value` into", "", "the old value";
                    atomic_fetch_and_nbi, atomic_fetch_and_nbe;
                [AmoBitwise] atomic_fetch_or(value) = ::rshmem_core::AmoOp::Or(value);
                    "bitwise or of `value` into", "", "the old value";
                    atomic_fetch_or_nbi, atomic_fetch_or_nbe;
                [AmoBitwise] atomic_fetch_xor(value) = ::rshmem_core::AmoOp::Xor(value);
                    "bitwise xor of `value` into", "", "the old value";
                    atomic_fetch_xor_nbi, atomic_fetch_xor_nbe;
            }
            post {
                [AmoExtended] atomic_set(value) = ::rshmem_core::AmoOp::Set(value);
                    "sets", " to `value`";
                [AmoStandard] atomic_inc() = ::rshmem_core::AmoOp::Add(T::ONE);
                    "adds one to", "";
                [AmoStandard] atomic_add(value) = ::rshmem_core::AmoOp::Add(value);
                    "adds `value` to", " (wrapping)";
                [AmoBitwise] atomic_and(value) = ::rshmem_core::AmoOp::And(value);
                    "bitwise and of `value` into", "";
                [AmoBitwise] atomic_or(value) = ::rshmem_core::AmoOp::Or(value);
                    "bitwise or of `value` into", "";
                [AmoBitwise] atomic_xor(value) = ::rshmem_core::AmoOp::Xor(value);
                    "bitwise xor of `value` into", "";
            }
        }
    };
}
pub(crate) use amo_table;

/// Blocking remote memory access and signals. A row:
///
/// ```text
/// name { doc } example { lines using `shmem` and `ops` } or example {}
/// fn name[generics](arguments) -> output = |state, routine| body;
/// ```
///
/// Every method takes the PE last (`pe: usize`); the body runs after the generator has
/// checked the thread and `pe` (`state.check(routine, pe)`); `routine` is the C name
/// (`shmem_put` or `shmem_ctx_put`).
macro_rules! rma_table {
    ($gen:ident) => {
        $gen! {
            put {
                /// copies `src` into elements `offset..offset + src.len()` of `dst` on PE
                /// `pe`. Returns when `src` may be reused; the data is delivered at the
                /// latest by the next [`quiet`](Self::quiet) of the context (or its
                /// destruction; on the default context also
                /// [`barrier_all`](crate::Shmem::barrier_all)).
            } example {
                /// let (me, n) = (shmem.my_pe(), shmem.n_pes());
                /// let dst = shmem.alloc(4, 0u64)?;
                /// ops.put(&dst, 1, &[me as u64; 3], (me + 1) % n)?; // elements 1..4 of the right neighbour
                /// ops.quiet();
                /// shmem.barrier_all();
                /// assert_eq!(dst.load(3), ((me + n - 1) % n) as u64);
                /// assert!(ops.put(&dst, 2, &[0; 3], me).is_err()); // 2..5 is out of bounds
            }
            fn [T: Remote](dst: &SymSlice<T>, offset: usize, src: &[T]) -> () =
                |st, r, pe| crate::raw::put(st.raw(), r, &dst.region, offset, src, pe);

            get {
                /// copies elements `offset..offset + dst.len()` of `src` on PE `pe` into
                /// `dst`. Returns with the data in `dst`.
            } example {
                /// let (me, n) = (shmem.my_pe(), shmem.n_pes());
                /// let src = shmem.alloc(4, me as u32)?;
                /// let mut got = [0u32; 2];
                /// ops.get(&mut got, &src, 2, (me + 1) % n)?;
                /// assert_eq!(got, [((me + 1) % n) as u32; 2]);
            }
            fn [T: Remote](dst: &mut [T], src: &SymSlice<T>, offset: usize) -> () =
                |st, r, pe| crate::raw::get(st.raw(), r, dst, &src.region, offset, pe);

            p {
                /// writes `value` to element `index` of `dst` on PE `pe`.
            } example {}
            fn [T: Remote](dst: &SymSlice<T>, index: usize, value: T) -> () =
                |st, r, pe| crate::raw::put(
                    st.raw(), r, &dst.region, index, std::slice::from_ref(&value), pe,
                );

            g {
                /// reads element `index` of `src` on PE `pe`.
            } example {
                /// let v = shmem.alloc(3, 9i16)?;
                /// assert_eq!(ops.g(&v, 2, 0)?, 9);
                /// assert!(ops.g(&v, 3, 0).is_err());
                /// assert!(ops.g(&v, 0, shmem.n_pes()).is_err()); // no such PE
            }
            fn [T: Remote](src: &SymSlice<T>, index: usize) -> T =
                |st, r, pe| crate::raw::g(st.raw(), r, &src.region, index, pe);

            iput {
                /// strided put of `nelems` elements: element `k` of the transfer goes
                /// from `src[src_start + k * src_stride]` to `dst[dst_start + k *
                /// dst_stride]` on PE `pe`. Bounds are checked for the whole extent of
                /// both sides.
            } example {
                /// let me = shmem.my_pe();
                /// let m = shmem.alloc_zeroed::<i32>(9)?; // a 3x3 matrix
                /// ops.iput(&m, 0, 4, &[1, 2, 3], 0, 1, 3, me)?; // the diagonal
                /// assert_eq!(m.to_vec(), [1, 0, 0, 0, 2, 0, 0, 0, 3]);
                /// assert!(ops.iput(&m, 1, 4, &[1, 2, 3], 0, 1, 3, me).is_err()); // 1, 5, 9: out of bounds
            }
            fn [T: Remote](
                dst: &SymSlice<T>, dst_start: usize, dst_stride: usize,
                src: &[T], src_start: usize, src_stride: usize, nelems: usize,
            ) -> () = |st, r, pe| crate::raw::iput(
                st.raw(), r,
                &dst.region, crate::raw::Strided { start: dst_start, stride: dst_stride },
                src, crate::raw::Strided { start: src_start, stride: src_stride },
                nelems, pe,
            );

            iget {
                /// strided get of `nelems` elements: element `k` of the transfer goes
                /// from `src[src_start + k * src_stride]` on PE `pe` to `dst[dst_start +
                /// k * dst_stride]`.
            } example {
                /// let v = shmem.alloc(6, 0u8)?;
                /// v.copy_from_local(&[0, 1, 2, 3, 4, 5]);
                /// shmem.barrier_all();
                /// let mut evens = [0u8; 3];
                /// ops.iget(&mut evens, 0, 1, &v, 0, 2, 3, 0)?;
                /// assert_eq!(evens, [0, 2, 4]);
            }
            fn [T: Remote](
                dst: &mut [T], dst_start: usize, dst_stride: usize,
                src: &SymSlice<T>, src_start: usize, src_stride: usize, nelems: usize,
            ) -> () = |st, r, pe| crate::raw::iget(
                st.raw(), r,
                dst, crate::raw::Strided { start: dst_start, stride: dst_stride },
                &src.region, crate::raw::Strided { start: src_start, stride: src_stride },
                nelems, pe,
            );

            ibput {
                /// (OpenSHMEM 1.6) blocked put of `nblocks` blocks of `bsize` elements:
                /// block `k` goes from `src[src_start + k * src_stride..][..bsize]` to
                /// `dst[dst_start + k * dst_stride..][..bsize]` on PE `pe`.
            } example {
                /// let me = shmem.my_pe();
                /// let m = shmem.alloc_zeroed::<u8>(8)?;
                /// // Two blocks of two: source blocks every 2 elements, destination blocks every 4.
                /// ops.ibput(&m, 0, 4, &[1, 2, 3, 4], 0, 2, 2, 2, me)?;
                /// assert_eq!(m.to_vec(), [1, 2, 0, 0, 3, 4, 0, 0]);
                /// assert!(ops.ibput(&m, 1, 4, &[1, 2, 3, 4], 0, 2, 4, 2, me).is_err()); // 5..9
            }
            fn [T: Remote](
                dst: &SymSlice<T>, dst_start: usize, dst_stride: usize,
                src: &[T], src_start: usize, src_stride: usize,
                bsize: usize, nblocks: usize,
            ) -> () = |st, r, pe| crate::raw::ibput(
                st.raw(), r,
                &dst.region, crate::raw::Strided { start: dst_start, stride: dst_stride },
                src, crate::raw::Strided { start: src_start, stride: src_stride },
                bsize, nblocks, pe,
            );

            ibget {
                /// (OpenSHMEM 1.6) blocked get of `nblocks` blocks of `bsize` elements:
                /// block `k` goes from `src[src_start + k * src_stride..][..bsize]` on PE
                /// `pe` to `dst[dst_start + k * dst_stride..][..bsize]`.
            } example {
                /// let v = shmem.alloc(6, 0u8)?;
                /// v.copy_from_local(&[0, 1, 2, 3, 4, 5]);
                /// shmem.barrier_all();
                /// let mut got = [0u8; 4];
                /// ops.ibget(&mut got, 0, 2, &v, 1, 3, 2, 2, 0)?; // blocks 1..3 and 4..6
                /// assert_eq!(got, [1, 2, 4, 5]);
            }
            fn [T: Remote](
                dst: &mut [T], dst_start: usize, dst_stride: usize,
                src: &SymSlice<T>, src_start: usize, src_stride: usize,
                bsize: usize, nblocks: usize,
            ) -> () = |st, r, pe| crate::raw::ibget(
                st.raw(), r,
                dst, crate::raw::Strided { start: dst_start, stride: dst_stride },
                &src.region, crate::raw::Strided { start: src_start, stride: src_stride },
                bsize, nblocks, pe,
            );

            put_signal {
                /// puts `src` into `dst[offset..]` on PE `pe`, then updates `sig` there
                /// with `op` and `signal`. The data is delivered before the signal is
                /// visible, so a PE waiting on the signal
                /// ([`Shmem::signal_wait_until`](crate::Shmem::signal_wait_until)) then
                /// finds the data in place.
            } example {
                /// use rshmem::{Cmp, SignalOp};
                /// let (me, n) = (shmem.my_pe(), shmem.n_pes());
                /// let data = shmem.alloc(4, 0u32)?;
                /// let ready = shmem.alloc_atomic(0u64)?;
                /// ops.put_signal(&data, 0, &[7, 8, 9, 10], &ready, 1, SignalOp::Add, (me + 1) % n)?;
                /// shmem.signal_wait_until(&ready, Cmp::Eq, 1)?;
                /// assert_eq!(data.to_vec(), [7, 8, 9, 10]);
            }
            fn [T: Remote](
                dst: &SymSlice<T>, offset: usize, src: &[T],
                sig: &SymAtomic<'_, u64>, signal: u64, op: SignalOp,
            ) -> () = |st, r, pe| crate::raw::put_signal(
                st.raw(), r, &dst.region, offset, src, &sig.region, signal, op, pe,
            );

            signal_set {
                /// sets the signal `sig` on PE `pe` to `signal`.
            } example {}
            fn [](sig: &SymAtomic<'_, u64>, signal: u64) -> () =
                |st, r, pe| crate::raw::signal_op(st.raw(), r, &sig.region, signal, SignalOp::Set, pe);

            signal_add {
                /// adds `signal` to the signal `sig` on PE `pe`.
            } example {
                /// use rshmem::Cmp;
                /// let n = shmem.n_pes();
                /// let sig = shmem.alloc_atomic(0u64)?;
                /// ops.signal_add(&sig, 1, 0)?;
                /// if shmem.my_pe() == 0 {
                ///     shmem.signal_wait_until(&sig, Cmp::Eq, n as u64)?;
                /// }
            }
            fn [](sig: &SymAtomic<'_, u64>, signal: u64) -> () =
                |st, r, pe| crate::raw::signal_op(st.raw(), r, &sig.region, signal, SignalOp::Add, pe);
        }
    };
}
pub(crate) use rma_table;

/// The doc example of an RMA row for one receiver: `setup` makes `ops`; a row without
/// example lines gets none.
macro_rules! rma_example {
    ($setup:literal;) => {
        ""
    };
    ($setup:literal; $($ex:literal)+) => {
        // Every line starts with a space, as the rows' `///` lines do, so rustdoc
        // unindents the block evenly.
        concat!(
            "\n ```\n let shmem = rshmem::Shmem::init()?;\n ",
            $setup,
            "\n",
            $($ex, "\n",)+
            " # Ok::<(), rshmem::Error>(())\n ```"
        )
    };
}
pub(crate) use rma_example;
