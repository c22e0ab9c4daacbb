//! `mancaladb serve`: the JSON API, against a server started as a child
//! process on a free port, spoken to over plain HTTP/1.1. Known values
//! (the README's position), each move's value against its child's value
//! asked separately, whole-level statistics against `stats --json`, and the
//! statuses of bad input (400), missing levels (404) and limits.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use mancaladb::oware::level_size;

use crate::common::{awari_db, bin, run, scratch};
use crate::openapi::check_answer;

/// A running server, stopped when dropped.
struct Server {
    child: Child,
    addr: String,
    /// The first line it printed, which says where it listens.
    said: String,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        Server::logging_to(args, Stdio::null())
    }

    /// A server whose log (standard error) goes to `log`.
    fn logging_to(args: &[&str], log: Stdio) -> Server {
        Server::listening(&[args, &["--addr", "127.0.0.1:0"]].concat(), log)
    }

    /// A server started with `args`, which say where it listens: its
    /// address is read from the first line it prints.
    fn listening(args: &[&str], log: Stdio) -> Server {
        let mut cmd = bin();
        cmd.arg("serve").args(args).stderr(log);
        Server::spawned(cmd)
    }

    /// A server started by `cmd` (`serve` and its arguments): its address
    /// is read from the first line it prints.
    fn spawned(mut cmd: Command) -> Server {
        let mut child = cmd
            .stdout(Stdio::piped())
            .spawn()
            .expect("start mancaladb serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        Server {
            child,
            addr,
            said: line,
        }
    }

    /// A server of the shared tables whose log goes to a file in the
    /// scratch directory `name`: the server, and the log's path.
    fn logging_to_file(name: &str) -> (Server, PathBuf) {
        let log = scratch(name).join("serve.log");
        let s = Server::logging_to(
            &["--db", awari_db().to_str().unwrap()],
            std::fs::File::create(&log).unwrap().into(),
        );
        (s, log)
    }

    fn db(dir: &Path) -> Server {
        Server::start(&["--db", dir.to_str().unwrap()])
    }

    /// Asserts that the server catches SIGTERM and SIGINT (`SigCgt` in
    /// /proc/PID/status) as soon as it has printed its address: a signal
    /// sent then must stop it gracefully, not kill it. (Its handlers were
    /// once set up only when it first waited for a signal, a moment
    /// after.)
    fn catching_signals(&self) {
        let wanted = (1u64 << (libc::SIGTERM - 1)) | (1 << (libc::SIGINT - 1));
        let text = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let caught = text
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
            .unwrap_or(0);
        assert_eq!(
            caught & wanted,
            wanted,
            "no handler of SIGTERM and SIGINT: {text}"
        );
    }

    /// Sends one request; returns the status, the headers (lower case) and
    /// the body.
    fn request(
        &self,
        method: &str,
        path: &str,
        headers: &str,
        body: &[u8],
    ) -> (u16, String, Vec<u8>) {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n{headers}\r\n",
            self.addr,
            body.len()
        )
        .unwrap();
        // A refused body may close the connection before it is all sent.
        let _ = s.write_all(body);
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let end = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("headers");
        let head = String::from_utf8(raw[..end].to_vec())
            .unwrap()
            .to_lowercase();
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        let mut body = raw[end + 4..].to_vec();
        if head.contains("transfer-encoding: chunked") {
            body = unchunk(&body);
        }
        (status, head, body)
    }

    /// A GET whose answer is JSON, checked against the OpenAPI document.
    fn get(&self, path: &str) -> (u16, Value) {
        let (status, _, body) = self.request("GET", path, "", b"");
        let body = serde_json::from_slice(&body).expect("a JSON body");
        check_answer("GET", path, status, &body);
        (status, body)
    }

    /// A POST of JSON whose answer is JSON, checked against the OpenAPI
    /// document.
    fn post(&self, path: &str, body: &[u8]) -> (u16, Value) {
        let (status, _, body) =
            self.request("POST", path, "Content-Type: application/json\r\n", body);
        let body = serde_json::from_slice(&body).expect("a JSON body");
        check_answer("POST", path, status, &body);
        (status, body)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A batch request's body: `n` copies of one board of level 16.
fn batch_of(n: usize) -> String {
    let boards = vec!["\"1,1,1,1,1,2,4,2,3,0,0,0\""; n].join(",");
    format!("{{\"boards\": [{boards}]}}")
}

/// Waits, 30 s at most, until the server has accepted the connection `c`
/// and read all that was sent on it (a fixed sleep can be too short for a
/// server run late by a loaded machine): a signal before that finds `c`
/// not yet accepted, and `c` closed before that is no request at all.
/// Linux's /proc/net/tcp shows the server's side of `c` with its socket's
/// inode once accepted (0 before), and the bytes received and not yet read.
fn taken(c: &TcpStream) {
    let (server, client) = (c.peer_addr().unwrap(), c.local_addr().unwrap());
    let port = |field: &str| {
        let port = field.rsplit(':').next().unwrap();
        u16::from_str_radix(port, 16).unwrap()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
        // sl local rem st tx_queue:rx_queue tr:when retrnsmt uid timeout inode
        let side = table.lines().skip(1).find_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let ours = f[3] == "01" && port(f[1]) == server.port() && port(f[2]) == client.port();
            let unread = f[4].split(':').nth(1).unwrap();
            ours.then(|| (u64::from_str_radix(unread, 16).unwrap(), f[9].to_string()))
        });
        if let Some((0, inode)) = &side
            && inode != "0"
        {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not take the connection: {side:?}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn unchunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let eol = b.windows(2).position(|w| w == b"\r\n").unwrap();
        let len =
            usize::from_str_radix(std::str::from_utf8(&b[..eol]).unwrap().trim(), 16).unwrap();
        if len == 0 {
            return out;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + len]);
        b = &b[eol + 4 + len..];
    }
}

/// A 400 or 404 with a one-line JSON error.
fn refused(s: &Server, path: &str, status: u16, want: &str) -> Value {
    let (got, body) = s.get(path);
    assert_eq!(got, status, "{path}: {body}");
    let e = body["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{path}: {body}"));
    assert!(e.contains(want), "{path}: {e}");
    assert!(!e.contains('\n'), "{path}: {e}");
    body
}

/// A value no game of its level can have, in a VU file served in place:
/// 500 with a one-line JSON error naming the file and the index, never an
/// answer built on it. (The statistics of its level are refused alike.)
#[test]
fn damaged_values_are_500_naming_the_file() {
    let vu = scratch("server-range");
    // Level 3 has 364 positions; 127 is no value of a 3-seed game.
    let mut bytes = vec![0u8; 364];
    bytes[100] = 127;
    std::fs::write(vu.join("scores.3"), &bytes).unwrap();
    let s = Server::start(&["--vu", vu.to_str().unwrap()]);
    let board = mancaladb::oware::Encoder::new(3).board_at(3, 100).unwrap();
    let pits: Vec<String> = board.pits().iter().map(u8::to_string).collect();
    let want = "scores.3: corrupt table: value 127 at index 100 is outside -3..=3";
    refused(
        &s,
        &format!("/api/awari?board={}", pits.join(",")),
        500,
        want,
    );
    refused(&s, "/api/stats/awari/3", 500, want);
}

/// A table rebuilt under the server: the damage of the file it opened is
/// still a 500, which says that the file was replaced and to restart.
#[test]
fn damage_in_a_table_replaced_under_the_server_says_to_restart() {
    let dir = scratch("server-replaced");
    let name = "awari-09.mdb";
    let sound = std::fs::read(awari_db().join(name)).unwrap();
    let mut damaged = sound.clone();
    let at = damaged.len() - 100; // in the last block
    damaged[at] ^= 0x20;
    std::fs::write(dir.join(name), &damaged).unwrap();
    let s = Server::db(&dir);
    let stats = "/api/stats/awari/9";
    let before = refused(&s, stats, 500, "corrupt table");
    assert!(
        !before.to_string().contains("replaced it since"),
        "{before}"
    );
    std::fs::write(dir.join("rebuilt.tmp"), &sound).unwrap();
    std::fs::rename(dir.join("rebuilt.tmp"), dir.join(name)).unwrap();
    refused(
        &s,
        stats,
        500,
        "another file has replaced it since: restart the server to read the new file",
    );
    let fresh = Server::db(&dir);
    let (status, body) = fresh.get(stats);
    assert_eq!(status, 200, "{body}");
}

#[test]
fn known_position_and_each_moves_value() {
    let s = Server::db(awari_db());
    let (status, a) = s.get("/api/awari?board=1,1,1,1,1,2,4,2,3,0,0,0&captured=16,16");
    assert_eq!(status, 200, "{a}");
    assert_eq!(a["board"], json!([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]));
    assert_eq!(
        (a["seeds"].clone(), a["value"].clone()),
        (json!(16), json!(0))
    );
    assert_eq!(a["category"], "draw");
    assert_eq!(a["source"], "table");
    assert_eq!(a["rules"], "awari");
    assert_eq!(a["best"], json!([5]));
    assert_eq!(a["final"], json!({"mover": 24.0, "opponent": 24.0}));
    // A side may have taken nothing yet: the game a draw from here, each
    // side takes half of the 16 seeds left.
    let (status, f) = s.get("/api/awari?board=1,1,1,1,1,2,4,2,3,0,0,0&captured=0,32");
    assert_eq!(
        (status, &f["final"]),
        (200, &json!({"mover": 8.0, "opponent": 40.0})),
        "{f}"
    );
    let moves = a["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 6);
    assert_eq!(moves[0]["pit"], 5);
    assert_eq!(moves[0]["captures"], 3);
    assert_eq!(
        moves[0]["board"],
        json!([5, 0, 3, 0, 0, 0, 1, 1, 1, 1, 1, 0])
    );
    // Best first; each value is captures minus the child's value, asked
    // for separately; the same values as `query --json`.
    let cli: Value = serde_json::from_slice(
        &run(&[
            "query",
            "--json",
            "--db",
            awari_db().to_str().unwrap(),
            "1,1,1,1,1,2,4,2,3,0,0,0",
        ])
        .stdout,
    )
    .unwrap();
    for w in moves.windows(2) {
        assert!(w[0]["value"].as_i64() >= w[1]["value"].as_i64(), "{a}");
    }
    for m in moves {
        let child: Vec<String> = m["board"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.to_string())
            .collect();
        let (status, c) = s.get(&format!("/api/awari?board={}", child.join(",")));
        assert_eq!(status, 200, "{c}");
        assert_eq!(
            m["value"].as_i64().unwrap(),
            m["captures"].as_i64().unwrap() - c["value"].as_i64().unwrap()
        );
        let same = cli["moves"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["pit"] == m["pit"])
            .unwrap();
        assert_eq!(
            (&same["value"], &same["captures"]),
            (&m["value"], &m["captures"])
        );
        let cat = match m["value"].as_i64().unwrap() {
            0 => "draw",
            v if v > 0 => "win",
            _ => "loss",
        };
        assert_eq!(m["category"], cat);
    }
    // A full board is not stored: valued from its moves.
    let (status, full) = s.get("/api/awari?board=1,1,1,1,1,1,1,1,1,1,1,1");
    assert_eq!(
        (status, &full["source"]),
        (200, &json!("one-ply")),
        "{full}"
    );
    assert_eq!(full["value"], 0, "the 12-seed game is a draw");
}

#[test]
fn bad_input_is_400_and_missing_levels_404() {
    let s = Server::db(awari_db());
    refused(&s, "/api/awari?board=1,1,1", 400, "12 pits");
    refused(
        &s,
        "/api/awari?board=1,1,1,1,1,1,1,1,1,1,1,x",
        400,
        "pit count 'x' is not a whole number",
    );
    refused(
        &s,
        "/api/awari?board=1,1,1,1,1,1,1,1,1,1,1,-1",
        400,
        "pit count -1 is negative",
    );
    refused(&s, "/api/awari?board=9,9,9,9,9,9,0,0,0,0,0,0", 400, "48");
    refused(&s, "/api/awari", 400, "board=");
    refused(&s, "/api/awari?board=", 400, "board=");
    // A parameter given empty is one not given (a form's blank field), on
    // every route: `rules=` was "unknown rule set ''" on these two.
    for path in ["/api/awari", "/api/awari/mainline"] {
        let (status, a) = s.get(&format!("{path}?board=1,1,1,1,1,2,4,2,3,0,0,0&rules="));
        assert_eq!(
            (status, &a["rules"], &a["value"]),
            (200, &json!("awari"), &json!(0)),
            "{a}"
        );
    }
    let (status, a) = s.get("/api/awari?board=1,1,1,1,1,2,4,2,3,0,0,0&captured=");
    assert_eq!((status, a.get("final")), (200, None), "{a}");
    // A parameter no route takes is refused, not ignored: `rule=abapa`
    // would otherwise answer with awari values.
    refused(
        &s,
        "/api/awari?board=1,1,1,1,1,2,4,2,3,0,0,0&rule=abapa",
        400,
        "unknown field `rule`",
    );
    refused(
        &s,
        "/api/awari/mainline?board=1,1,1,1,1,2,4,2,3,0,0,0&captured=1",
        400,
        "unknown field `captured`",
    );
    refused(
        &s,
        "/api/omweso/loops?side=3,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1&laps=5",
        400,
        "unknown field `laps`",
    );
    // Also on the routes that take no parameter at all.
    for path in [
        "/api/stats/awari/12?rules=abapa",
        "/api/levels?rules=abapa",
        "/health?x=1",
    ] {
        refused(&s, path, 400, "unknown field");
    }
    // A level written as a board's count may be (a sign, spaces around
    // it) is that level, as on the command line; anything else is not.
    let (status, plain) = s.get("/api/stats/awari/12");
    assert_eq!(status, 200, "{plain}");
    for path in ["/api/stats/awari/+12", "/api/stats/awari/%2012%20"] {
        assert_eq!(s.get(path), (200, plain.clone()), "{path}");
    }
    refused(&s, "/api/stats/awari/-12", 400, "level -12: give 0..=48");
    refused(&s, "/api/stats/awari/1x", 400, "level 1x: give 0..=48");
    // Past the game, in the library's words, however many digits.
    refused(
        &s,
        "/api/stats/awari/49",
        400,
        "level 49: levels go up to 48",
    );
    refused(
        &s,
        "/api/stats/awari/123456789012345678901234567890",
        400,
        "level 123456789012345678901234567890: levels go up to 48",
    );
    refused(
        &s,
        "/api/awari?board=1,1,1,1,1,2,4,2,3,0,0,0&rules=kalah",
        400,
        "kalah",
    );
    refused(
        &s,
        "/api/awari?board=1,1,1,1,1,2,4,2,3,0,0,0&captured=16,15",
        400,
        "48",
    );
    refused(
        &s,
        "/api/awari?board=1,1,1,1,1,2,4,2,3,0,0,0&captured=a",
        400,
        "captured",
    );
    // Counts past a byte add up like any other; a negative one is named.
    refused(
        &s,
        "/api/awari?board=1,1,1,1,1,2,4,2,3,0,0,0&captured=256,0",
        400,
        "captured 256,0 and 16 seeds on the board make 272, not the game's 48",
    );
    refused(
        &s,
        "/api/awari?board=1,1,1,1,1,2,4,2,3,0,0,0&captured=-1,33",
        400,
        "captured -1,33: a seed count cannot be negative",
    );
    // Past 64 bits, too many (not "give two seed counts"); and the sum of
    // two large ones is their true sum, not a saturated one.
    refused(
        &s,
        "/api/awari?board=1,1,1,1,1,2,4,2,3,0,0,0&captured=18446744073709551616,0",
        400,
        "captured 18446744073709551616,0: a side takes at most the game's 48 seeds",
    );
    refused(
        &s,
        "/api/awari?board=1,1,1,1,1,2,4,2,3,0,0,0&captured=9223372036854775807,9223372036854775807",
        400,
        "make 18446744073709551630, not the game's 48",
    );
    refused(&s, "/api/awari?board=1,1&board=2,2", 400, "query");
    refused(&s, "/api/stats/awari/99", 400, "level 99");
    refused(
        &s,
        "/api/omweso/loops?side=3,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1&max_laps=0",
        400,
        "max_laps",
    );
    // The budget's upper end is the route's limit, 10,000,000 laps: taken,
    // one more refused.
    let (status, o) =
        s.get("/api/omweso/loops?side=3,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1&pit=0&max_laps=10000000");
    assert_eq!((status, &o["max_laps"]), (200, &json!(10_000_000)), "{o}");
    refused(
        &s,
        "/api/omweso/loops?side=3,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1&pit=0&max_laps=10000001",
        400,
        "max_laps: give 1..=10000000",
    );
    refused(
        &s,
        "/api/omweso/loops?side=3,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1&first_turn=yes",
        400,
        "first_turn=yes: give true or false (or 1 or 0)",
    );
    refused(
        &s,
        "/api/omweso/loops?side=3,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1&pit=1",
        400,
        "pit 1",
    );
    // A pit that is no pit, in the command line's and Python's words.
    for pit in ["16", "-1", "x"] {
        refused(
            &s,
            &format!("/api/omweso/loops?side=3,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1&pit={pit}"),
            400,
            &format!("pit {pit}: pits are numbered 0..15"),
        );
    }
    refused(&s, "/api/omweso/loops", 400, "side=");
    refused(
        &s,
        "/api/omweso/loops?side=1,1",
        400,
        "16 pits, got 2 numbers",
    );
    refused(&s, "/no/such/page", 404, "/api/awari");
    // Errors that axum makes itself come as JSON too.
    refused(&s, "/api/stats/%FF/3", 400, "UTF-8");
    for (method, path, allow) in [
        (
            "POST",
            "/api/awari?board=1,1,1,1,1,2,4,2,3,0,0,0",
            "get,head",
        ),
        ("GET", "/api/awari/batch", "post"),
        ("DELETE", "/api/levels", "get,head"),
    ] {
        let (status, head, body) = s.request(method, path, "", b"");
        let body: Value = serde_json::from_slice(&body).expect("a JSON body");
        check_answer(method, path, status, &body);
        assert_eq!(status, 405, "{method} {path}: {body}");
        assert!(head.contains(&format!("allow: {allow}")), "{head}");
        let e = body["error"].as_str().unwrap_or_default();
        assert!(e.starts_with(&format!("{method} is not allowed")), "{e}");
    }
    // Levels 0..18 are built: 20 seeds, and abapa, are not.
    let e = refused(
        &s,
        "/api/awari?board=2,2,2,2,2,2,2,2,2,2,0,0",
        404,
        "level 20",
    );
    assert_eq!(e["missing_level"], 20);
    let e = refused(&s, "/api/stats/awari/19", 404, "level 19");
    assert_eq!(e["missing_level"], 19);
    let e = refused(
        &s,
        "/api/awari?board=1,1,1,1,1,2,4,2,3,0,0,0&rules=abapa",
        404,
        "abapa",
    );
    assert_eq!(e["missing_level"], 16);
    let (status, h) = s.get("/health");
    assert_eq!((status, &h["status"]), (200, &json!("ok")));
}

#[test]
fn the_empty_board_is_a_finished_game_as_for_query() {
    let s = Server::db(awari_db());
    let a = same_as_query(&s, "0,0,0,0,0,0,0,0,0,0,0,0");
    assert_eq!((&a["value"], &a["moves"]), (&json!(0), &json!([])));
}

/// The server's answer for `board`, which says what `query --json` says of
/// it (the same library answer, `query::Analysis`): seeds, value, category,
/// best pits, each move's value, captures and category, and where the value
/// came from (the server's `source` names the kind of file too).
fn same_as_query(s: &Server, board: &str) -> Value {
    let (status, a) = s.get(&format!("/api/awari?board={board}"));
    assert_eq!(status, 200, "{a}");
    let cli: Value = serde_json::from_slice(
        &run(&[
            "query",
            "--json",
            "--db",
            awari_db().to_str().unwrap(),
            board,
        ])
        .stdout,
    )
    .unwrap();
    for key in ["seeds", "value", "category", "best"] {
        assert_eq!(a[key], cli[key], "{key}: {a} against {cli}");
    }
    let source = match cli["valued_by"].as_str() {
        Some("level") => "table",
        Some("moves") => "one-ply",
        other => other.unwrap_or("none"),
    };
    assert_eq!(a["source"], source, "{a} against {cli}");
    // The server lists the moves best first, query in pit order.
    let by_pit = |moves: &Value| {
        let mut m: Vec<Value> = moves
            .as_array()
            .unwrap()
            .iter()
            .map(|m| json!([m["pit"], m["value"], m["captures"], m["category"]]))
            .collect();
        m.sort_by_key(|m| m[0].as_u64());
        m
    };
    assert_eq!(
        by_pit(&a["moves"]),
        by_pit(&cli["moves"]),
        "{a} against {cli}"
    );
    a
}

#[test]
fn the_server_answers_as_query_does() {
    let s = Server::db(awari_db());
    // Stored, valued from its moves (the 12-seed start), by the rules.
    for board in [
        "1,1,1,1,1,2,4,2,3,0,0,0",
        "1,1,1,1,1,1,1,1,1,1,1,1",
        "0,0,0,0,0,0,3,0,1,0,0,0",
    ] {
        same_as_query(&s, board);
    }
}

#[test]
fn serve_refuses_a_directory_that_is_not_there() {
    let missing = scratch("server-missing").join("no-such-dir");
    for flag in ["--db", "--vu"] {
        let out = run(&[
            "serve",
            flag,
            missing.to_str().unwrap(),
            "--addr",
            "127.0.0.1:0",
        ]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no-such-dir: no such directory"), "{err}");
    }
    // A cache size that is not a whole number says so (the standard
    // parser's "invalid digit found in string" named neither).
    let out = run(&["serve", "--cache-mib", "1.5", "--addr", "127.0.0.1:0"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("must be a whole number of MiB"), "{err}");
}

#[test]
fn serve_listens_on_a_port_alone_or_a_host_name() {
    let dir = scratch("server-addr");
    std::fs::create_dir_all(&dir).unwrap();
    for (flag, value) in [
        ("--port", "0"),
        ("--addr", " 0 "),
        ("--addr", "localhost:0"),
    ] {
        let args = ["--db", dir.to_str().unwrap(), flag, value];
        let s = Server::listening(&args, Stdio::null());
        assert!(
            s.addr.starts_with("127.0.0.1:"),
            "{flag} {value}: {}",
            s.addr
        );
    }
    let out = run(&[
        "serve",
        "--db",
        dir.to_str().unwrap(),
        "--addr",
        "127.0.0.1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("give HOST:PORT (127.0.0.1:8080, localhost:8080, [::1]:8080) or a port"),
        "{err}"
    );
}

#[test]
fn one_unreadable_level_does_not_hide_the_others() {
    let dir = scratch("server-damaged");
    for n in 0..=5 {
        let name = format!("awari-{n:02}.mdb");
        std::fs::copy(awari_db().join(&name), dir.join(&name)).unwrap();
    }
    let five = dir.join("awari-05.mdb");
    crate::common::cut_short(&five, 10);
    let s = Server::db(&dir);
    // The listing, each level in order: those of `errors` with an error
    // that says those words, the others with their positions.
    let listed = |count: usize, errors: &[(usize, &str)]| {
        let (status, lv) = s.get("/api/levels");
        assert_eq!(status, 200, "{lv}");
        let levels = lv["rules"][0]["levels"].as_array().unwrap().clone();
        assert_eq!(levels.len(), count, "{lv}");
        for (n, l) in levels.iter().enumerate() {
            assert_eq!(l["seeds"], n, "{l}");
            match errors.iter().find(|(k, _)| *k == n) {
                Some((_, says)) => assert!(l["error"].as_str().unwrap().contains(says), "{l}"),
                None => assert_eq!(l["positions"], level_size(n), "{l}"),
            }
        }
        levels
    };
    let levels = listed(6, &[(5, "awari-05.mdb")]);
    // Only what reads it fails.
    refused(&s, "/api/stats/awari/5", 500, "awari-05.mdb");
    let (status, st) = s.get("/api/stats/awari/4");
    assert_eq!((status, &st["positions"]), (200, &json!(level_size(4))));
    assert_eq!(levels[0]["verified"], false);
    // A link to nothing in level 6's place is listed with its error too
    // (it made the whole answer a 500).
    std::os::unix::fs::symlink("elsewhere/awari-06.mdb", dir.join("awari-06.mdb")).unwrap();
    let link_to_nothing = "awari-06.mdb: is a link to nothing";
    listed(7, &[(5, "awari-05.mdb"), (6, link_to_nothing)]);
    std::fs::remove_file(dir.join("awari-06.mdb")).unwrap();
    // One in the middle too: the levels after it are still their own.
    let two = dir.join("awari-02.mdb");
    std::fs::rename(&two, dir.join("kept")).unwrap();
    std::os::unix::fs::symlink("elsewhere/awari-02.mdb", &two).unwrap();
    listed(6, &[(2, "link to nothing"), (5, "awari-05.mdb")]);
    std::fs::remove_file(&two).unwrap();
    std::fs::rename(dir.join("kept"), &two).unwrap();
    // A file in the directory's place is one error, not 49 levels listed
    // with "Not a directory".
    let moved = dir.with_extension("moved");
    std::fs::rename(&dir, &moved).unwrap();
    std::fs::write(&dir, b"").unwrap();
    refused(&s, "/api/levels", 500, "expected a directory");
    std::fs::remove_file(&dir).unwrap();
    std::fs::rename(&moved, &dir).unwrap();
    // Records of verification that cannot be read (a link to itself): each
    // level is still listed, its verification unknown.
    std::os::unix::fs::symlink("verified.tsv", dir.join("verified.tsv")).unwrap();
    let (status, lv) = s.get("/api/levels");
    assert_eq!(status, 200, "{lv}");
    let levels = lv["rules"][0]["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 6, "{lv}");
    assert!(
        levels[..5]
            .iter()
            .all(|l| l["verified"].is_null() && l["positions"].is_u64()),
        "{lv}"
    );
}

#[test]
fn batch_answers_each_board_within_limits() {
    let s = Server::db(awari_db());
    let (status, b) = s.post(
        "/api/awari/batch",
        br#"{"boards": ["1,1,1,1,1,2,4,2,3,0,0,0", [0,0,0,0,0,2,1,1,0,0,0,0], "1,2", [2,2,2,2,2,2,2,2,2,2,0,0]]}"#,
    );
    assert_eq!(status, 200, "{b}");
    let r = b["results"].as_array().unwrap();
    assert_eq!(r.len(), 4);
    assert_eq!((&r[0]["value"], &r[0]["best"]), (&json!(0), &json!([5])));
    // README: 0 0 0 0 0 2 1 1 0 0 0 0 is worth +4 with pit 5.
    assert_eq!((&r[1]["value"], &r[1]["best"]), (&json!(4), &json!([5])));
    assert_eq!(r[2]["status"], 400, "{b}");
    assert_eq!(
        (&r[3]["status"], &r[3]["missing_level"]),
        (&json!(404), &json!(20))
    );
    // Its length is said in its head, as every answer's is, though it is
    // handed on in frames (64 KiB each): 3,000 boards make about 1.5 MB.
    let many = batch_of(3_000);
    let (status, head, body) = s.request(
        "POST",
        "/api/awari/batch",
        "Content-Type: application/json\r\n",
        many.as_bytes(),
    );
    assert_eq!(status, 200, "{head}");
    assert!(body.len() > 1 << 20, "{} bytes", body.len());
    let length = format!("content-length: {}", body.len());
    assert!(head.split("\r\n").any(|h| h == length), "{head}");
    let b: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(b["results"].as_array().map(Vec::len), Some(3_000));
    // The body is an object: a list of the fields' values was answered.
    let (status, e) = s.post(
        "/api/awari/batch",
        br#"["abapa", ["1,1,1,1,1,1,1,1,1,1,0,0"]]"#,
    );
    assert_eq!(status, 400, "{e}");
    assert!(
        e["error"].as_str().unwrap().contains("expected an object"),
        "{e}"
    );
    // Limits: 10,000 boards, 1 MiB, well-formed JSON.
    let many = batch_of(10_001);
    let (status, e) = s.post("/api/awari/batch", many.as_bytes());
    assert_eq!(status, 400, "{e}");
    assert!(
        e["error"].as_str().unwrap().contains("at most 10000"),
        "{e}"
    );
    let big = format!("{{\"boards\": [\"{}\"]}}", "1".repeat(1 << 20));
    let (status, e) = s.post("/api/awari/batch", big.as_bytes());
    assert_eq!(status, 413, "{e}");
    // The error says what the limit is (it was "length limit exceeded").
    assert_eq!(
        e["error"], "the request body is over the limit of 1 MiB",
        "{e}"
    );
    // A body that only declares more is refused at once: it used to be
    // waited on until the 30 s limit, then answered 503.
    let mut c = TcpStream::connect(&s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        c,
        "POST /api/awari/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n{{}}"
    )
    .unwrap();
    let mut head = [0u8; 12];
    c.read_exact(&mut head).expect("an answer within 10 s");
    assert_eq!(&head, b"HTTP/1.1 413", "{}", String::from_utf8_lossy(&head));
    // A chunked body (no declared length) is cut off at the limit: a 413
    // with a JSON error too.
    let mut c = TcpStream::connect(&s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        c,
        "POST /api/awari/batch HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    .unwrap();
    let chunk = vec![b' '; 1 << 16];
    for _ in 0..17 {
        // The server may answer and close before all of it is sent.
        if write!(c, "{:x}\r\n", chunk.len()).is_err()
            || c.write_all(&chunk).is_err()
            || c.write_all(b"\r\n").is_err()
        {
            break;
        }
    }
    let _ = c.write_all(b"0\r\n\r\n");
    let mut raw = Vec::new();
    let _ = c.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(
        text.contains("{\"error\":\"the request body is over the limit of 1 MiB\"}"),
        "{text}"
    );
    // The batch route takes no query parameter either.
    let (status, e) = s.post("/api/awari/batch?x=1", br#"{"boards": []}"#);
    assert_eq!(status, 400, "{e}");
    assert!(
        e["error"].as_str().unwrap().contains("unknown field"),
        "{e}"
    );
    let (status, e) = s.post("/api/awari/batch", b"{\"boards\": [");
    assert_eq!(status, 400, "{e}");
    assert!(e["error"].is_string());
    // Any item that is not a board fails only itself, with the message a
    // board given as text gets: also a number no JSON reader holds (1e400
    // failed the whole batch), and one past u64 (named as a float).
    let (status, b) = s.post(
        "/api/awari/batch",
        br#"{"boards": [null, [0,0,0,0,0,2,1,1,0,0,0,0.5], {"a": 1}, [0,0,0,0,0,2,1,1,0,0,0,99999999999999999999], [0,0,0,0,0,2,1,1,0,0,0,"x"], [0,0,0,0,0,2,1,1,0,0,0,1e400], [0,0,0,0,0,2,1,1,0,0,0,[0]], "0,0,0,0,0,2,1,1,0,0,0,0", [-0, 0,0,0,0,2,1,1,0,0,0,0]]}"#,
    );
    assert_eq!(status, 200, "{b}");
    let r = b["results"].as_array().unwrap();
    assert_eq!(r.len(), 9, "{b}");
    for (k, want) in [
        "a board as",
        "'0.5' is not a whole number",
        "a board as",
        "pit count 99999999999999999999 exceeds the 48 seeds",
        "a board as",
        "'1e400' is not a whole number",
        "a board as",
    ]
    .iter()
    .enumerate()
    {
        assert_eq!(r[k]["status"], 400, "{k}: {b}");
        let e = r[k]["error"].as_str().unwrap();
        assert!(e.contains(want), "{k}: {e}");
    }
    assert_eq!(
        (&r[7]["value"], &r[8]["value"]),
        (&json!(4), &json!(4)),
        "{b}"
    );
}

/// A batch answer asked for gzip-compressed comes so, and whole: its
/// frames end where the answer does (an empty frame handed on past the
/// end kept the compressor asking for more, and the answer never ended).
/// The gzip trailer's CRC-32 and length are those of the answer sent plain.
#[test]
fn a_batch_answer_asked_for_gzip_is_compressed_and_whole() {
    let s = Server::db(awari_db());
    let body = batch_of(300);
    let (status, _, plain) = s.request(
        "POST",
        "/api/awari/batch",
        "Content-Type: application/json\r\n",
        body.as_bytes(),
    );
    assert_eq!(status, 200);
    let mut c = TcpStream::connect(&s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        c,
        "POST /api/awari/batch HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAccept-Encoding: gzip\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    c.read_to_end(&mut raw)
        .expect("the whole answer within 20 s");
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..end]).to_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("content-encoding: gzip"), "{head}");
    let mut gz = raw[end + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        gz = unchunk(&gz);
    }
    assert!(gz.starts_with(&[0x1f, 0x8b]) && gz.len() > 8, "{gz:?}");
    assert!(gz.len() < plain.len() / 10, "{} bytes", gz.len());
    let trailer = |at: usize| u32::from_le_bytes(gz[at..at + 4].try_into().unwrap());
    let crc32 = |bytes: &[u8]| {
        !bytes.iter().fold(!0u32, |crc, &b| {
            (0..8).fold(crc ^ u32::from(b), |c, _| {
                (c >> 1) ^ (0xedb8_8320 & (c & 1).wrapping_neg())
            })
        })
    };
    assert_eq!(
        (trailer(gz.len() - 8), trailer(gz.len() - 4) as usize),
        (crc32(&plain), plain.len())
    );
}

#[test]
fn mainline_levels_stats_and_omweso() {
    let s = Server::db(awari_db());
    let (status, l) = s.get("/api/awari/mainline?board=1,1,1,1,1,2,4,2,3,0,0,0");
    assert_eq!(status, 200, "{l}");
    let line = l["line"].as_array().unwrap();
    assert_eq!(
        (&line[0]["pit"], &line[0]["captures"]),
        (&json!(5), &json!(3))
    );
    assert_eq!(
        line[1]["board"],
        json!([5, 0, 3, 0, 0, 0, 1, 1, 1, 1, 1, 0])
    );
    assert_eq!((&line[1]["pit"], &line[1]["value"]), (&json!(2), &json!(3)));
    // A draw, which neither side can leave for a gain: the line repeats.
    assert_eq!(l["line_end"], "cycle", "{l}");

    let (status, lv) = s.get("/api/levels");
    assert_eq!(status, 200);
    let awari = &lv["rules"][0];
    assert_eq!(awari["rules"], "awari");
    let levels = awari["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 19);
    for (n, l) in levels.iter().enumerate() {
        assert_eq!(
            (l["seeds"].as_u64(), l["positions"].as_u64()),
            (Some(n as u64), Some(level_size(n)))
        );
    }
    assert_eq!(lv["rules"][1]["levels"], json!([]));

    let cli: Value = serde_json::from_slice(
        &run(&["stats", "--json", "--db", awari_db().to_str().unwrap()]).stdout,
    )
    .unwrap();
    let (status, st) = s.get("/api/stats/awari/12");
    assert_eq!(status, 200);
    assert_eq!(st, cli[12]);
    let hist: u64 = st["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(hist, level_size(12));

    // The README's looping start (loops --pit 0 "3 1 0 1 ...").
    let (status, o) = s.get("/api/omweso/loops?side=3,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1&pit=0");
    assert_eq!(status, 200, "{o}");
    let cli: Value = serde_json::from_slice(
        &run(&[
            "loops",
            "--json",
            "--pit",
            "0",
            "3 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(
        o["starts"], cli["starts"],
        "the same report as loops --json"
    );
    assert_eq!(o["starts"][0]["verdict"], "infinite");
    assert_eq!(o["starts"][0]["period"], 128);
    // Empty parameters are ones not given (every start, no opponent seeds,
    // not the first turn), and numbers may have spaces around them.
    let side = "side=2,6,5,2,3,4,3,4,8,2,6,3,2,5,6,3";
    let (status, all) = s.get(&format!("/api/omweso/loops?{side}&max_laps=5000"));
    assert_eq!(status, 200, "{all}");
    // Every pit holds 2 seeds or more: 16 starts, anticlockwise.
    let starts = all["starts"].as_array().unwrap();
    assert_eq!(starts.len(), 16, "every start: {all}");
    for (pit, start) in starts.iter().enumerate() {
        assert_eq!(
            (&start["pit"], &start["direction"]),
            (&json!(pit), &json!("ccw"))
        );
    }
    let (status, empty) = s.get(&format!(
        "/api/omweso/loops?{side}&pit=&opponent=&first_turn=&max_laps=%205000%20"
    ));
    assert_eq!(status, 200, "{empty}");
    assert_eq!(empty, all);
}

#[test]
fn mainline_stops_at_a_missing_level() {
    // Levels 13 and 16 only: the README position and its best child are
    // answered; the line stops when a capture would need a lower level.
    let dir = scratch("serve-gap");
    for n in [13, 16] {
        let name = format!("awari-{n:02}.mdb");
        std::fs::copy(awari_db().join(&name), dir.join(&name)).unwrap();
    }
    let s = Server::db(&dir);
    let (status, l) = s.get("/api/awari/mainline?board=1,1,1,1,1,2,4,2,3,0,0,0");
    assert_eq!(status, 200, "{l}");
    assert_eq!(l["line_end"], "level-missing", "{l}");
    // The line with every level, up to the ply that needs level 10.
    let (_, whole) =
        Server::db(awari_db()).get("/api/awari/mainline?board=1,1,1,1,1,2,4,2,3,0,0,0");
    let (line, whole) = (
        l["line"].as_array().unwrap(),
        whole["line"].as_array().unwrap(),
    );
    assert_eq!(l["missing_level"], 10, "{l}");
    assert!(line.len() >= 2 && line[..] == whole[..line.len()], "{l}");
    let last = line.last().unwrap()["board"].as_array().unwrap();
    let after = &whole[line.len()];
    assert_eq!(
        last.iter().map(|v| v.as_u64().unwrap()).sum::<u64>() - after["captures"].as_u64().unwrap(),
        10,
        "the next ply's capture leads to level 10: {after}"
    );
    // Asked directly, the same gap is a 404 (a board whose player to move
    // has a seed: one without is valued by the rules, no level read).
    refused(
        &s,
        "/api/awari?board=1,0,0,0,0,0,0,0,0,0,2,0",
        404,
        "level 3",
    );
    let (status, over) = s.get("/api/awari?board=0,0,0,0,0,0,0,0,0,0,2,1");
    assert_eq!(
        (status, &over["value"], &over["source"]),
        (200, &(-3).into(), &"rules".into()),
        "{over}"
    );
}

#[test]
fn published_layout_files_are_served_in_place() {
    let vu = scratch("serve-vu");
    crate::common::export_vu(awari_db(), &vu);
    let s = Server::start(&["--vu", vu.to_str().unwrap()]);
    let (status, a) = s.get("/api/awari?board=1,1,1,1,1,2,4,2,3,0,0,0");
    assert_eq!(status, 200, "{a}");
    assert_eq!(
        (&a["value"], &a["best"], &a["source"]),
        (&json!(0), &json!([5]), &json!("vu"))
    );
    let e = refused(
        &s,
        "/api/awari?board=2,2,2,2,2,2,2,2,2,2,0,0",
        404,
        "scores.20",
    );
    assert_eq!(e["missing_level"], 20);
    refused(
        &s,
        "/api/awari?board=1,1,1,1,1,2,4,2,3,0,0,0&rules=abapa",
        404,
        "awari",
    );
    let (status, lv) = s.get("/api/levels");
    assert_eq!((status, &lv["kind"]), (200, &json!("vu")));
    assert_eq!(lv["rules"][0]["levels"].as_array().unwrap().len(), 19);
}

/// Cross-origin reads; every answer's type is to be believed (`nosniff`);
/// the page comes with a policy that lets it load only its own files.
#[test]
fn cors_and_the_page() {
    let s = Server::db(awari_db());
    let (status, head, body) = s.request("GET", "/health", "Origin: http://example.org\r\n", b"");
    assert_eq!(status, 200);
    assert!(head.contains("access-control-allow-origin: *"), "{head}");
    assert!(head.contains("x-content-type-options: nosniff"), "{head}");
    let (status, head, _) = s.request("GET", "/nowhere", "", b"");
    assert_eq!(status, 404);
    assert!(head.contains("x-content-type-options: nosniff"), "{head}");
    // A preflight, which CORS answers before any route, too.
    let preflight = "Origin: http://example.org\r\nAccess-Control-Request-Method: POST\r\n";
    let (status, head, _) = s.request("OPTIONS", "/api/awari/batch", preflight, b"");
    assert_eq!(status, 200);
    assert!(head.contains("access-control-allow-origin: *"), "{head}");
    assert!(head.contains("x-content-type-options: nosniff"), "{head}");
    let (status, head, body_html) = s.request("GET", "/", "", b"");
    assert_eq!(status, 200);
    assert!(head.contains("text/html"), "{head}");
    // The page runs its own script and reads its own API, nothing else
    // (the browser test runs it under this policy).
    assert!(
        head.contains("content-security-policy: default-src 'self'; img-src 'self' data:;"),
        "{head}"
    );
    // Its URLs are relative, so that a proxy can serve it under a
    // sub-path (the browser test loads it so).
    let page = String::from_utf8(body_html).unwrap();
    assert!(page.contains(r#"src="app.js""#), "{page}");
    assert!(!page.contains(r#"="/"#), "a URL from the root: {page}");
    assert!(!page.contains("http://") && !page.contains("https://"));
    let (status, _, js) = s.request("GET", "/app.js", "", b"");
    assert_eq!(status, 200);
    let js = String::from_utf8(js).unwrap();
    assert!(js.contains(r#""api/awari/mainline""#));
    assert!(!js.contains(r#""/api"#), "an API URL from the root");
    assert!(!body.is_empty());
    // The API's description, which every answer of these tests is checked
    // against, is served as it is in the source.
    let (status, head, doc) = s.request("GET", "/api/openapi.json", "", b"");
    assert_eq!(status, 200);
    assert!(head.contains("content-type: application/json"), "{head}");
    assert_eq!(String::from_utf8(doc).unwrap(), crate::openapi::DOCUMENT);
}

/// One log line per request, also for a preflight, which CORS answers
/// before any route (it was not logged).
#[test]
fn every_request_is_logged() {
    let (s, log) = Server::logging_to_file("server-log");
    assert_eq!(s.get("/health").0, 200);
    let preflight = "Origin: http://example.org\r\nAccess-Control-Request-Method: GET\r\n";
    let (status, head, _) = s.request("OPTIONS", "/api/levels", preflight, b"");
    assert_eq!(status, 200);
    assert!(head.contains("access-control-allow-origin: *"), "{head}");
    assert_eq!(s.get("/nowhere").0, 404);
    // The log's own thread writes the lines, soon after the answers.
    logged(
        &log,
        &[
            "GET /health 200 ",
            "OPTIONS /api/levels 200 ",
            "GET /nowhere 404 ",
        ],
    );
}

/// Waits, 30 s at most, for a request line starting with each of `wants`
/// (after its time and client) in the server's log at `log`.
fn logged(log: &Path, wants: &[&str]) {
    log_shows(log, &format!("all of {wants:?}"), |text| {
        wants
            .iter()
            .all(|want| requests(text).any(|l| l.starts_with(want)))
    });
}

/// Waits, 30 s at most, until the server's log at `log` is as `shows`
/// says (`what`, if not); returns the log.
fn log_shows(log: &Path, what: &str, shows: impl Fn(&str) -> bool) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(log).unwrap();
        if shows(&text) {
            return text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: not in {text}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A standard error that does not drain (a paused terminal, a logger that
/// pushes back) holds up no request: its thread queues the log lines, and
/// none is lost while fewer than 4,096 wait. 2,000 requests are about
/// twice what a pipe holds; a log written by the requests themselves
/// stopped them there.
#[test]
fn a_log_that_does_not_drain_holds_up_no_request() {
    let mut s = Server::logging_to(&["--db", awari_db().to_str().unwrap()], Stdio::piped());
    let log = s.child.stderr.take().unwrap();
    const REQUESTS: usize = 2000;
    for _ in 0..REQUESTS {
        let mut c = TcpStream::connect(&s.addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            c,
            "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        c.read_to_string(&mut answer)
            .expect("an answer while the log is not read");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
    let mut lines = BufReader::new(log).lines();
    let mut seen = 0;
    while seen < REQUESTS {
        let line = lines.next().expect("a log line per request").unwrap();
        assert_eq!(
            requests(&line)
                .next()
                .map(|r| r.starts_with("GET /health 200 ")),
            Some(true),
            "{line}"
        );
        seen += 1;
    }
}

/// The request lines of a server's log, each from its method on: every
/// line starts with its time, in UTC to the millisecond, and a request's
/// line then names the client (`2026-12-04T19:20:01.123Z 127.0.0.1:53422
/// GET /health 200 0.1 ms`).
fn requests(log: &str) -> impl Iterator<Item = &str> {
    log.lines().filter_map(|line| {
        let (time, rest) = line.split_once(' ').unwrap_or((line, ""));
        let b = time.as_bytes();
        assert!(
            b.len() == 24
                && [4, 7].iter().all(|&i| b[i] == b'-')
                && b[10] == b'T'
                && [13, 16].iter().all(|&i| b[i] == b':')
                && b[19] == b'.'
                && b[23] == b'Z',
            "no time at the start of {line:?}"
        );
        rest.strip_prefix("127.0.0.1:")
            .and_then(|rest| rest.split_once(' '))
            .filter(|(port, _)| port.parse::<u16>().is_ok())
            .map(|(_, request)| request)
    })
}

/// SIGTERM (what a service manager sends), as Ctrl-C, stops the server:
/// it stops listening at once, finishes the request under way (its body
/// sent late here), logs it, and exits 0. A request whose client sends
/// no more keeps it waiting until a second signal.
///
/// Each step waits for what the server did, not for a time: after fixed
/// sleeps (200 ms, 800 ms, 300 ms), a server run late by a loaded machine
/// could be signalled before it had its handlers or had accepted the
/// connection, be found still listening, or be sent both signals before
/// it took the first (it then took them for one, and waited 30 s).
#[test]
fn sigterm_finishes_the_requests_under_way_and_a_second_stops_the_wait() {
    let signal = |s: &Server, sig: i32| {
        // SAFETY: a signal to the child process this test started.
        assert_eq!(unsafe { libc::kill(s.child.id() as i32, sig) }, 0);
    };
    // The stop is logged with what it waits for, once the server no
    // longer listens.
    let stopping = |log: &Path| {
        log_shows(log, "the stop", |text| {
            text.lines().any(|l| {
                l.ends_with(
                    " mancaladb serve: stopping: 1 connection to finish, 30 s at most (again to stop now)",
                )
            })
        })
    };
    // A server logging to the scratch directory `name`, and a connection
    // on which it has read a batch's head, its body not yet sent.
    let body = br#"{"boards": ["1 1 1 1 1 2 4 2 3 0 0 0"]}"#;
    let under_way = |name: &str| {
        let (s, log) = Server::logging_to_file(name);
        s.catching_signals();
        let mut c = TcpStream::connect(&s.addr).unwrap();
        write!(
            c,
            "POST /api/awari/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .unwrap();
        taken(&c);
        (s, log, c)
    };
    // The server exits 0 within 5 s of `start`.
    let ends_at_once = |mut s: Server, start: std::time::Instant| {
        let status = s.child.wait().unwrap();
        assert!(status.success(), "{status:?}");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "waited {:?}",
            start.elapsed()
        );
    };

    // The body comes after the signal.
    let (mut s, log, mut c) = under_way("server-sigterm");
    signal(&s, libc::SIGTERM);
    stopping(&log);
    assert!(TcpStream::connect(&s.addr).is_err(), "still listening");
    c.write_all(body).unwrap();
    let mut answer = String::new();
    c.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let status = s.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        requests(&text).any(|l| l.starts_with("POST /api/awari/batch 200 ")),
        "{text}"
    );

    // A request whose client sends no more is waited on; a second signal
    // ends the wait. (Not an idle connection, as here before: hyper closes
    // one that sent nothing at the first signal, and the second went to a
    // server already gone.)
    let (s, log, _c) = under_way("server-sigterm-second");
    signal(&s, libc::SIGTERM);
    stopping(&log);
    signal(&s, libc::SIGINT);
    ends_at_once(s, std::time::Instant::now());

    // Two signals that arrive together (here both sent while the server
    // is stopped, so that it runs again with both pending) are two: the
    // second ends the wait at once. (Listening anew for the second wait,
    // the server missed one that came before, and waited its 30 s.)
    let (s, log, _c) = under_way("server-sigterm-together");
    signal(&s, libc::SIGSTOP);
    signal(&s, libc::SIGTERM);
    signal(&s, libc::SIGINT);
    let start = std::time::Instant::now();
    signal(&s, libc::SIGCONT);
    ends_at_once(s, start);
    stopping(&log);
}

/// A request whose client goes before its answer is logged too, with
/// status 499: the line was written only with an answer, so it was lost.
#[test]
fn a_request_the_client_abandons_is_logged() {
    let (s, log) = Server::logging_to_file("server-log-gone");
    // Counting level 18 (33 M positions, about 140 ms here) outlasts this
    // connection, closed as soon as the server has read the request. One
    // closed before its request is read is no request and is not logged: a
    // close a fixed 20 ms after the request was sent came first on a busy
    // machine, and on a much faster one the count could end before it.
    {
        let mut c = TcpStream::connect(&s.addr).unwrap();
        write!(c, "GET /api/stats/awari/18 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        taken(&c);
    }
    logged(&log, &["GET /api/stats/awari/18 499 "]);
    // The count went on: the next request is answered.
    assert_eq!(s.get("/api/stats/awari/18").0, 200);
    // A client that leaves in the middle of its body is gone too (its
    // body cannot be read: that is no bad request of a client there).
    {
        let mut c = TcpStream::connect(&s.addr).unwrap();
        write!(
            c,
            "POST /api/awari/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"boards\""
        )
        .unwrap();
        taken(&c);
    }
    logged(&log, &["POST /api/awari/batch 499 "]);
}

/// A client that never finishes a request's head has its connection closed
/// (10 s), rather than held open for good; the server goes on answering.
#[test]
fn an_unfinished_request_head_is_cut_off() {
    let s = Server::db(awari_db());
    let mut stalled = TcpStream::connect(&s.addr).unwrap();
    write!(stalled, "GET /health HTTP/1.1\r\nHost: x\r\n").unwrap();
    stalled
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let start = std::time::Instant::now();
    let mut rest = Vec::new();
    // Closed by the server: the read ends (no answer), well before 60 s.
    stalled.read_to_end(&mut rest).unwrap();
    let waited = start.elapsed().as_secs_f64();
    assert!((9.0..30.0).contains(&waited), "closed after {waited} s");
    assert_eq!(s.get("/health").0, 200);
}

/// Clients that send a batch's body slowly hold no turn of the costly
/// routes: with more of them than turns (two per core), a principal line
/// is still answered at once. (The turn used to be taken before the body
/// was read, and such clients held every turn until the 30 s limit.)
#[test]
fn slow_bodies_hold_no_turn_of_the_costly_routes() {
    let s = Server::db(awari_db());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let slow: Vec<TcpStream> = (0..2 * cores + 2)
        .map(|_| {
            let mut c = TcpStream::connect(&s.addr).unwrap();
            write!(
                c,
                "POST /api/awari/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"boards\""
            )
            .unwrap();
            c
        })
        .collect();
    // Their requests are read, each waiting for the rest of its body (a
    // fixed 300 ms could leave them queued on a loaded machine, and the
    // line then passed with nothing held).
    slow.iter().for_each(taken);
    let start = std::time::Instant::now();
    let (status, line) = s.get("/api/awari/mainline?board=1,1,1,1,1,2,4,2,3,0,0,0");
    assert_eq!(status, 200, "{line}");
    let waited = start.elapsed().as_secs_f64();
    assert!(waited < 5.0, "a line took {waited} s beside slow bodies");
    drop(slow);
}

/// A client that asks for large answers and never takes them has its
/// connection closed once the server's writes have waited 10 s (the
/// answers were held in memory for as long as the client kept the
/// connection).
#[test]
fn an_answer_the_client_never_takes_is_dropped() {
    let s = Server::db(awari_db());
    let body = batch_of(10_000);
    // One answer (about 5 MB), taken at once.
    let (status, whole) = s.post("/api/awari/batch", body.as_bytes());
    assert_eq!(status, 200);
    let whole = serde_json::to_vec(&whole).unwrap().len();
    // Three batches in a row on one connection (about 15 MB of answers,
    // more than the system's socket buffers hold), none of it read.
    let mut c = TcpStream::connect(&s.addr).unwrap();
    for _ in 0..3 {
        write!(
            c,
            "POST /api/awari/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
    }
    std::thread::sleep(Duration::from_secs(15));
    c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut got = Vec::new();
    // Closed by the server (an end, or a reset that may drop what had
    // arrived) in the first answers; a connection kept open would give the
    // three answers and then time the read out.
    let end = c.read_to_end(&mut got);
    assert!(
        !matches!(&end, Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)),
        "the server kept the connection: {} bytes read",
        got.len()
    );
    assert!(
        got.is_empty() || got.starts_with(b"HTTP/1.1 200"),
        "{:?}",
        String::from_utf8_lossy(&got[..got.len().min(200)])
    );
    assert!(
        got.len() < 2 * whole,
        "{} bytes of three {whole}-byte answers after 15 s untaken",
        got.len()
    );
    assert_eq!(s.get("/health").0, 200);
}

/// A request target is logged with its control and text-reordering
/// characters escaped, and cut after 1 KiB with its length: a request can
/// neither paint a terminal that shows the log nor fill the log's queue
/// with 64 KiB lines.
#[test]
fn request_targets_are_logged_escaped_and_cut() {
    let (s, log) = Server::logging_to_file("server-log-escaped");
    let mut c = TcpStream::connect(&s.addr).unwrap();
    // Raw UTF-8 in the target: U+009B (CSI) and U+202E (right-to-left), and a backslash.
    c.write_all(
        "GET /x\u{9b}31m\u{202e}y\\ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".as_bytes(),
    )
    .unwrap();
    let _ = c.read_to_end(&mut Vec::new());
    let long = format!("/health?{}", "a".repeat(5000));
    assert_eq!(s.get(&long).0, 400);
    logged(
        &log,
        &[
            "GET /x\\u{9b}31m\\u{202e}y\\u{5c} 404 ",
            &format!("GET /health?{}...[5008B] 400 ", "a".repeat(1016)),
        ],
    );
}

/// A batch holds its place from its body read until its answer is sent:
/// with every place held by answers no client takes (eight per turn, two
/// turns per core), one more batch is refused at once (503), other routes
/// answer, and the places come back when those clients go.
#[test]
fn answers_not_yet_taken_hold_the_places_of_batches() {
    let s = Server::db(awari_db());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // About 1 MB of answer each: more than a connection's buffers hold.
    let body = batch_of(2_000);
    let holding: Vec<TcpStream> = (0..8 * 2 * cores)
        .map(|_| {
            let mut c = TcpStream::connect(&s.addr).unwrap();
            write!(
                c,
                "POST /api/awari/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            c
        })
        .collect();
    std::thread::sleep(Duration::from_secs(2)); // all answered, none taken
    // Each of them has its place: each is answered (a 503 too many would
    // say fewer places, fewer turns).
    for mut c in &holding {
        let mut head = [0u8; 12];
        c.read_exact(&mut head).unwrap();
        assert_eq!(&head, b"HTTP/1.1 200", "{}", String::from_utf8_lossy(&head));
    }
    let (status, e) = s.post("/api/awari/batch", body.as_bytes());
    assert_eq!(
        (
            status,
            e["error"].as_str().map(|e| e.contains("too many batches"))
        ),
        (503, Some(true))
    );
    assert_eq!(s.get("/api/awari?board=1,1,1,1,1,2,4,2,3,0,0,0").0, 200);
    drop(holding);
    // The places come back as the server sees those clients gone: asked
    // for until then, 30 s at most (a fixed 500 ms could be too short for
    // a server run late by a loaded machine).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let (status, b) = loop {
        let (status, b) = s.post("/api/awari/batch", body.as_bytes());
        if status != 503 || std::time::Instant::now() > deadline {
            break (status, b);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(
        (status, b["results"].as_array().map(Vec::len)),
        (200, Some(2_000))
    );
}

/// `serve` says on its first line which directory it serves and where it
/// listens; before that, on standard error, it warns that a directory with
/// no level yet (of tables or of VU files) answers every board with a 404,
/// and says nothing of the kind of a directory that has levels.
#[test]
fn serve_names_its_directory_and_warns_of_one_with_no_level() {
    let empty = scratch("server-empty");
    let logs = scratch("server-empty-logs");
    for (k, (flag, dir)) in [
        ("--db", &empty),
        ("--vu", &empty),
        ("--db", &awari_db().to_path_buf()),
    ]
    .into_iter()
    .enumerate()
    {
        let log = logs.join(format!("serve-{k}.log"));
        let s = Server::logging_to(
            &[flag, dir.to_str().unwrap()],
            std::fs::File::create(&log).unwrap().into(),
        );
        let shown = dir.display();
        assert_eq!(
            s.said.trim_end(),
            format!(
                "mancaladb: serving {shown} on http://{}/ (Ctrl-C stops)",
                s.addr
            ),
            "{flag} {shown}"
        );
        // Said before the first line, so already in the log.
        let err = std::fs::read_to_string(&log).unwrap();
        let warning = format!(
            "mancaladb: {shown}: no levels there yet; every board is a 404 until they are built\n"
        );
        if *dir == empty {
            assert_eq!(err, warning, "{flag} {shown}");
        } else {
            assert_eq!(err, "", "{flag} {shown}");
        }
    }
}

/// The log lines still queued when the server stops are written before it
/// exits (it waits up to a second for them): here about a thousand, queued
/// behind a standard error that was not read until just after SIGTERM.
/// With no connection left to finish, no "stopping" line is logged.
#[test]
fn log_lines_queued_at_a_stop_are_written_before_the_server_exits() {
    let mut s = Server::logging_to(&["--db", awari_db().to_str().unwrap()], Stdio::piped());
    let log = s.child.stderr.take().unwrap();
    // About twice what a pipe holds: half of them wait in the queue.
    const REQUESTS: usize = 2000;
    for _ in 0..REQUESTS {
        assert_eq!(s.request("GET", "/health", "", b"").0, 200);
    }
    // The last connection, closed, is no longer counted as under way.
    std::thread::sleep(Duration::from_millis(100));
    // SAFETY: a signal to the child process this test started.
    assert_eq!(unsafe { libc::kill(s.child.id() as i32, libc::SIGTERM) }, 0);
    // The server has stopped listening and is waiting for its log: the
    // lines are read only now, all of them, to the end.
    std::thread::sleep(Duration::from_millis(300));
    let mut text = String::new();
    BufReader::new(log).read_to_string(&mut text).unwrap();
    assert!(s.child.wait().unwrap().success());
    let answered = requests(&text)
        .filter(|r| r.starts_with("GET /health 200 "))
        .count();
    assert_eq!(answered, REQUESTS, "lines lost at the stop");
    assert!(!text.contains("stopping"), "{}", &text[text.len() - 300..]);
}

/// A server needs 64 open files at least (its runtime, signals, listener,
/// log and a level's files): with a limit of 64 it serves, with 63 it
/// refuses to start, in one line.
#[test]
fn serve_starts_with_64_open_files_and_refuses_63() {
    use std::os::unix::process::CommandExt;
    let limited = |files: u64| {
        let mut cmd = bin();
        cmd.args(["serve", "--db", awari_db().to_str().unwrap(), "--port", "0"]);
        let limit = libc::rlimit {
            rlim_cur: files,
            rlim_max: files,
        };
        // SAFETY: setrlimit is async-signal-safe and touches only `limit`.
        unsafe {
            cmd.pre_exec(move || match libc::setrlimit(libc::RLIMIT_NOFILE, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            });
        }
        cmd
    };
    let mut cmd = limited(64);
    cmd.stderr(Stdio::null());
    let s = Server::spawned(cmd);
    let (status, a) = s.get("/api/awari?board=1,1,1,1,1,2,4,2,3,0,0,0");
    assert_eq!((status, &a["value"]), (200, &json!(0)), "{a}");
    let out = limited(63).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "mancaladb: the limit on open files is 63: serve needs at least 64 (ulimit -n)\n"
    );
}

/// A client that takes its answer after a pause, well within the 10 s the
/// server's writes may wait, gets all of it: about 4 MB of batch answer,
/// more than the connection's buffers hold, read after 2 s.
#[test]
fn an_answer_taken_after_a_pause_is_whole() {
    let s = Server::db(awari_db());
    let body = batch_of(8_000);
    let mut c = TcpStream::connect(&s.addr).unwrap();
    write!(
        c,
        "POST /api/awari/batch HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut raw = Vec::new();
    c.read_to_end(&mut raw).unwrap();
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..end]).to_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    let mut body = raw[end + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        body = unchunk(&body);
    }
    let answer: Value = serde_json::from_slice(&body).expect("the whole answer");
    assert_eq!(answer["results"].as_array().map(Vec::len), Some(8_000));
    assert!(body.len() > 3 << 20, "{} bytes", body.len());
}
