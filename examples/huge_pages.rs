//! What huge pages are worth to the solvers' random accesses, and what
//! moving an array onto them costs (BENCHMARKS.md, "Huge pages").
//!
//! `cargo run --release --example huge_pages -- 6`
//!
//! Writes an array of that many GiB on 4 KiB pages, times random
//! compare-and-swaps on it (each prefetched 16 updates ahead, as the
//! solvers do), asks the kernel to move it onto huge pages in one
//! `MADV_COLLAPSE` call and times them again; then the same with a fresh
//! array asked for on huge pages from the start. It prints the share of
//! the process's memory on huge pages each time: only those figures say
//! what was compared. With little free memory one call moves only part of a
//! large array, which is why the library's `memory::collapse` moves it in
//! pieces, each tried again after a pause. Linux 6.1 on, x86-64.

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
use std::time::Instant;

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
use memmap2::MmapMut;

/// `MADV_COLLAPSE` of `<linux/mman.h>`.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
const MADV_COLLAPSE: libc::c_int = 25;
/// Updates in flight, as `memory::LAG` in the library.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
const LAG: usize = 16;

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
fn main() {
    eprintln!("huge_pages: Linux on x86-64 only");
    std::process::exit(2);
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn main() {
    let Some(gib) = std::env::args()
        .nth(1)
        .and_then(|a| a.parse::<usize>().ok())
        .filter(|&g| g > 0)
    else {
        eprintln!("usage: huge_pages GIB (the array's size, at least 1)");
        std::process::exit(2);
    };
    let len = gib << 30;
    let mut small = written(len, libc::MADV_NOHUGEPAGE, "4 KiB pages");
    println!("random updates: {:.1} ns each", random_updates(&mut small));
    let took = Instant::now();
    // SAFETY: advice on the map's own range; MADV_COLLAPSE copies pages
    // and keeps every byte.
    let whole = unsafe {
        libc::madvise(small.as_mut_ptr().cast(), len, libc::MADV_HUGEPAGE);
        libc::madvise(small.as_mut_ptr().cast(), len, MADV_COLLAPSE) == 0
    };
    println!(
        "one MADV_COLLAPSE: {} in {:.2} s; {}",
        if whole { "done" } else { "refused in part" },
        took.elapsed().as_secs_f64(),
        shares()
    );
    println!("random updates: {:.1} ns each", random_updates(&mut small));
    drop(small);
    let mut huge = written(len, libc::MADV_HUGEPAGE, "huge pages asked for");
    println!("random updates: {:.1} ns each", random_updates(&mut huge));
}

/// A fresh array of `len` bytes, advised `advice` and then written whole.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn written(len: usize, advice: libc::c_int, what: &str) -> MmapMut {
    let mut map = MmapMut::map_anon(len).unwrap_or_else(|e| {
        eprintln!("huge_pages: {len} bytes: {e}");
        std::process::exit(2);
    });
    // SAFETY: advice on the map's own range changes no byte of it.
    unsafe { libc::madvise(map.as_mut_ptr().cast(), len, advice) };
    let took = Instant::now();
    map.fill(1);
    println!(
        "written on {what} in {:.2} s; {}",
        took.elapsed().as_secs_f64(),
        shares()
    );
    map
}

/// The process's anonymous memory and its share on huge pages.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn shares() -> String {
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    let kb = |key: &str| -> f64 {
        let line = rollup.lines().find(|l| l.starts_with(key));
        let number = line.and_then(|l| l[key.len()..].split_whitespace().next());
        number.and_then(|n| n.parse().ok()).unwrap_or(0.0)
    };
    let (anon, huge) = (kb("Anonymous:"), kb("AnonHugePages:"));
    format!(
        "{:.2} GB anonymous, {:.0} % on huge pages",
        anon * 1024.0 / 1e9,
        100.0 * huge / anon.max(1.0)
    )
}

/// Nanoseconds per random compare-and-swap on `bytes` (100 M of them, from
/// a fixed xorshift sequence).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn random_updates(bytes: &mut [u8]) -> f64 {
    // SAFETY: AtomicU8 has the layout of u8; the unique borrow is this one.
    let cells = unsafe { &*(bytes as *mut [u8] as *const [AtomicU8]) };
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut ring = [0usize; LAG];
    const UPDATES: usize = 100_000_000;
    let took = Instant::now();
    for k in 0..UPDATES {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let i = (x % cells.len() as u64) as usize;
        // SAFETY: a prefetch is a hint and never faults.
        unsafe {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            _mm_prefetch::<_MM_HINT_T0>(cells.as_ptr().add(i).cast());
        }
        let cell = &cells[std::mem::replace(&mut ring[k % LAG], i)];
        let c = cell.load(Relaxed);
        let _ = cell.compare_exchange(c, c.wrapping_add(1), Relaxed, Relaxed);
    }
    took.elapsed().as_secs_f64() * 1e9 / UPDATES as f64
}
