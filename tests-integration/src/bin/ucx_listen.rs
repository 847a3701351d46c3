//! Issue 26, item 11: prints the TCP sockets this PE listens on after `shmem_init`, one
//! `listen pe=<me> <address>:<port>` line each (from `/proc/self/fd` and
//! `/proc/net/tcp{,6}`), then `ok ucx_listen pe=<me>`.

use std::collections::BTreeSet;

use rshmem::Shmem;

/// The inodes of this process's sockets.
fn socket_inodes() -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    for e in std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .flatten()
    {
        if let Ok(link) = std::fs::read_link(e.path()) {
            let l = link.to_string_lossy();
            if let Some(n) = l.strip_prefix("socket:[").and_then(|r| r.strip_suffix(']')) {
                out.extend(n.parse::<u64>().ok());
            }
        }
    }
    out
}

/// `/proc/net/tcp` addresses (hex, host byte order per 32-bit word) as text.
fn address(hex: &str) -> String {
    let (ip, port) = hex.split_once(':').expect("address:port");
    let port = u16::from_str_radix(port, 16).expect("port");
    let words: Vec<u32> = (0..ip.len() / 8)
        .map(|i| u32::from_str_radix(&ip[8 * i..8 * i + 8], 16).expect("hex"))
        .collect();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let ip = match bytes.len() {
        4 => std::net::IpAddr::from([bytes[0], bytes[1], bytes[2], bytes[3]]),
        _ => {
            let b: [u8; 16] = bytes.try_into().expect("16 bytes");
            std::net::IpAddr::from(b)
        }
    };
    format!("{ip}:{port}")
}

fn main() -> rshmem::Result<()> {
    let shmem = Shmem::init()?;
    let me = shmem.my_pe();
    shmem.barrier_all();
    let mine = socket_inodes();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // local_address, st (0A = LISTEN), inode
            if f.len() > 9 && f[3] == "0A" && f[9].parse().is_ok_and(|i: u64| mine.contains(&i)) {
                println!("listen pe={me} {}", address(f[1]));
            }
        }
    }
    shmem.barrier_all();
    println!("ok ucx_listen pe={me}");
    Ok(())
}
