//! A bounded load test of `mancaladb serve`, for `scripts/bench-serve.sh`:
//! `CLIENTS` clients on keep-alive connections send `REQUESTS` requests in
//! all (`GET /api/awari?board=...` for random positions of the given
//! levels), then it stops and prints throughput and latency percentiles.
//! Localhost only: the address must be a loopback one.
//!
//! `load_test ADDR REQUESTS CLIENTS LEVEL[,LEVEL...]`

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use mancaladb::oware::{Encoder, MAX_SEEDS, level_size};

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Sends `paths` one after another on one connection; returns each
/// request's latency.
fn client(addr: SocketAddr, paths: &[String]) -> Vec<Duration> {
    let stream = TcpStream::connect(addr).expect("connect");
    stream.set_nodelay(true).unwrap();
    let mut w = stream.try_clone().unwrap();
    let mut r = BufReader::new(stream);
    let mut line = String::new();
    let mut body = Vec::new();
    paths
        .iter()
        .map(|p| {
            let start = Instant::now();
            write!(w, "GET {p} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
            let mut len = None;
            let mut status = 0;
            loop {
                line.clear();
                r.read_line(&mut line).unwrap();
                if status == 0 {
                    status = line.split(' ').nth(1).unwrap().parse().unwrap();
                }
                let l = line.to_ascii_lowercase();
                if let Some(v) = l.strip_prefix("content-length:") {
                    len = Some(v.trim().parse::<usize>().unwrap());
                }
                if line == "\r\n" {
                    break;
                }
            }
            body.resize(len.expect("content-length"), 0);
            r.read_exact(&mut body).unwrap();
            assert_eq!(status, 200, "{p}: {}", String::from_utf8_lossy(&body));
            start.elapsed()
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: load_test ADDR REQUESTS CLIENTS LEVEL[,LEVEL...]");
        std::process::exit(2);
    }
    let addr: SocketAddr = args[1].parse().expect("ADDR as IP:PORT");
    assert!(
        addr.ip().is_loopback(),
        "a load test runs against localhost only"
    );
    let requests: usize = args[2].parse().unwrap();
    let clients: usize = args[3].parse().unwrap();
    let levels: Vec<usize> = args[4].split(',').map(|l| l.parse().unwrap()).collect();
    let e = Encoder::new(MAX_SEEDS);
    let mut state = 1;
    let paths: Vec<String> = (0..requests)
        .map(|_| {
            let n = levels[splitmix(&mut state) as usize % levels.len()];
            let b = e.board_at(n, splitmix(&mut state) % level_size(n)).unwrap();
            let pits: Vec<String> = b.pits().iter().map(|p| p.to_string()).collect();
            format!("/api/awari?board={}", pits.join(","))
        })
        .collect();
    let start = Instant::now();
    let mut lat: Vec<Duration> = std::thread::scope(|s| {
        let handles: Vec<_> = paths
            .chunks(requests.div_ceil(clients))
            .map(|part| s.spawn(move || client(addr, part)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let secs = start.elapsed().as_secs_f64();
    lat.sort();
    let pct =
        |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)].as_secs_f64() * 1e3;
    println!("requests\tclients\tseconds\trequests_per_s\tp50_ms\tp99_ms\tmax_ms");
    println!(
        "{}\t{clients}\t{secs:.2}\t{:.0}\t{:.3}\t{:.3}\t{:.3}",
        lat.len(),
        lat.len() as f64 / secs,
        pct(0.50),
        pct(0.99),
        pct(1.0)
    );
}
