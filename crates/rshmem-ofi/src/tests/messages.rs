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
                Box::new(move |m: &[u8]| {
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
