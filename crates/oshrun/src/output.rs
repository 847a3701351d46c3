//! Merges the PEs' stdout and stderr onto oshrun's, a whole line at a time.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::thread::{self, JoinHandle};

/// Longest piece written in one go: a longer "line" is split here rather than buffered
/// without bound.
const MAX_CHUNK: usize = 1 << 20;

/// Which of oshrun's streams a PE stream goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    /// oshrun's stdout.
    Stdout,
    /// oshrun's stderr.
    Stderr,
}

impl Sink {
    /// Writes `data` as one unit: std's stdout/stderr locks keep other threads' lines out.
    fn write_unit(self, data: &[u8]) -> io::Result<()> {
        match self {
            Sink::Stdout => {
                let mut o = io::stdout().lock();
                o.write_all(data)?;
                o.flush()
            }
            Sink::Stderr => {
                let mut e = io::stderr().lock();
                e.write_all(data)?;
                e.flush()
            }
        }
    }
}

/// Copies `src` to `sink` line by line in a new thread, prefixing `[rank] ` when `tag` is
/// set and completing a last line that lacks its newline. When writing fails (oshrun's
/// own output is gone) `on_broken` is called once and the rest is read and dropped, so the
/// PE never blocks on a full pipe. The thread ends at end of file of `src`.
pub fn forward(
    rank: usize,
    src: impl Read + Send + 'static,
    sink: Sink,
    tag: bool,
    on_broken: impl FnOnce() + Send + 'static,
) -> io::Result<JoinHandle<()>> {
    let name = match sink {
        Sink::Stdout => format!("out-{rank}"),
        Sink::Stderr => format!("err-{rank}"),
    };
    thread::Builder::new().name(name).spawn(move || {
        let prefix = if tag {
            format!("[{rank}] ").into_bytes()
        } else {
            Vec::new()
        };
        let mut on_broken = Some(on_broken);
        let mut r = BufReader::new(src);
        let mut line = prefix.clone();
        loop {
            line.truncate(prefix.len());
            match r
                .by_ref()
                .take(MAX_CHUNK as u64)
                .read_until(b'\n', &mut line)
            {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
            if line.last() != Some(&b'\n') {
                line.push(b'\n');
            }
            if on_broken.is_some() && sink.write_unit(&line).is_err() {
                if let Some(f) = on_broken.take() {
                    f();
                }
            }
        }
    })
}

/// Prints one of oshrun's own messages on stderr (errors ignored: there is nowhere else).
pub fn report(msg: &str) {
    let _ = Sink::Stderr.write_unit(format!("oshrun: {msg}\n").as_bytes());
}

/// Prints a line a PE handed to oshrun (a fatal error's report) on stderr, as it is.
pub fn report_pe_line(line: &str) {
    let _ = Sink::Stderr.write_unit(format!("{line}\n").as_bytes());
}
