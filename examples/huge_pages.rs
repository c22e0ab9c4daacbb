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

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::time::Instant;

/// `MADV_COLLAPSE` of `<linux/mman.h>`.
const MADV_COLLAPSE: libc::c_int = 25;
/// Updates in flight, as `memory::LAG` in the library.
const LAG: usize = 16;

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
    let small = written(len, libc::MADV_NOHUGEPAGE, "4 KiB pages");
    println!("random updates: {:.1} ns each", random_updates(small));
    // SAFETY: advice on the map's own range; MADV_COLLAPSE copies pages
    // and keeps every byte.
    let (whole, took) = unsafe {
        let map = small.as_mut_ptr().cast();
        libc::madvise(map, len, libc::MADV_HUGEPAGE);
        let took = Instant::now();
        (libc::madvise(map, len, MADV_COLLAPSE) == 0, took)
    };
    println!(
        "one MADV_COLLAPSE: {} in {:.2} s; {}",
        if whole { "done" } else { "refused in part" },
        took.elapsed().as_secs_f64(),
        shares()
    );
    println!("random updates: {:.1} ns each", random_updates(small));
    // SAFETY: the map is `len` bytes from its start, and unused from here.
    unsafe { libc::munmap(small.as_mut_ptr().cast(), len) };
    let huge = written(len, libc::MADV_HUGEPAGE, "huge pages asked for");
    println!("random updates: {:.1} ns each", random_updates(huge));
}

/// A fresh array of `len` bytes, advised `advice` and then written whole.
fn written(len: usize, advice: libc::c_int, what: &str) -> &'static mut [u8] {
    // SAFETY: a fresh private anonymous map, checked below.
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if map == libc::MAP_FAILED {
        eprintln!(
            "huge_pages: {len} bytes: {}",
            std::io::Error::last_os_error()
        );
        std::process::exit(2);
    }
    // SAFETY: advice on the map's own range changes no byte of it; the
    // map is `len` zeroed bytes that only the returned slice touches.
    let array = unsafe {
        libc::madvise(map, len, advice);
        std::slice::from_raw_parts_mut(map.cast::<u8>(), len)
    };
    let took = Instant::now();
    array.fill(1);
    println!(
        "written on {what} in {:.2} s; {}",
        took.elapsed().as_secs_f64(),
        shares()
    );
    array
}

/// The process's anonymous memory and its share on huge pages.
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
