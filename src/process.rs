//! What the command line sets for its whole process, once: the memory
//! allocator, whose failure is one line and exit 2 like any other error,
//! and the limit on open files.

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

/// The system's allocator, but an allocation it cannot make ends the
/// process with one line on standard error and exit 2, as every error of
/// the command line does. (Rust's own handler prints a line of its own and
/// aborts, exit 134, where a limit on the process's memory, `ulimit -v`,
/// or a machine out of memory made a request fail.) The library's fallible
/// allocations (`mancaladb::reserve`, whose error names what the memory
/// was for) fail as they would without it (`mancaladb::reserving`). The
/// process ends at once, without unwinding: files being written keep
/// their temporary names, which the next run removes, and its locks go
/// with it.
pub struct ExitOnFailure;

// SAFETY: every method passes its arguments to `System` unchanged and
// returns what it returns: a null pointer only while `reserving` says a
// failed request is the caller's to handle (the `GlobalAlloc` contract
// allows null); otherwise the process ends instead.
unsafe impl GlobalAlloc for ExitOnFailure {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is `System`'s.
        checked(unsafe { System.alloc(layout) }, layout.size())
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        checked(unsafe { System.alloc_zeroed(layout) }, layout.size())
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `alloc`.
        checked(unsafe { System.realloc(ptr, layout, new_size) }, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as `alloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// `ptr`, unless it is null outside `mancaladb::reserve`: then the process
/// ends, saying that a request of `size` bytes could not be met. Nothing
/// here allocates (the line is put together on the stack and written with
/// one system call).
#[inline]
fn checked(ptr: *mut u8, size: usize) -> *mut u8 {
    if ptr.is_null() && !mancaladb::reserving() {
        out_of_memory(size);
    }
    ptr
}

/// Set by the first thread that ends the process: one line is written,
/// whichever threads find memory refused at the same moment (two did).
static ENDING: AtomicBool = AtomicBool::new(false);

#[cold]
fn out_of_memory(size: usize) -> ! {
    if ENDING.swap(true, Ordering::SeqCst) {
        // Another thread is writing the line and ending the process.
        loop {
            // SAFETY: pause(2) only waits for a signal.
            unsafe { libc::pause() };
        }
    }
    let mut line = Line {
        bytes: [0; 160],
        len: 0,
    };
    let _ = writeln!(
        line,
        "mancaladb: out of memory: a request of {size} bytes could not be met"
    );
    // SAFETY: write(2) and _exit(2) take plain values; `line.bytes` holds
    // `line.len` bytes.
    unsafe {
        libc::write(2, line.bytes.as_ptr().cast(), line.len);
        libc::_exit(2)
    }
}

/// A line of text on the stack.
struct Line {
    bytes: [u8; 160],
    len: usize,
}

impl std::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > self.bytes.len() {
            return Err(std::fmt::Error);
        }
        self.bytes[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// The most open files [`raise_open_files`] asks for: a server's 65,536
/// connections beside 256 files of its own (a build needs about a hundred).
pub const MOST_OPEN_FILES: u64 = 65_536 + 256;

/// Raises this process's limit on open files (the soft one) to its hard
/// limit, [`MOST_OPEN_FILES`] at most: a soft limit of 1,024 (or, set by
/// hand, 20) is common, and a build keeps a level's seed lists open, a
/// server its connections. Returns the soft limit in effect.
pub fn raise_open_files() -> u64 {
    let most = MOST_OPEN_FILES;
    let mut limit = libc::rlimit {
        rlim_cur: 1024,
        rlim_max: 1024,
    };
    // SAFETY: getrlimit and setrlimit read and write the struct they are
    // given, nothing else.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max.min(most as libc::rlim_t),
                rlim_max: limit.rlim_max,
            };
            if raised.rlim_cur > limit.rlim_cur
                && libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0
            {
                limit = raised;
            }
        }
    }
    #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every target
    let soft = limit.rlim_cur as u64;
    soft
}
