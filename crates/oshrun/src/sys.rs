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

/// Makes the child run only on `cpus` (sched_setaffinity between fork and exec, so the
/// program and every thread it starts inherit the binding). CPUs beyond the kernel's
/// fixed set size are left out.
pub fn bind_child(cmd: &mut Command, cpus: &[usize]) {
    // SAFETY: cpu_set_t is plain bits (all zero is a valid empty set); CPU_SET writes
    // the bit of a CPU below CPU_SETSIZE.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(c, &mut set);
        }
        set
    };
    let setup = move || -> io::Result<()> {
        // SAFETY: sched_setaffinity is an async-signal-safe syscall reading `set`, which
        // lives in this closure.
        let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    };
    // SAFETY: `setup` makes one async-signal-safe call and does not allocate.
    unsafe {
        cmd.pre_exec(setup);
    }
}

/// Whether the other end of the connected socket `fd` is still open with nothing left to
/// read: some process holds it (a PE's leftover child, once the PE is gone). False at end
/// of file or when data waits to be read (the reader will get to it). A peek that
/// consumes nothing and never blocks.
pub fn peer_holds_open(fd: RawFd) -> bool {
    let mut b = 0u8;
    // SAFETY: recv(2) writes at most one byte into `b`, which lives across the call.
    let r = unsafe {
        libc::recv(
            fd,
            (&mut b as *mut u8).cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    r < 0
}

/// Makes oshrun the reaper of its orphaned descendants (Linux `PR_SET_CHILD_SUBREAPER`):
/// a process a PE started and left behind becomes oshrun's child, not init's, so the job can
/// end it. Elsewhere this does nothing.
pub fn become_subreaper() -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with integer arguments touches no memory of ours.
        let r = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The pids of this process's children, from `/proc` (empty where there is none).
pub fn children() -> Vec<u32> {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| parent_of(pid) == Some(me))
        .collect()
}

/// The parent pid of `pid`, from `/proc/<pid>/stat` (the command name may hold `) `).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(") ")?;
    rest.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// Reaps child `pid` if it has ended; true when it is gone (reaped now or before).
pub fn try_reap(pid: u32) -> bool {
    let Ok(p) = libc::pid_t::try_from(pid) else {
        return true;
    };
    let mut status = 0;
    // SAFETY: waitpid on one pid with a valid pointer to a local int.
    let r = unsafe { libc::waitpid(p, &mut status, libc::WNOHANG) };
    r == p || (r == -1 && io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD))
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
    fn children_are_listed_and_reaped() {
        // Reaped by try_reap below, not by Child::wait.
        #[allow(clippy::zombie_processes)]
        let c = Command::new("true").spawn().unwrap();
        let pid = c.id();
        assert!(children().contains(&pid));
        while !try_reap(pid) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(!children().contains(&pid));
    }

    #[test]
    fn signal_a_child() {
        let mut c = Command::new("sleep").arg("10").spawn().unwrap();
        send_signal(c.id(), libc::SIGTERM).unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(c.wait().unwrap().signal(), Some(libc::SIGTERM));
    }
}
