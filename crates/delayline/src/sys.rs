//! The few Linux syscalls the delay line needs, wrapped.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid out-pointer; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Die with the parent (the live engine), and sleep with ns precision.
pub fn set_process_options() -> io::Result<()> {
    // SAFETY: plain prctl calls with integer arguments.
    unsafe {
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0))?;
        check(libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0))?;
    }
    Ok(())
}

/// Best effort: a modest real-time priority, so that other work on a
/// busy machine does not delay packets (the loop always blocks in ppoll,
/// and the kernel's RT throttling bounds it anyway). Returns whether set.
pub fn try_realtime_priority() -> bool {
    let param = libc::sched_param { sched_priority: 10 };
    // SAFETY: pid 0 is this process; param is a valid pointer.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

/// Creates (and owns: it disappears when we exit) a TUN device without
/// packet-information header, non-blocking. With `gso`, every packet read
/// or written starts with a virtio-net header (vnet.rs) and the device
/// takes checksum and TCP segmentation offload, so that the kernel hands
/// over whole GSO super-packets: `TUNSETOFFLOAD` turns the device's
/// NETIF_F_HW_CSUM / TSO / TSO6 / TSO_ECN features on (off by default on a
/// TUN device, which is why the kernel otherwise segments every GSO packet
/// in software before queueing it to us).
pub fn open_tun(name: &str, gso: bool) -> io::Result<OwnedFd> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "bad interface name"));
    }
    // SAFETY: constant NUL-terminated path.
    let fd = check(unsafe { libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) })?;
    // SAFETY: fd was just opened and is owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in ifr.ifr_name.iter_mut().zip(name.bytes()) {
        *dst = src as libc::c_char;
    }
    let vnet = if gso { libc::IFF_VNET_HDR } else { 0 };
    ifr.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI | vnet) as libc::c_short;
    // SAFETY: TUNSETIFF takes a pointer to an ifreq.
    check(unsafe { libc::ioctl(owned.as_raw_fd(), libc::TUNSETIFF, &mut ifr) })?;
    if gso {
        let header_len = crate::vnet::HEADER_LEN as libc::c_int;
        // SAFETY: TUNSETVNETHDRSZ takes a pointer to an int.
        check(unsafe { libc::ioctl(owned.as_raw_fd(), libc::TUNSETVNETHDRSZ, &header_len) })?;
        let offloads = libc::TUN_F_CSUM | libc::TUN_F_TSO4 | libc::TUN_F_TSO6 | libc::TUN_F_TSO_ECN;
        // SAFETY: TUNSETOFFLOAD takes the flags by value.
        check(unsafe { libc::ioctl(owned.as_raw_fd(), libc::TUNSETOFFLOAD, offloads as libc::c_ulong) })?;
    }
    Ok(owned)
}

/// A signalfd for SIGTERM and SIGINT (blocked for normal delivery).
pub fn termination_signals() -> io::Result<OwnedFd> {
    // SAFETY: sigset manipulation on a local, then sigprocmask/signalfd.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        check(libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()))?;
        let fd = check(libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK))?;
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

/// Waits until one of `fds` is readable or `timeout_ns` passes (None:
/// forever). Returns the readable flags per fd.
pub fn wait_readable(fds: &[RawFd], timeout_ns: Option<u64>) -> io::Result<Vec<bool>> {
    let mut pfds: Vec<libc::pollfd> = fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
    let ts = timeout_ns.map(|ns| libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    });
    let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: pfds and ts outlive the call.
    let ret = unsafe { libc::ppoll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, ts_ptr, std::ptr::null()) };
    if ret < 0 {
        let err = io::Error::last_os_error();
        if err.kind() == io::ErrorKind::Interrupted {
            return Ok(vec![false; fds.len()]);
        }
        return Err(err);
    }
    Ok(pfds.iter().map(|p| p.revents & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0).collect())
}

/// read(2); Ok(None) when nothing is ready.
pub fn read_nonblocking(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: buf is valid for buf.len() bytes.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let err = io::Error::last_os_error();
        return match err.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(err),
        };
    }
    Ok(Some(n as usize))
}

pub fn write_packet(fd: RawFd, packet: &[u8]) -> io::Result<()> {
    // SAFETY: packet is valid for its length.
    let n = unsafe { libc::write(fd, packet.as_ptr().cast(), packet.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we were given.
    unsafe {
        let flags = check(libc::fcntl(fd, libc::F_GETFL))?;
        check(libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK))?;
    }
    Ok(())
}
