//! The PMI-1 "simple" wire protocol: one command per line, `cmd=<name> key=value ...\n`.
//!
//! Used by [`PmiClient`](crate::PmiClient) and by `oshrun`'s PMI server. Tokens are separated
//! by blanks; values cannot contain blanks, `=` or line breaks (the protocol has no escaping),
//! which [`check_token`] enforces on the sending side.

use std::fmt;
use std::io::{self, BufRead, Read};

/// Longest line [`read_message`] accepts (hydra's own replies stay far below this).
pub const MAX_READ_LINE: usize = 64 * 1024;

/// Longest line a PMI-1 simple peer is guaranteed to accept (`PMIU_MAXLINE` in MPICH).
pub const MAX_LINE: usize = 1024;

/// Attribute of `oshrun`'s `response_to_init` (value `1`): the launcher prints the message
/// of an `abort` itself. Other launchers (hydra) do not print it, so there the PE does.
pub const PRINTS_ABORT_MSG: &str = "rshmem_prints_abort_msg";

/// Attribute of `oshrun`'s `response_to_init` (value `1`): the launcher ends the job when a
/// PE leaves while others wait for it in a barrier, so the PE need not warn about a long
/// wait (see `RSHMEM_BOOT_WARN_SECS`).
pub const ENDS_STRANDED_JOBS: &str = "rshmem_ends_stranded_jobs";

/// A malformed line or a failure to read one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// The line was empty or blank.
    #[error("empty PMI line")]
    Empty,
    /// The line did not start with `cmd=<name>`.
    #[error("PMI line {line:?} does not start with cmd=<name>")]
    MissingCmd {
        /// The offending line.
        line: String,
    },
    /// The line exceeded [`MAX_READ_LINE`] bytes.
    #[error("PMI line longer than {max} bytes")]
    TooLong {
        /// The limit that was exceeded.
        max: usize,
    },
    /// The line was not UTF-8.
    #[error("PMI line is not valid UTF-8")]
    NotUtf8,
    /// A key or value cannot be sent in this protocol.
    #[error("PMI {what} {value:?} is invalid: {reason}")]
    BadToken {
        /// Which token (`key`, `value`, ...).
        what: &'static str,
        /// The token.
        value: String,
        /// Why it is rejected.
        reason: &'static str,
    },
    /// Reading the line failed.
    #[error("reading a PMI line: {0}")]
    Io(#[from] io::Error),
}

/// One PMI-1 command or reply: its `cmd` and its attributes, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    cmd: String,
    attrs: Vec<(String, String)>,
}

impl Message {
    /// A message `cmd=<cmd>` without attributes.
    pub fn new(cmd: &str) -> Self {
        Message {
            cmd: cmd.to_owned(),
            attrs: Vec::new(),
        }
    }

    /// Appends the attribute `key=value`.
    pub fn with(mut self, key: &str, value: impl fmt::Display) -> Self {
        self.attrs.push((key.to_owned(), value.to_string()));
        self
    }

    /// The command name (the value of `cmd=`).
    pub fn cmd(&self) -> &str {
        &self.cmd
    }

    /// The attributes after `cmd`, in wire order.
    pub fn attrs(&self) -> &[(String, String)] {
        &self.attrs
    }

    /// The value of the first attribute named `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The `rc` attribute as a number: `None` when absent, `Some(Err(text))` when not a number.
    pub fn rc(&self) -> Option<Result<i32, &str>> {
        self.get("rc").map(|v| v.parse().map_err(|_| v))
    }

    /// Parses one line (with or without its trailing newline).
    ///
    /// Lenient, as peers send free text in `msg=`/`error_msg=`: a blank-separated word
    /// without `=` (or with an empty key) is appended, after one space, to the previous
    /// attribute's value, or dropped when there is none.
    pub fn parse(line: &str) -> Result<Message, WireError> {
        let mut words = line.split_ascii_whitespace();
        let first = words.next().ok_or(WireError::Empty)?;
        let cmd = match first.split_once('=') {
            Some(("cmd", c)) if !c.is_empty() => c.to_owned(),
            _ => {
                return Err(WireError::MissingCmd {
                    line: line.trim_end().to_owned(),
                })
            }
        };
        let mut attrs: Vec<(String, String)> = Vec::new();
        for w in words {
            match w.split_once('=') {
                Some((k, v)) if !k.is_empty() => attrs.push((k.to_owned(), v.to_owned())),
                _ => {
                    if let Some((_, v)) = attrs.last_mut() {
                        v.push(' ');
                        v.push_str(w);
                    }
                }
            }
        }
        Ok(Message { cmd, attrs })
    }

    /// The wire form, terminated by `\n`.
    pub fn to_line(&self) -> String {
        let mut s = self.to_string();
        s.push('\n');
        s
    }
}

impl fmt::Display for Message {
    /// The wire form without the trailing newline.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cmd={}", self.cmd)?;
        for (k, v) in &self.attrs {
            write!(f, " {k}={v}")?;
        }
        Ok(())
    }
}

/// Checks that `value` can travel as one PMI token: non-empty, at most `max` bytes, and free
/// of whitespace, `=` and control characters. `what` names the token in the error.
pub fn check_token(what: &'static str, value: &str, max: usize) -> Result<(), WireError> {
    let reason = if value.is_empty() {
        Some("it is empty")
    } else if value.len() > max {
        Some("it is too long for the process manager")
    } else if value.contains('=') {
        Some("it contains '='")
    } else if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        Some("it contains whitespace or a control character")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(WireError::BadToken {
            what,
            value: value.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// Reads one line and parses it; `Ok(None)` at end of stream. A final line without newline
/// is still parsed.
pub fn read_message<R: BufRead>(r: &mut R) -> Result<Option<Message>, WireError> {
    let mut buf = Vec::new();
    let limit = MAX_READ_LINE as u64 + 1;
    let n = r.by_ref().take(limit).read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() != Some(&b'\n') && n as u64 == limit {
        return Err(WireError::TooLong { max: MAX_READ_LINE });
    }
    let line = std::str::from_utf8(&buf).map_err(|_| WireError::NotUtf8)?;
    Message::parse(line).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_reply() {
        let m =
            Message::parse("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n").unwrap();
        assert_eq!(m.cmd(), "response_to_init");
        assert_eq!(m.get("pmi_version"), Some("1"));
        assert_eq!(m.rc(), Some(Ok(0)));
        assert_eq!(m.get("missing"), None);
        assert_eq!(m.attrs().len(), 3);
    }

    #[test]
    fn roundtrip() {
        let m = Message::new("put")
            .with("kvsname", "kvs_1")
            .with("key", "0/addr")
            .with("value", 42);
        assert_eq!(m.to_line(), "cmd=put kvsname=kvs_1 key=0/addr value=42\n");
        assert_eq!(Message::parse(&m.to_line()).unwrap(), m);
    }

    #[test]
    fn empty_value_and_extra_blanks() {
        let m = Message::parse("  cmd=get_result   rc=-1 value=  \r\n").unwrap();
        assert_eq!(m.rc(), Some(Ok(-1)));
        assert_eq!(m.get("value"), Some(""));
    }

    #[test]
    fn free_text_joins_previous_value() {
        let m = Message::parse("cmd=abort exitcode=3 error_msg=out of memory").unwrap();
        assert_eq!(m.get("exitcode"), Some("3"));
        assert_eq!(m.get("error_msg"), Some("out of memory"));
    }

    #[test]
    fn bad_lines() {
        assert!(matches!(Message::parse(""), Err(WireError::Empty)));
        assert!(matches!(Message::parse(" \n"), Err(WireError::Empty)));
        assert!(matches!(
            Message::parse("mcmd=spawn"),
            Err(WireError::MissingCmd { .. })
        ));
        assert!(matches!(
            Message::parse("cmd= rc=0"),
            Err(WireError::MissingCmd { .. })
        ));
        assert!(matches!(
            Message::parse("hello"),
            Err(WireError::MissingCmd { .. })
        ));
        let m = Message::parse("cmd=x stray =y").unwrap();
        assert_eq!(m.attrs(), &[] as &[(String, String)]);
        assert!(m.rc().is_none());
        assert_eq!(
            Message::parse("cmd=x rc=zero").unwrap().rc(),
            Some(Err("zero"))
        );
    }

    #[test]
    fn tokens() {
        assert!(check_token("value", "abc-1/2:3", 16).is_ok());
        for bad in ["", "a b", "a=b", "a\nb", "a\tb", "abcdefghijklmnopq"] {
            assert!(check_token("value", bad, 16).is_err(), "{bad:?}");
        }
        let e = check_token("key", "a=b", 16).unwrap_err().to_string();
        assert!(e.contains("key") && e.contains("'='"), "{e}");
    }

    #[test]
    fn read_lines() {
        let data = b"cmd=barrier_out\ncmd=finalize_ack";
        let mut r = &data[..];
        assert_eq!(read_message(&mut r).unwrap().unwrap().cmd(), "barrier_out");
        assert_eq!(read_message(&mut r).unwrap().unwrap().cmd(), "finalize_ack");
        assert!(read_message(&mut r).unwrap().is_none());
    }

    #[test]
    fn read_too_long() {
        let mut data = b"cmd=x value=".to_vec();
        data.resize(MAX_READ_LINE + 10, b'a');
        data.push(b'\n');
        let mut r = &data[..];
        assert!(matches!(
            read_message(&mut r),
            Err(WireError::TooLong { .. })
        ));
        let mut bad = &b"cmd=x value=\xff\n"[..];
        assert!(matches!(read_message(&mut bad), Err(WireError::NotUtf8)));
    }
}
