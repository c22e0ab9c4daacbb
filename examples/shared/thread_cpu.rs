//! The CPU time of the calling thread, for the examples that measure
//! loops: on a shared machine, time on the CPU holds where wall time does
//! not. It reads the thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`), which
//! the kernel brings up to date on every read; the first field of
//! `/proc/thread-self/schedstat`, read before, is brought up to date only
//! when the scheduler runs, so a loop shorter than a tick read no time at
//! all (rates of 0 or infinity).

/// Seconds this thread has run on a CPU.
pub fn seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to write; the clock id
    // is one every Linux kernel has.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
    assert!(ok, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}
