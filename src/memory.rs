//! Large working arrays on transparent huge pages, prefetching, and the
//! measure of working memory.
//!
//! The solver touches its per-position cells at random; with 4 KiB pages
//! nearly every touch of a level of hundreds of megabytes also misses the
//! TLB. Anonymous memory advised `MADV_HUGEPAGE` (2 MiB pages, where the
//! kernel allows it) removes most of those misses.
//!
//! Working memory is measured as `RssAnon` ([`rss_anon`], [`AnonPeak`]):
//! the resident anonymous pages, which excludes the page cache of the
//! memory-mapped lower levels that peak RSS (`VmHWM`) counts.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use memmap2::{Advice, MmapMut, MmapRaw};

/// Plain-data types: every bit pattern is a valid value (so all-zero bytes
/// are one, and [`HugeSlice::cast`] may reread one type's bytes as
/// another's).
///
/// # Safety
/// Implementors must be valid for every bit pattern of their size, and
/// have no drop glue.
pub unsafe trait Plain: Sized {}

/// A zero-initialised slice of `T` in anonymous, huge-page-advised memory.
pub struct HugeSlice<T: Plain> {
    /// Reached through raw pointers only (never a `&[u8]` of the whole map),
    /// so that `&[AtomicU64]` views may be written through while other
    /// threads read and write the same map.
    map: MmapRaw,
    len: usize,
    _items: PhantomData<T>,
}

impl<T: Plain> HugeSlice<T> {
    /// `len` zeroed items.
    pub fn zeroed(len: usize) -> std::io::Result<HugeSlice<T>> {
        let bytes = len
            .checked_mul(size_of::<T>())
            .ok_or(std::io::ErrorKind::OutOfMemory)?;
        let map = MmapRaw::from(MmapMut::map_anon(bytes.max(1))?);
        #[cfg(target_os = "linux")]
        let _ = map.advise(Advice::HugePage); // a hint: fine if refused
        assert!(
            map.as_ptr().cast::<T>().is_aligned(),
            "mmap is page aligned"
        );
        Ok(HugeSlice {
            map,
            len,
            _items: PhantomData,
        })
    }
}

impl<T: Plain> Deref for HugeSlice<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: the map holds len * size_of::<T>() zero-initialised or
        // since-written bytes, is aligned (pages), and any bytes are a T
        // (Plain); the pointer is the map's own, not derived from a
        // shared borrow of its bytes.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().cast::<T>(), self.len) }
    }
}

impl<T: Plain> DerefMut for HugeSlice<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.map.as_mut_ptr().cast::<T>(), self.len) }
    }
}

// SAFETY: integers are valid for every bit pattern and have no drop glue.
unsafe impl Plain for i8 {}
unsafe impl Plain for u8 {}
// SAFETY: these atomics have the bit validity of their integers and no drop
// glue.
unsafe impl Plain for std::sync::atomic::AtomicI8 {}
unsafe impl Plain for std::sync::atomic::AtomicU64 {}

/// Hints the processor to load `item` into cache; no effect on other targets.
#[inline(always)]
pub fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, even on bad addresses,
    // and this one is a valid reference anyway.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

/// How many items a [`Pipeline`] holds in flight.
pub const LAG: usize = 16;

/// Hands each item on [`LAG`] pushes after it arrived.
///
/// Whoever pushes an item prefetches what handling it will read; by the time
/// it is handled the data is in cache, and the misses of `LAG` items overlap
/// instead of stalling one by one.
pub struct Pipeline<T> {
    ring: [T; LAG],
    n: usize,
}

impl<T: Copy> Pipeline<T> {
    /// An empty pipeline (`filler` only fills unused slots).
    pub fn new(filler: T) -> Self {
        Pipeline {
            ring: [filler; LAG],
            n: 0,
        }
    }

    /// Takes `item` and hands on the one pushed `LAG` pushes ago.
    #[inline]
    pub fn push(&mut self, item: T, handle: &mut impl FnMut(T)) {
        let slot = &mut self.ring[self.n % LAG];
        if self.n >= LAG {
            handle(*slot);
        }
        *slot = item;
        self.n += 1;
    }

    /// Hands on what is still in flight, in order.
    pub fn finish(self, handle: &mut impl FnMut(T)) {
        for k in self.n.saturating_sub(LAG)..self.n {
            handle(self.ring[k % LAG]);
        }
    }
}

impl<T: Plain> HugeSlice<T> {
    /// The same memory as items of `U`, which must have the size and
    /// alignment of `T` (checked).
    pub fn cast<U: Plain>(self) -> HugeSlice<U> {
        assert!(size_of::<U>() == size_of::<T>() && align_of::<U>() == align_of::<T>());
        HugeSlice {
            map: self.map,
            len: self.len,
            _items: PhantomData,
        }
    }
}

/// Bytes viewed as atomics, for shared updates by many threads.
pub fn as_atomic(bytes: &mut [u8]) -> &[std::sync::atomic::AtomicU8] {
    // SAFETY: AtomicU8 has the size, alignment and bit validity of u8, and
    // the unique borrow guarantees no non-atomic access meanwhile.
    unsafe { &*(bytes as *mut [u8] as *const [std::sync::atomic::AtomicU8]) }
}

/// This process's anonymous resident memory (`RssAnon` of
/// `/proc/self/status`: heap and anonymous maps, not the page cache of
/// mapped files), in bytes; `None` where the kernel does not say.
pub fn rss_anon() -> Option<u64> {
    proc_number("/proc/self/status", "RssAnon:").map(|kb| kb * 1024)
}

/// Peak resident memory of this process since the last
/// [`reset_peak_rss`] (`VmHWM`), in bytes.
pub fn peak_rss() -> Option<u64> {
    proc_number("/proc/self/status", "VmHWM:").map(|kb| kb * 1024)
}

/// Starts [`peak_rss`] afresh from the present resident memory (Linux;
/// elsewhere nothing).
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The memory this process may fill, and what sets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryLimit {
    /// Bytes.
    pub bytes: u64,
    /// What sets it.
    pub set_by: SetBy,
}

/// What sets a [`MemoryLimit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetBy {
    /// The machine's memory.
    Machine,
    /// A control group's limit (a container's `--memory`, a systemd unit's
    /// `MemoryMax`), below the machine's memory: the kernel kills a process
    /// of the group that fills more, though `/proc/meminfo` shows the whole
    /// machine's.
    ControlGroup,
}

/// A size on disk or in memory as text: `42.0 GB`, or `3.5 MB` below a
/// gigabyte (a room of a few megabytes is not "0.0 GB").
pub fn bytes_text(bytes: u64) -> String {
    match bytes as f64 {
        // What would round to "1000.0 MB" is "1.0 GB".
        b if b < 999.95e6 => format!("{:.1} MB", b / 1e6),
        b => format!("{:.1} GB", b / 1e9),
    }
}

impl std::fmt::Display for MemoryLimit {
    /// "this machine has 25.3 GB", or what the control group allows.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let size = bytes_text(self.bytes);
        match self.set_by {
            SetBy::Machine => write!(f, "this machine has {size}"),
            SetBy::ControlGroup => write!(f, "this process's control group allows {size}"),
        }
    }
}

/// The memory this process may fill: the machine's (`MemTotal`), or less
/// where its control group (v2's `memory.max`, v1's
/// `memory.limit_in_bytes`, the group's own or an ancestor's) says so. The
/// processes of a machine share it; a process's own limits are
/// [`address_space_limit`].
pub fn memory_limit() -> Option<MemoryLimit> {
    let total = proc_number("/proc/meminfo", "MemTotal:")? * 1024;
    Some(MemoryLimit::lower_of(
        total,
        least_of_own_groups(|g| g.limit),
    ))
}

impl MemoryLimit {
    /// The machine's `total` bytes (its memory, or the memory available
    /// now), or a control group's `group` bytes where that is lower (v1's
    /// "no limit" is a number near 2^63).
    fn lower_of(total: u64, group: Option<u64>) -> MemoryLimit {
        match group {
            Some(limit) if limit < total => MemoryLimit {
                bytes: limit,
                set_by: SetBy::ControlGroup,
            },
            _ => MemoryLimit {
                bytes: total,
                set_by: SetBy::Machine,
            },
        }
    }
}

/// This process's own limit on its address space or its data, the lower
/// of the soft `RLIMIT_AS` and `RLIMIT_DATA` (`ulimit -v`, `ulimit -d`, as
/// batch schedulers set them), if either is set: an allocation past it
/// fails, and the process aborts. It bounds more than working memory (the
/// mapped lower levels, the threads' stacks count too), so working memory
/// past it cannot fit, but working memory under it may not either.
pub fn address_space_limit() -> Option<u64> {
    let soft = |resource| {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given, nothing else.
        let ok = unsafe { libc::getrlimit(resource, &mut limit) } == 0;
        (ok && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
    };
    [soft(libc::RLIMIT_AS), soft(libc::RLIMIT_DATA)]
        .into_iter()
        .flatten()
        .min()
}

/// The least of `of` over the control groups named in `proc_cgroup` (the
/// text of `/proc/self/cgroup`) and their ancestors that have a memory
/// limit, each file read by `read`; `None` where none has one.
fn least_of_groups(
    proc_cgroup: &str,
    read: impl Fn(&std::path::Path) -> Option<String>,
    of: fn(&GroupLimit) -> u64,
) -> Option<u64> {
    group_limits(proc_cgroup, read).iter().map(of).min()
}

/// [`least_of_groups`] of this process's control groups.
fn least_of_own_groups(of: fn(&GroupLimit) -> u64) -> Option<u64> {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    least_of_groups(&cgroup, |path| std::fs::read_to_string(path).ok(), of)
}

/// A control group's memory limit and the anonymous memory it holds.
struct GroupLimit {
    limit: u64,
    /// Bytes; 0 where its `memory.stat` does not say.
    anon: u64,
}

impl GroupLimit {
    /// What the group still lets its processes fill: its limit less its
    /// anonymous memory (its page cache is reclaimed before the kernel
    /// kills).
    fn room(&self) -> u64 {
        self.limit.saturating_sub(self.anon)
    }
}

/// The memory limits of the control group named in `proc_cgroup` and its
/// ancestors (where one is set). Inside a container the group's path may
/// not exist under its own `/sys/fs/cgroup` (the container's group is the
/// root there): the ancestors, the root included, are read too.
fn group_limits(
    proc_cgroup: &str,
    read: impl Fn(&std::path::Path) -> Option<String>,
) -> Vec<GroupLimit> {
    use std::path::Path;
    let mut limits = Vec::new();
    for line in proc_cgroup.lines() {
        // `ID:CONTROLLERS:PATH`; v2's is `0::PATH`.
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        // The limit's file and the key of the group's anonymous memory in
        // `memory.stat` (v1's `total_rss` counts its descendants too, as
        // v2's `anon` does).
        let (root, file, anon_key) = match controllers {
            "" => ("/sys/fs/cgroup", "memory.max", "anon "),
            c if c.split(',').any(|c| c == "memory") => (
                "/sys/fs/cgroup/memory",
                "memory.limit_in_bytes",
                "total_rss ",
            ),
            _ => continue,
        };
        let mut group = Some(Path::new(path.trim_start_matches('/')));
        while let Some(g) = group {
            let dir = Path::new(root).join(g);
            // "max" (v2) and v1's near-2^63 have no limit: not numbers, or
            // above the machine's memory.
            if let Some(limit) =
                read(&dir.join(file)).and_then(|text| text.trim().parse::<u64>().ok())
            {
                let anon = read(&dir.join("memory.stat"))
                    .and_then(|stat| number_after(&stat, anon_key))
                    .unwrap_or(0);
                limits.push(GroupLimit { limit, anon });
            }
            group = g.parent();
        }
    }
    limits
}

/// A number naming the running kernel, so the same for every process on
/// this machine and different on another: 64 bits of its boot id (Linux's
/// `/proc/sys/kernel/random/boot_id`, a random UUID drawn at each boot).
/// `None` where there is none to read.
pub fn machine_id() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let hex: String = text.trim().chars().filter(|&c| c != '-').take(16).collect();
    (hex.len() == 16).then(|| u64::from_str_radix(&hex, 16).ok())?
}

/// The memory this process can fill now without being killed: the
/// machine's `MemAvailable`, or its control groups' least room where that
/// is less ([`GroupLimit::room`]); `None` where `/proc/meminfo` cannot be
/// read.
fn available_memory() -> Option<MemoryLimit> {
    let machine = proc_number("/proc/meminfo", "MemAvailable:")? * 1024;
    Some(MemoryLimit::lower_of(
        machine,
        least_of_own_groups(GroupLimit::room),
    ))
}

/// An empty vector with room for `len` items, or an error of kind
/// `OutOfMemory` saying how much was asked for. A request of 64 MiB or more
/// is refused also when it is more than the memory available now
/// (`MemAvailable`, or less where this process's control group has less
/// room: its limit less its anonymous memory): Linux grants most larger
/// requests and then kills a process (this one, or another's long run) as
/// the pages are filled, where the caller wanted an error.
pub fn reserve<T>(len: usize) -> std::io::Result<Vec<T>> {
    // Smaller requests do not read `/proc`.
    const LOOKED_AT: u128 = 64 << 20;
    let bytes = (len as u128) * std::mem::size_of::<T>() as u128;
    let refuse = |why: String| std::io::Error::new(std::io::ErrorKind::OutOfMemory, why);
    if bytes >= LOOKED_AT
        && let Some(available) = available_memory()
        && bytes > available.bytes as u128
    {
        return Err(refuse(format!(
            "{bytes} bytes asked for; {} bytes of memory are available{}",
            available.bytes,
            match available.set_by {
                SetBy::Machine => "",
                SetBy::ControlGroup => " to this process's control group",
            }
        )));
    }
    let mut v = Vec::new();
    RESERVING.set(true);
    let reserved = v.try_reserve_exact(len);
    RESERVING.set(false);
    reserved.map_err(|_| refuse(format!("{bytes} bytes asked for are not to be had")))?;
    Ok(v)
}

thread_local! {
    /// Whether this thread is inside [`reserve`]'s allocation, whose
    /// failure is an error to return (a plain cell: reading it allocates
    /// nothing, so an allocator may ask).
    static RESERVING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the allocation this thread is making now is one whose failure
/// [`reserve`] turns into an error: a global allocator that ends the
/// process when memory cannot be had (the command line's) lets these fail.
pub fn reserving() -> bool {
    RESERVING.get()
}

/// This process's anonymous memory and the part of it on huge pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AnonPages {
    /// Resident anonymous memory, in bytes (`Anonymous`).
    pub anon: u64,
    /// Of it, on transparent huge pages (`AnonHugePages`), in bytes.
    pub huge: u64,
}

impl AnonPages {
    /// Working memory from which [`settle`] moves arrays onto huge pages:
    /// below it the page tables of 4 KiB pages mostly stay in cache, and
    /// they cost little (4 % in check 3 of level 22, 180 MB; BENCHMARKS,
    /// "Huge pages").
    pub const LARGE: u64 = 1 << 30;

    /// This process's, from `/proc/self/smaps_rollup`; `None` where the
    /// kernel does not say.
    pub fn now() -> Option<AnonPages> {
        AnonPages::parse(&std::fs::read_to_string("/proc/self/smaps_rollup").ok()?)
    }

    /// Whether [`settle`] moves arrays onto huge pages: the working memory
    /// is large ([`AnonPages::LARGE`]) and less than nine tenths of it is
    /// on them.
    pub fn wants_moving(&self) -> bool {
        self.anon >= AnonPages::LARGE && self.huge < self.anon / 10 * 9
    }

    /// The share on huge pages, in percent (0 without memory).
    pub fn huge_percent(&self) -> f64 {
        100.0 * self.huge as f64 / self.anon.max(1) as f64
    }

    /// The figures of a `smaps_rollup` text (in kB there).
    pub fn parse(smaps_rollup: &str) -> Option<AnonPages> {
        let bytes = |key| number_after(smaps_rollup, key).map(|kb| kb * 1024);
        Some(AnonPages {
            anon: bytes("Anonymous:")?,
            huge: bytes("AnonHugePages:")?,
        })
    }
}

/// What [`settle`] found and did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settled {
    /// The process's memory before.
    pub before: AnonPages,
    /// And after moving the array.
    pub after: AnonPages,
    /// Seconds the move took.
    pub seconds: f64,
}

/// Moves `bytes` onto huge pages ([`collapse`]) if this process's working
/// memory wants it ([`AnonPages::wants_moving`]); `None` when it did not.
/// A solver calls it on its main array once that is written whole, before
/// the random accesses begin. Other arrays stay on the pages they got
/// (check 3's queued bits, a ninth of its memory, touched later).
///
/// Moving takes direct reclaim and compaction: it may evict page cache
/// (lower levels read again from disk later), and takes seconds per GB.
pub fn settle(bytes: &[u8]) -> Option<Settled> {
    let before = AnonPages::now().filter(AnonPages::wants_moving)?;
    let took = std::time::Instant::now();
    collapse(bytes);
    Some(Settled {
        before,
        after: AnonPages::now()?,
        seconds: took.elapsed().as_secs_f64(),
    })
}

/// Asks the kernel to put `bytes` on huge pages now, copying the pages
/// that their first touches got as 4 KiB ones (`MADV_COLLAPSE`, Linux 6.1
/// on; the contents stay as they are). True if it did for every 2 MiB
/// region inside `bytes`; false where it could not (too little contiguous
/// memory, a region it does not move, an older kernel, not Linux).
///
/// In pieces of 64 MiB, each tried up to four times 50 ms apart where the
/// kernel found too little contiguous memory: one call over a whole 6 GiB
/// array moved 7 % and 66 % of it in two tries, where pieces moved all of
/// it (BENCHMARKS, "Huge pages").
pub fn collapse(bytes: &[u8]) -> bool {
    const HUGE: usize = 2 << 20;
    const PIECE: usize = 64 << 20;
    const TRIES: usize = 4;
    const PAUSE: std::time::Duration = std::time::Duration::from_millis(50);
    let at = bytes.as_ptr() as usize;
    let (start, end) = (at.next_multiple_of(HUGE), (at + bytes.len()) / HUGE * HUGE);
    if start >= end {
        return true; // no whole 2 MiB region inside
    }
    // Whether the kernel knows the advice: a call on no bytes fails only
    // if it does not.
    if madvise_collapse(start, 0).is_err() {
        return false;
    }
    let mut whole = true;
    for piece in (start..end).step_by(PIECE) {
        let len = PIECE.min(end - piece);
        let mut moved = false;
        for attempt in 0..TRIES {
            if attempt > 0 {
                std::thread::sleep(PAUSE);
            }
            match madvise_collapse(piece, len) {
                Ok(()) => moved = true,
                // A region the kernel does not move (EINVAL): trying
                // again changes nothing.
                Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {}
                // Too little contiguous memory just now (ENOMEM, EAGAIN).
                Err(_) => continue,
            }
            break;
        }
        whole &= moved;
    }
    whole
}

/// `madvise(MADV_COLLAPSE)` on `len` bytes from address `at` (within one
/// of this process's maps).
fn madvise_collapse(at: usize, len: usize) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        /// `MADV_COLLAPSE` of `<linux/mman.h>`.
        const MADV_COLLAPSE: libc::c_int = 25;
        // SAFETY: the range lies inside memory the caller borrows, and
        // MADV_COLLAPSE neither moves nor changes what it holds (the kernel
        // copies small pages into a huge one, holding off other touches of
        // the region meanwhile).
        match unsafe { libc::madvise(at as *mut libc::c_void, len, MADV_COLLAPSE) } {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (at, len);
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

/// Bytes this process has caused to be read from storage so far
/// (`read_bytes` of `/proc/self/io`: page-cache misses, of mapped files
/// too, not reads served from the cache); `None` where the kernel does
/// not say.
pub fn disk_read_bytes() -> Option<u64> {
    proc_number("/proc/self/io", "read_bytes:")
}

/// The number after `key` on its line of the Linux `/proc` file `path`;
/// `None` where there is no such file or line.
fn proc_number(path: &str, key: &str) -> Option<u64> {
    number_after(&std::fs::read_to_string(path).ok()?, key)
}

/// The number after `key` on its line of a `/proc` file's `text`.
fn number_after(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

/// The peak of [`rss_anon`] over a span of work, sampled by a background
/// thread (the kernel keeps no peak of it).
pub struct AnonPeak {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// None when the thread could not be started (a process limit).
    sampler: Option<std::thread::JoinHandle<Option<u64>>>,
}

impl AnonPeak {
    /// Starts sampling every `every` (nothing when no thread can be
    /// started: [`AnonPeak::finish`] then knows no peak).
    pub fn start(every: std::time::Duration) -> AnonPeak {
        use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let sampler = std::thread::Builder::new()
            .name("anon-peak".into())
            .spawn(move || {
                let mut peak = rss_anon();
                while !flag.load(Relaxed) {
                    std::thread::sleep(every);
                    peak = peak.max(rss_anon());
                }
                peak
            })
            .ok();
        AnonPeak { stop, sampler }
    }

    /// Stops sampling; the largest value seen (a last sample included).
    /// None when no sampler ran: a last sample alone is no peak.
    pub fn finish(self) -> Option<u64> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let peak = self.sampler?.join().unwrap_or(None);
        peak.max(rss_anon())
    }
}

#[cfg(test)]
mod tests {
    use super::{AnonPages, GroupLimit, LAG, Pipeline, bytes_text, least_of_groups};

    /// A group's limit, the quantity [`super::memory_limit`] takes the
    /// least of.
    const LIMIT: fn(&GroupLimit) -> u64 = |g| g.limit;

    /// A reader of the files `pairs` names (path, text), as the control
    /// groups' functions read `/sys/fs/cgroup`.
    fn files(
        pairs: &'static [(&'static str, &'static str)],
    ) -> impl Fn(&std::path::Path) -> Option<String> {
        move |p| {
            pairs
                .iter()
                .find(|(path, _)| std::path::Path::new(path) == p)
                .map(|(_, text)| text.to_string())
        }
    }

    /// Sizes read in MB below a gigabyte and in GB from there, never as
    /// "1000.0 MB".
    #[test]
    fn sizes_read_in_megabytes_below_a_gigabyte() {
        assert_eq!(bytes_text(0), "0.0 MB");
        assert_eq!(bytes_text(21_040_000), "21.0 MB");
        assert_eq!(bytes_text(999_949_999), "999.9 MB");
        assert_eq!(bytes_text(999_950_000), "1.0 GB");
        assert_eq!(bytes_text(683_400_000_000), "683.4 GB");
    }

    /// Control groups of both versions, a limit on the group or an
    /// ancestor, the lowest taken; none where no file has a number.
    #[test]
    fn the_lowest_limit_of_a_group_and_its_ancestors() {
        let v2 = "0::/user.slice/job.scope\n";
        let v2_files = &[
            ("/sys/fs/cgroup/user.slice/job.scope/memory.max", "max\n"),
            ("/sys/fs/cgroup/user.slice/memory.max", "8589934592\n"),
        ];
        assert_eq!(least_of_groups(v2, files(v2_files), LIMIT), Some(8 << 30));
        // v1, the memory controller beside others, the group's path absent
        // (inside a container) and the root's limit read.
        let v1 = "5:cpu,cpuacct:/x\n4:memory:/docker/abc\n1:name=systemd:/y\n";
        let v1_files = &[(
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "4294967296\n",
        )];
        assert_eq!(least_of_groups(v1, files(v1_files), LIMIT), Some(4 << 30));
        let unlimited = &[
            (
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "9223372036854771712",
            ),
            ("/sys/fs/cgroup/memory.max", "max"),
        ];
        assert_eq!(
            least_of_groups(v1, files(unlimited), LIMIT),
            Some(9223372036854771712)
        );
        assert_eq!(least_of_groups("0::/\n", files(unlimited), LIMIT), None);
        assert_eq!(least_of_groups("4:cpu:/x\n", files(v1_files), LIMIT), None);
    }

    /// The room a control group leaves is its limit less its anonymous
    /// memory (v2's `anon`, v1's `total_rss`, not their huge-page lines),
    /// the least over the group and its ancestors; a limited group whose
    /// `memory.stat` cannot be read leaves its whole limit; none without a
    /// limit.
    #[test]
    fn the_room_a_group_leaves_is_its_limit_less_its_anonymous_memory() {
        let v2 = "0::/user.slice/job.scope\n";
        let v2_files = &[
            (
                "/sys/fs/cgroup/user.slice/job.scope/memory.max",
                "4294967296\n",
            ),
            (
                "/sys/fs/cgroup/user.slice/job.scope/memory.stat",
                "anon_thp 1000\nanon 1073741824\nfile 3221225472\n",
            ),
            ("/sys/fs/cgroup/user.slice/memory.max", "8589934592\n"),
            (
                "/sys/fs/cgroup/user.slice/memory.stat",
                "anon 6442450944\nanon_thp 0\n",
            ),
        ];
        // The job's 3 GiB of room is more than its parent's 2 GiB.
        assert_eq!(
            least_of_groups(v2, files(v2_files), GroupLimit::room),
            Some(2 << 30)
        );
        let v1 = "4:memory:/helpers\n";
        let v1_files = &[
            (
                "/sys/fs/cgroup/memory/helpers/memory.limit_in_bytes",
                "1073741824\n",
            ),
            (
                "/sys/fs/cgroup/memory/helpers/memory.stat",
                "cache 900000000\nrss 1\ntotal_rss_huge 5\ntotal_rss 268435456\n",
            ),
        ];
        assert_eq!(
            least_of_groups(v1, files(v1_files), GroupLimit::room),
            Some(3 << 28)
        );
        let unread = &[(
            "/sys/fs/cgroup/memory/helpers/memory.limit_in_bytes",
            "1073741824\n",
        )];
        assert_eq!(
            least_of_groups(v1, files(unread), GroupLimit::room),
            Some(1 << 30)
        );
        // More anonymous memory than the limit (the kernel reclaims or
        // kills soon): no room, not an overflow.
        let over = &[
            (
                "/sys/fs/cgroup/memory/helpers/memory.limit_in_bytes",
                "100\n",
            ),
            (
                "/sys/fs/cgroup/memory/helpers/memory.stat",
                "total_rss 200\n",
            ),
        ];
        assert_eq!(least_of_groups(v1, files(over), GroupLimit::room), Some(0));
        assert_eq!(
            least_of_groups("0::/\n", files(&[]), GroupLimit::room),
            None
        );
    }

    /// The lines of a real `smaps_rollup` (the level-34 check 3 of the long
    /// run, before `khugepaged` had moved its arrays).
    const ROLLUP: &str = "55d0c8a2e000-7ffd3b7f9000 ---p 00000000 00:00 0  [rollup]
Rss:            13533080 kB
Pss:            13533080 kB
Pss_Anon:        9352932 kB
Anonymous:       9352932 kB
LazyFree:              0 kB
AnonHugePages:   3872768 kB
ShmemPmdMapped:        0 kB
";

    #[test]
    fn anon_pages_are_read_from_smaps_rollup() {
        let pages = AnonPages::parse(ROLLUP).unwrap();
        assert_eq!(pages.anon, 9_352_932 * 1024);
        assert_eq!(pages.huge, 3_872_768 * 1024);
        assert_eq!(format!("{:.1}", pages.huge_percent()), "41.4");
        assert!(pages.wants_moving(), "41 % of 8.9 GiB");
        let moved = AnonPages {
            huge: pages.anon / 10 * 9,
            ..pages
        };
        assert!(!moved.wants_moving(), "nine tenths are enough");
        let small = AnonPages {
            anon: AnonPages::LARGE - 1,
            huge: 0,
        };
        assert!(!small.wants_moving(), "small levels are left alone");
        assert_eq!(AnonPages::parse("Rss: 1 kB\n"), None);
    }

    /// A slice whose pages were written on 4 KiB pages keeps every byte
    /// when it is moved onto huge ones, and its own map is on them
    /// afterwards where the kernel says it moved it (Linux 6.1 on,
    /// transparent huge pages not disabled).
    #[test]
    #[cfg(target_os = "linux")]
    fn collapsing_keeps_the_contents() {
        use super::{HugeSlice, collapse};
        const LEN: usize = 16 << 20;
        let mut slice = HugeSlice::<u8>::zeroed(LEN).unwrap();
        let advise = |slice: &mut HugeSlice<u8>, advice| {
            // SAFETY: advice on the slice's own range changes no byte of it.
            unsafe { libc::madvise(slice.map.as_mut_ptr().cast(), LEN, advice) }
        };
        advise(&mut slice, libc::MADV_NOHUGEPAGE); // first touches on small pages
        for (i, b) in slice.iter_mut().enumerate() {
            *b = (i * 7 % 251) as u8;
        }
        advise(&mut slice, libc::MADV_HUGEPAGE);
        let collapsed = collapse(&slice);
        assert!(
            slice
                .iter()
                .enumerate()
                .all(|(i, &b)| b == (i * 7 % 251) as u8)
        );
        if collapsed {
            // The map holding the slice: at least its 7 whole 2 MiB regions.
            let at = slice.as_ptr() as usize;
            let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
            let (mut inside, mut huge) = (false, None);
            for line in smaps.lines() {
                let first = line.split_whitespace().next().unwrap_or("");
                if let Some((from, to)) = first.split_once('-')
                    && let (Ok(from), Ok(to)) = (
                        usize::from_str_radix(from, 16),
                        usize::from_str_radix(to, 16),
                    )
                {
                    inside = (from..to).contains(&at); // a map's first line
                } else if inside && line.starts_with("AnonHugePages:") {
                    huge = super::number_after(line, "AnonHugePages:").map(|kb| kb * 1024);
                }
            }
            let huge = huge.expect("the slice's map is listed");
            assert!(
                huge >= 14 << 20,
                "{huge} bytes on huge pages after collapsing"
            );
        }
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn this_process_has_anonymous_memory() {
        let pages = AnonPages::now().expect("Linux reports smaps_rollup");
        assert!(pages.anon > 0 && pages.huge <= pages.anon);
    }

    /// A control group's limit counts where it is below the machine's
    /// memory; v1's "no limit" (a number near 2^63) and a limit equal to
    /// the machine's leave the machine's. Each says what sets it, in GB.
    #[test]
    fn the_lower_of_the_machines_memory_and_its_groups_limit() {
        use super::{MemoryLimit, SetBy};
        let total = 24 << 30;
        let limit = |bytes, set_by| MemoryLimit { bytes, set_by };
        assert_eq!(
            MemoryLimit::lower_of(total, Some(5 << 30)),
            limit(5 << 30, SetBy::ControlGroup)
        );
        for group in [None, Some(total), Some(9_223_372_036_854_771_712)] {
            assert_eq!(
                MemoryLimit::lower_of(total, group),
                limit(total, SetBy::Machine)
            );
        }
        // What the messages of a build that does not fit say.
        assert_eq!(
            MemoryLimit::lower_of(total, Some(5 << 30)).to_string(),
            "this process's control group allows 5.4 GB"
        );
        assert_eq!(
            MemoryLimit::lower_of(total, None).to_string(),
            "this machine has 25.8 GB"
        );
        let machine = super::memory_limit().expect("Linux says MemTotal");
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
        let mem_total = super::number_after(&meminfo, "MemTotal:").unwrap() * 1024;
        assert!(
            machine.bytes <= mem_total && machine.bytes > 256 << 20,
            "{machine}"
        );
    }

    /// This process's resident memory, its peak and the peak of its
    /// anonymous memory (sampled), in bytes: 64 MiB written count in each,
    /// and a peak measured afresh after they are freed leaves them out.
    #[test]
    #[cfg(target_os = "linux")]
    fn resident_memory_and_its_peaks_are_measured_in_bytes() {
        use super::{AnonPeak, HugeSlice, peak_rss, reset_peak_rss, rss_anon};
        const LEN: usize = 64 << 20;
        let before = rss_anon().expect("Linux says RssAnon");
        let sampled = AnonPeak::start(std::time::Duration::from_millis(1));
        let mut slice = HugeSlice::<u8>::zeroed(LEN).unwrap();
        slice.iter_mut().step_by(4096).for_each(|b| *b = 1);
        assert!(
            rss_anon().unwrap() >= LEN as u64,
            "RssAnon counts the slice"
        );
        let peak = peak_rss().expect("Linux says VmHWM");
        assert!(peak >= LEN as u64, "peak RSS counts the slice");
        std::thread::sleep(std::time::Duration::from_millis(30));
        drop(slice);
        let anon_peak = sampled.finish().expect("a sampler ran");
        assert!(
            anon_peak >= before + LEN as u64 / 2,
            "{anon_peak} from {before}"
        );
        reset_peak_rss();
        // (Where the kernel lets a process reset it: a sandbox may not.)
        let resettable = std::fs::OpenOptions::new()
            .write(true)
            .open("/proc/self/clear_refs")
            .is_ok();
        assert!(
            !resettable || peak_rss().unwrap() <= peak - (LEN as u64) / 2,
            "the peak measured afresh"
        );
    }

    /// The process's own limit is the lower soft limit of its address space
    /// and its data, as `/proc/self/limits` lists them; none where both are
    /// unlimited (as in a test run, unless a scheduler set one).
    #[test]
    #[cfg(target_os = "linux")]
    fn the_address_space_limit_is_the_lower_soft_limit_listed() {
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
        let soft = |name: &str| -> Option<u64> {
            let line = limits.lines().find(|l| l.starts_with(name)).unwrap();
            line[name.len()..].split_whitespace().next()?.parse().ok()
        };
        let listed = [soft("Max address space"), soft("Max data size")]
            .into_iter()
            .flatten()
            .min();
        assert_eq!(super::address_space_limit(), listed);
    }

    /// The machine's id is 64 bits of its boot id, the same for every call.
    #[test]
    #[cfg(target_os = "linux")]
    fn the_machine_id_is_its_boot_ids_first_64_bits() {
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
        let hex: String = boot.trim().replace('-', "");
        let id = u64::from_str_radix(&hex[..16], 16).unwrap();
        assert_eq!(super::machine_id(), Some(id));
    }

    /// Bytes read from storage grow by what a direct read of a file took
    /// from the disk (where the scratch directory's file system reads
    /// directly; tmpfs does not).
    #[test]
    #[cfg(target_os = "linux")]
    fn bytes_read_from_disk_count_a_direct_read() {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let dir = crate::files::scratch_dir("memory", "direct-read");
        let path = dir.join("file");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        std::fs::File::open(&path).unwrap().sync_all().unwrap();
        let before = super::disk_read_bytes().expect("Linux says read_bytes");
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&path)
        {
            // O_DIRECT wants an aligned buffer: a page-aligned map.
            let mut buf = super::HugeSlice::<u8>::zeroed(1 << 20).unwrap();
            if f.read_exact(&mut buf).is_ok() {
                let read = super::disk_read_bytes().unwrap() - before;
                assert!(read >= 1 << 20, "{read} bytes read from disk");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A request beyond the memory available now is refused, saying so,
    /// before any allocation; one that fits has the room asked for; and
    /// outside a request the allocator is told failures are not errors.
    #[test]
    fn reserve_refuses_more_than_is_available_and_gives_what_fits() {
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
        let available = super::number_after(&meminfo, "MemAvailable:").unwrap() * 1024;
        // Twice what is available, in 8-byte items.
        let e = super::reserve::<u64>((available / 4) as usize).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::OutOfMemory);
        assert!(
            e.to_string().contains("bytes of memory are available"),
            "{e}"
        );
        for len in [1000, 64 << 20] {
            let v = super::reserve::<u8>(len).unwrap();
            assert!(v.capacity() >= len && v.is_empty());
        }
        assert!(!super::reserving());
    }

    #[test]
    fn items_come_out_lag_pushes_later_and_all_at_finish() {
        let mut seen = Vec::new();
        let mut pipeline = Pipeline::new(0);
        for k in 0..LAG + 2 {
            pipeline.push(k, &mut |k| seen.push(k));
        }
        assert_eq!(seen, [0, 1]);
        pipeline.finish(&mut |k| seen.push(k));
        assert_eq!(seen, (0..LAG + 2).collect::<Vec<_>>());
    }
}
