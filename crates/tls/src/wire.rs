//! A TCP stream that counts what crosses it, and the turns of the conversation.

use std::io::{Read, Result, Write};
use std::net::TcpStream;

/// Counts bytes each way and "round trips": how many times the client, having sent
/// something, waited for the peer's answer (a write followed by a read).
#[derive(Debug)]
pub struct Counting {
    pub inner: TcpStream,
    pub sent: u64,
    pub received: u64,
    pub turns: u32,
    last_was_write: bool,
}

impl Counting {
    pub fn new(inner: TcpStream) -> Counting {
        Counting {
            inner,
            sent: 0,
            received: 0,
            turns: 0,
            last_was_write: false,
        }
    }
}

impl Counting {
    /// The segments this end of the connection has retransmitted so far (TCP_INFO's
    /// `tcpi_total_retrans`); none where the kernel will not say.
    pub fn retransmits(&self) -> Option<u32> {
        use std::os::fd::AsRawFd;
        // SAFETY: tcp_info is plain data; getsockopt writes at most `len` bytes into it.
        let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        let rc = unsafe {
            libc::getsockopt(
                self.inner.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_INFO,
                (&mut info as *mut libc::tcp_info).cast(),
                &mut len,
            )
        };
        (rc == 0).then_some(info.tcpi_total_retrans)
    }
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let n = self.inner.read(buf)?;
        if n > 0 {
            if self.last_was_write {
                self.turns += 1;
                self.last_was_write = false;
            }
            self.received += n as u64;
        }
        Ok(n)
    }
}

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> Result<usize> {
        let n = self.inner.write(buf)?;
        if n > 0 {
            self.last_was_write = true;
            self.sent += n as u64;
        }
        Ok(n)
    }

    fn flush(&mut self) -> Result<()> {
        self.inner.flush()
    }
}

/// CPU time (user + system) of a process, in seconds, from /proc/PID/stat (clock ticks).
pub fn process_cpu(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the command: state(0) ppid(1) ... utime(11) stime(12).
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some(ticks / if hz > 0.0 { hz } else { 100.0 })
}

/// CPU time of this process (all threads), in seconds.
pub fn own_cpu() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}
