//! The few OS calls std does not offer: sending a chosen signal, and child-side setup
//! between fork and exec.

use std::io;
use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Sends `sig` to process `pid`. The caller must own `pid` as an unreaped child, so the
/// number cannot have been recycled for another process.
pub fn send_signal(pid: u32, sig: i32) -> io::Result<()> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| io::Error::from_raw_os_error(libc::ESRCH))?;
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    let r = unsafe { libc::kill(pid, sig) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Arranges for the child to inherit `fd` across exec (it is close-on-exec in oshrun, so
/// no other PE inherits it) and, on Linux, to be SIGKILLed if oshrun dies first.
pub fn inherit_fd_and_die_with_parent(cmd: &mut Command, fd: RawFd) {
    let parent = std::process::id() as libc::pid_t;
    let setup = move || -> io::Result<()> {
        // SAFETY: prctl, getppid and fcntl are async-signal-safe syscalls on integers,
        // allowed between fork and exec; `fd` is open (the parent holds it until spawn
        // returns).
        unsafe {
            #[cfg(target_os = "linux")]
            {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // oshrun may have died before prctl took effect.
                if libc::getppid() != parent {
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
            }
            #[cfg(not(target_os = "linux"))]
            let _ = parent;
            if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    };
    // SAFETY: `setup` only makes async-signal-safe calls and does not allocate (errors are
    // built from raw OS codes), as required of code running between fork and exec.
    unsafe {
        cmd.pre_exec(setup);
    }
}

/// `SIGKILL`-style name of a signal number, or `"signal N"` for unusual ones.
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGCHLD => "SIGCHLD",
        libc::SIGCONT => "SIGCONT",
        libc::SIGSTOP => "SIGSTOP",
        libc::SIGTSTP => "SIGTSTP",
        libc::SIGTTIN => "SIGTTIN",
        libc::SIGTTOU => "SIGTTOU",
        libc::SIGURG => "SIGURG",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGVTALRM => "SIGVTALRM",
        libc::SIGPROF => "SIGPROF",
        libc::SIGWINCH => "SIGWINCH",
        libc::SIGIO => "SIGIO",
        libc::SIGSYS => "SIGSYS",
        _ => return format!("signal {sig}"),
    };
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(signal_name(9), "SIGKILL");
        assert_eq!(signal_name(15), "SIGTERM");
        assert_eq!(signal_name(200), "signal 200");
    }

    #[test]
    fn signal_a_child() {
        let mut c = Command::new("sleep").arg("10").spawn().unwrap();
        send_signal(c.id(), libc::SIGTERM).unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(c.wait().unwrap().signal(), Some(libc::SIGTERM));
    }
}
