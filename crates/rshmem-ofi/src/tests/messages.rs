//! Two-sided messages.

use super::*;

#[test]
fn messages_arrive_whole_and_in_order_per_sender() {
    let _w = watchdog("messages_arrive_whole_and_in_order_per_sender", 60);
    each_provider(|ofi, p| {
        if !ofi.ordered_messages() {
            eprintln!("skipped {p}: no ordered messages");
            return;
        }
        let target = open(p).unwrap();
        let service = target.endpoint_with_wait_fd().unwrap();
        // (sender, sequence) of each message, in the order handled.
        let got = Arc::new(std::sync::Mutex::new(Vec::<(u8, u32)>::new()));
        let g = got.clone();
        service
            .receive_messages(
                4,
                1024,
                Box::new(move |a: Arrival| {
                    let Arrival::Message(m) = a else {
                        panic!("{a:?}: only messages were sent")
                    };
                    let seq = u32::from_ne_bytes(m[1..5].try_into().unwrap());
                    assert_eq!(m.len(), len_of(seq), "a whole message");
                    assert!(m[5..].iter().all(|&b| b == m[0] ^ seq as u8), "its bytes");
                    g.lock().unwrap().push((m[0], seq));
                }),
            )
            .unwrap();
        assert!(service.receive_messages(1, 8, Box::new(|_| {})).is_err());
        let pt = ProgressThread::start(service.progress_handle()).unwrap();
        let name = service.name().unwrap();
        const N: u32 = 500;
        // Injected and not: tcp;ofi_rxm injects up to 64 bytes.
        fn len_of(seq: u32) -> usize {
            [40, 64, 65, 300, 1000][seq as usize % 5]
        }
        let senders: Vec<_> = (0..2u8)
            .map(|who| {
                let ofi = ofi.clone();
                let name = name.clone();
                std::thread::spawn(move || {
                    let ep = ofi.endpoint().unwrap();
                    let peer = ofi.insert(&name).unwrap();
                    for seq in 0..N {
                        let mut m = vec![who ^ seq as u8; len_of(seq)];
                        m[0] = who;
                        m[1..5].copy_from_slice(&seq.to_ne_bytes());
                        ep.send_message(&m, peer).unwrap();
                    }
                    ep.quiet().unwrap();
                    let too_long = vec![0u8; Endpoint::MESSAGE_MAX + 1];
                    assert!(ep.send_message(&too_long, peer).is_err());
                })
            })
            .collect();
        for s in senders {
            s.join().unwrap();
        }
        let start = Instant::now();
        while got.lock().unwrap().len() < 2 * N as usize {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{p}: messages lost"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let got = got.lock().unwrap();
        for who in 0..2u8 {
            let seqs: Vec<u32> = got.iter().filter(|m| m.0 == who).map(|m| m.1).collect();
            assert_eq!(
                seqs,
                (0..N).collect::<Vec<_>>(),
                "{p}: sender {who} in order"
            );
        }
        drop(got);
        pt.stop().unwrap();
    });
}

#[test]
fn writes_hand_their_data_to_the_target_once_their_bytes_are_in_place() {
    let _w = watchdog(
        "writes_hand_their_data_to_the_target_once_their_bytes_are_in_place",
        120,
    );
    each_provider(|ofi, p| {
        if !ofi.ordered_messages() || !ofi.writes_with_data() {
            eprintln!("skipped {p}: no ordered messages or no data with writes");
            return;
        }
        // Injected, bounced and in-place writes, each to its own range.
        const SIZES: [usize; 7] = [8, 64, 65, 1000, 16 << 10, 64 << 10, 1 << 20];
        const ROUNDS: usize = 3;
        const TAG: u64 = 0xfeed << 48;
        let place = |i: usize| -> (usize, usize) {
            let per_round: usize = SIZES.iter().sum();
            let at = (i / SIZES.len()) * per_round + SIZES[..i % SIZES.len()].iter().sum::<usize>();
            (at, SIZES[i % SIZES.len()])
        };
        let fill = |i: usize| (i as u8) ^ 0x5a;
        let n = SIZES.len() * ROUNDS;
        let target = open(p).unwrap();
        let heap = Arc::new(Mmap::new(4 * MIB));
        let service = target.endpoint_with_wait_fd().unwrap();
        let region = service.register(heap.ptr, heap.len).unwrap();
        // The write index of each data, in arrival order, and the messages' bytes.
        let data = Arc::new(std::sync::Mutex::new(Vec::<usize>::new()));
        let msgs = Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
        let (d, m, h) = (data.clone(), msgs.clone(), heap.clone());
        service
            .receive_messages(
                8,
                64,
                Box::new(move |a: Arrival| match a {
                    Arrival::Data(x) => {
                        assert_eq!(x & !0xffff_ffff, TAG, "all 8 bytes travel");
                        let i = (x & 0xffff_ffff) as usize;
                        let (at, len) = place(i);
                        let b = h.bytes(at, len);
                        assert!(b.iter().all(|&v| v == fill(i)), "write {i}'s bytes first");
                        d.lock().unwrap().push(i);
                    }
                    Arrival::Message(b) => m.lock().unwrap().push(b[0]),
                }),
            )
            .unwrap();
        let pt = ProgressThread::start(service.progress_handle()).unwrap();
        let c = connect(
            ofi,
            &service.name().unwrap(),
            &region.remote_key().to_bytes(),
        );
        let srcs: Vec<Vec<u8>> = (0..n).map(|i| vec![fill(i); place(i).1]).collect();
        for (i, src) in srcs.iter().enumerate() {
            // SAFETY: `srcs` outlives the quiet below.
            unsafe {
                c.ep.put_with_data_nb(
                    src.as_ptr(),
                    src.len(),
                    c.peer,
                    heap.addr(place(i).0),
                    &c.key,
                    TAG | i as u64,
                )
            }
            .unwrap();
            c.ep.send_message(&[i as u8], c.peer).unwrap();
        }
        c.ep.quiet().unwrap();
        let start = Instant::now();
        while data.lock().unwrap().len() < n || msgs.lock().unwrap().len() < n {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{p}: data or messages lost ({} of {n} data, {} messages)",
                data.lock().unwrap().len(),
                msgs.lock().unwrap().len()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut got = data.lock().unwrap().clone();
        got.sort_unstable();
        assert_eq!(
            got,
            (0..n).collect::<Vec<_>>(),
            "{p}: each write's data once"
        );
        assert_eq!(
            *msgs.lock().unwrap(),
            (0..n).map(|i| i as u8).collect::<Vec<_>>(),
            "{p}: messages in order"
        );
        pt.stop().unwrap();
        drop(c);
        drop(region);
    });
}
