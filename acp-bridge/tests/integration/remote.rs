//! Remote mode end to end: the real `acp-client` and `acp-bridge` example
//! binaries, over `ws://`, over `wss://` (rustls on the bridge) and through
//! nginx terminating TLS in front of two bridges; the failures a user meets
//! (refused, wrong token, unknown CA, wrong name, bridge killed mid-turn)
//! each a one-line error and exit status 1 within a bounded time.
//!
//! Certificates are made here (rcgen): a throwaway CA, a server certificate
//! for `localhost` signed by it, and a second CA that signed nothing. Every
//! process listens on 127.0.0.1 (ephemeral ports) and is killed at the end,
//! also when a test fails (`Drop` guards).
//!
//! nginx (Debian's `nginx` package) is started by the test itself, as a
//! non-daemon with its own prefix, configuration, pid and logs in a temp
//! directory. Without nginx the nginx test prints a notice and passes,
//! unless `ACP_REQUIRE_NGINX=1` (CI), where it fails.
//!
//! `remote_bench` (ignored) measures a turn with a 6 MB line in each mode;
//! `scripts/remote_bench.sh` runs it on a release build.
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use acp_bridge::{remote, tls};
use serde_json::Value;

const TOKEN: &str = "t0k3n-for-tests-only";

use crate::front;
use crate::nginx::{free_port, nginx_binary, pki, Nginx, Pki};
use front::{Front, FrontConfig};

// ---------------------------------------------------------------- harness

/// A fresh temp directory, removed on drop unless the test failed.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "acp_remote_test_{}_{name}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }

    /// A session directory with a README for the mock agent to read.
    fn project(&self, name: &str) -> PathBuf {
        let d = self.0.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("README.md"), "# Demo\n\nA tiny project.\n").unwrap();
        d
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A child whose stdout and stderr are collected by threads.
struct Proc {
    child: Child,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
}

impl Proc {
    fn spawn(cmd: &mut Command) -> Self {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
        let collect = |r: Box<dyn Read + Send>| {
            let text = Arc::new(Mutex::new(String::new()));
            let sink = text.clone();
            std::thread::spawn(move || {
                let mut r = BufReader::new(r);
                let mut line = String::new();
                while r.read_line(&mut line).unwrap_or(0) > 0 {
                    sink.lock().unwrap().push_str(&line);
                    line.clear();
                }
            });
            text
        };
        let stdout = collect(Box::new(child.stdout.take().unwrap()));
        let stderr = collect(Box::new(child.stderr.take().unwrap()));
        Self {
            child,
            stdout,
            stderr,
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    fn stdout(&self) -> String {
        self.stdout.lock().unwrap().clone()
    }

    /// Waits until `what` shows in stderr (or stdout).
    fn wait_for(&mut self, what: &str, within: Duration) -> String {
        let end = Instant::now() + within;
        loop {
            let err = self.stderr();
            if err.contains(what) || self.stdout().contains(what) {
                return err;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                std::thread::sleep(Duration::from_millis(100));
                panic!(
                    "exited ({status}) before printing {what:?}:\n{}",
                    self.stderr()
                );
            }
            assert!(
                Instant::now() < end,
                "no {what:?} within {within:?}:\n{err}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The exit code and when the exit was seen (within 1 ms), or a panic
    /// (and a kill) after `within`.
    fn wait(&mut self, within: Duration) -> (i32, Instant) {
        let end = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let exited = Instant::now();
                // Let the reader threads take the last lines.
                std::thread::sleep(Duration::from_millis(50));
                return (status.code().unwrap_or(-1), exited);
            }
            if Instant::now() > end {
                let _ = self.child.kill();
                panic!(
                    "still running after {within:?}\nstdout:\n{}\nstderr:\n{}",
                    self.stdout(),
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The children of this process (from /proc).
    fn children(&self) -> Vec<u32> {
        crate::nginx::children(self.child.id())
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        for pid in self.children() {
            crate::nginx::signal(pid, "-KILL");
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `acp-bridge` on 127.0.0.1, any free port, with the test token.
struct Bridge {
    proc: Proc,
    addr: SocketAddr,
    _logs: Scratch,
}

impl Bridge {
    fn start(extra: &[&str]) -> Self {
        Self::start_with(TOKEN, extra)
    }

    fn start_with(token: &str, extra: &[&str]) -> Self {
        let logs = Scratch::new("bridge_logs");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_acp-bridge"));
        cmd.args(["--port", "0", "--token", token, "--log-dir"])
            .arg(logs.path())
            .args(extra)
            .env_remove("GEMINI_PORT")
            .env_remove("GEMINI_BRIDGE_TOKEN")
            .env_remove("GEMINI_BRIDGE_AGENT")
            .env_remove("GEMINI_BRIDGE_TLS_CERT")
            .env_remove("GEMINI_BRIDGE_TLS_KEY");
        let mut proc = Proc::spawn(&mut cmd);
        let err = proc.wait_for("listening on ", Duration::from_secs(30));
        let addr = err
            .split("listening on ")
            .nth(1)
            .and_then(|s| s.split("://").nth(1))
            .and_then(|s| s.split_whitespace().next())
            .unwrap_or_else(|| panic!("no address in {err:?}"))
            .parse()
            .unwrap();
        Self {
            proc,
            addr,
            _logs: logs,
        }
    }

    fn start_tls(pki: &Pki, extra: &[&str]) -> Self {
        let mut args = vec![
            "--tls-cert",
            pki.cert.to_str().unwrap(),
            "--tls-key",
            pki.key.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        Self::start(&args)
    }

    fn port(&self) -> u16 {
        self.addr.port()
    }
}

/// What one `acp-client` run gave.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    secs: f64,
    /// The `--summary-json` object (last stdout line).
    summary: Value,
}

impl Run {
    fn error(&self) -> &str {
        self.summary["error"].as_str().unwrap_or("")
    }

    fn assert_full_turn(&self, project: &Path) {
        let s = &self.summary;
        assert_eq!(self.code, 0, "{self:#?}");
        assert_eq!(s["stopReason"], "end_turn", "{self:#?}");
        assert!(s["messageChunks"].as_u64() > Some(0), "{self:#?}");
        assert!(s["toolCalls"].as_u64() >= Some(4), "{self:#?}");
        assert_eq!(s["permissionRequests"], 2, "{self:#?}");
        assert_eq!(s["badLines"], 0, "{self:#?}");
        assert_eq!(s["turnProblems"], 0, "{self:#?}");
        // fs/* served here, in the session directory.
        assert!(s["fsReads"].as_u64() >= Some(1), "{self:#?}");
        assert_eq!(s["fsWrites"], 1, "{self:#?}");
        let notes = std::fs::read_to_string(project.join("NOTES.md")).unwrap();
        assert!(notes.starts_with("# Notes"), "{notes}");
        // The turn is rendered as in the other modes.
        assert!(self.stdout.contains("stop reason: end_turn"), "{self:#?}");
        assert!(self.stdout.contains("List the project files"), "{self:#?}");
    }

    /// A failure: exit 1, one line on stderr naming `what`, quickly, and
    /// the token nowhere.
    fn assert_failure(&self, what: &[&str], within: f64) {
        assert_eq!(self.code, 1, "{self:#?}");
        assert!(self.secs < within, "took {:.1} s: {self:#?}", self.secs);
        let line = self
            .stderr
            .lines()
            .find(|l| l.starts_with("acp-client: error: "))
            .unwrap_or_else(|| panic!("no error line: {self:#?}"));
        for w in what {
            assert!(line.contains(w), "{w:?} not in {line:?}");
            assert!(self.error().contains(w), "{w:?} not in the summary");
        }
        assert_eq!(self.summary["stopReason"], Value::Null);
        assert!(!self.stdout.contains(TOKEN) && !self.stderr.contains(TOKEN));
    }
}

fn client(args: &[&str], envs: &[(&str, &str)], within: Duration) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_acp-client"));
    // acp-client rejects permission requests by default when stdin is not
    // a terminal; these turns are about the transport.
    cmd.args(["--summary-json", "--permission", "allow"])
        .args(args)
        .env_remove("ACP_BRIDGE_TOKEN")
        .envs(envs.iter().copied());
    let t0 = Instant::now();
    let mut p = Proc::spawn(&mut cmd);
    let (code, exited) = p.wait(within);
    let stdout = p.stdout();
    let summary = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    Run {
        code,
        stdout,
        stderr: p.stderr(),
        secs: (exited - t0).as_secs_f64(),
        summary,
    }
}

const LIMIT: Duration = Duration::from_secs(60);

/// `GET /health` over TLS, trusting `ca`: the raw response.
fn https_get(port: u16, path: &str, ca: &Path) -> String {
    let config = tls::client_config(Some(ca)).unwrap();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let mut conn = rustls::ClientConnection::new(config, name).unwrap();
    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut stream = rustls::Stream::new(&mut conn, &mut tcp);
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    // A peer closing without close_notify is an error after the data.
    let _ = stream.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// A session directory whose README and NOTES are symlinks out of it.
fn escaping_project(scratch: &Scratch) -> (PathBuf, PathBuf) {
    let p = scratch.project("escape");
    let outside = scratch.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "the-secret-outside\n").unwrap();
    std::fs::write(outside.join("victim.txt"), "keep\n").unwrap();
    std::fs::remove_file(p.join("README.md")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), p.join("README.md")).unwrap();
    std::os::unix::fs::symlink(outside.join("victim.txt"), p.join("NOTES.md")).unwrap();
    (p, outside)
}

fn assert_confined(run: &Run, outside: &Path) {
    let s = &run.summary;
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(s["stopReason"], "end_turn", "{run:#?}");
    assert!(s["fsRefused"].as_u64() >= Some(2), "{run:#?}");
    assert_eq!(s["fsReads"], 0, "{run:#?}");
    assert_eq!(s["fsWrites"], 0, "{run:#?}");
    assert!(run.stdout.contains("fs: refused read"), "{run:#?}");
    assert!(!run.stdout.contains("the-secret-outside"), "{run:#?}");
    assert_eq!(
        std::fs::read_to_string(outside.join("victim.txt")).unwrap(),
        "keep\n"
    );
}

// ---------------------------------------------------------------- tests

#[test]
fn full_turn_over_ws_with_fs_served_and_confined_here() {
    let scratch = Scratch::new("ws");
    let bridge = Bridge::start(&[]);
    let url = format!("ws://127.0.0.1:{}/", bridge.port());

    // Token from the environment.
    let project = scratch.project("p1");
    let run = client(
        &["--connect", &url, "--cwd", project.to_str().unwrap()],
        &[("ACP_BRIDGE_TOKEN", TOKEN)],
        LIMIT,
    );
    run.assert_full_turn(&project);
    assert!(run.stderr.contains(&format!("connected to {url}")));
    assert!(!run.stdout.contains(TOKEN) && !run.stderr.contains(TOKEN));

    // Token in the URL: moved to the header, shown as ***.
    let project = scratch.project("p2");
    let with_token = format!("{url}?token={TOKEN}");
    let run = client(
        &["--connect", &with_token, "--cwd", project.to_str().unwrap()],
        &[],
        LIMIT,
    );
    run.assert_full_turn(&project);
    assert!(run.stderr.contains("?token=***"), "{run:#?}");
    assert!(!run.stdout.contains(TOKEN) && !run.stderr.contains(TOKEN));

    // The agent (on the bridge) asks for files outside the session
    // directory through symlinks: the client refuses.
    let (p, outside) = escaping_project(&scratch);
    let run = client(
        &[
            "--connect",
            &url,
            "--token",
            TOKEN,
            "--cwd",
            p.to_str().unwrap(),
        ],
        &[],
        LIMIT,
    );
    assert_confined(&run, &outside);
}

#[test]
fn full_turn_over_streamable_http_and_https() {
    let scratch = Scratch::new("http");
    let bridge = Bridge::start(&[]);
    let url = format!("http://127.0.0.1:{}/acp", bridge.port());
    let project = scratch.project("p1");
    let run = client(
        &["--connect", &url, "--cwd", project.to_str().unwrap()],
        &[("ACP_BRIDGE_TOKEN", TOKEN)],
        LIMIT,
    );
    run.assert_full_turn(&project);
    assert!(run.stderr.contains(&format!("connected to {url}")));
    assert!(!run.stdout.contains(TOKEN) && !run.stderr.contains(TOKEN));
    // The agent's fs requests come on the session stream; confinement holds.
    let (p, outside) = escaping_project(&scratch);
    let run = client(
        &[
            "--connect",
            &url,
            "--token",
            TOKEN,
            "--cwd",
            p.to_str().unwrap(),
        ],
        &[],
        LIMIT,
    );
    assert_confined(&run, &outside);
    // A wrong token: the initialize POST is refused with 401, one line.
    let run = client(
        &[
            "--connect",
            &url,
            "--token",
            "wrong",
            "--cwd",
            project.to_str().unwrap(),
        ],
        &[],
        LIMIT,
    );
    run.assert_failure(&["HTTP 401"], 10.0);

    let pki = pki(scratch.path());
    let secure = Bridge::start_tls(&pki, &[]);
    let url = format!("https://localhost:{}/acp", secure.port());
    let project = scratch.project("p2");
    let run = client(
        &[
            "--connect",
            &url,
            "--ca-cert",
            pki.ca.to_str().unwrap(),
            "--cwd",
            project.to_str().unwrap(),
        ],
        &[("ACP_BRIDGE_TOKEN", TOKEN)],
        LIMIT,
    );
    run.assert_full_turn(&project);
}

/// The HTTP versions of the requests a front got, and whether each
/// method of the profile was among them.
fn versions(front: &Front) -> (Vec<hyper::Version>, [bool; 3]) {
    let seen = front.seen();
    let has = |m: &str| seen.iter().any(|s| s.method == m);
    (
        seen.iter().map(|s| s.version).collect(),
        [has("POST"), has("GET"), has("DELETE")],
    )
}

/// `acp-client` over Streamable HTTP through `front` (TLS when `tls`).
fn turn_through(front: &Front, tls: bool, ca: &Path, project: &Path) -> Run {
    let url = if tls {
        format!("https://localhost:{}/acp", front.port())
    } else {
        format!("http://127.0.0.1:{}/acp", front.port())
    };
    let mut args = vec!["--connect", &url, "--cwd", project.to_str().unwrap()];
    if tls {
        args.extend(["--ca-cert", ca.to_str().unwrap()]);
    }
    client(&args, &[("ACP_BRIDGE_TOKEN", TOKEN)], LIMIT)
}

/// Full turns through a front that speaks HTTP/2 (`http2`) or HTTP/1.1
/// only, over plain TCP and TLS: every request the client made used
/// `want`.
fn turns_use_version(http2: bool, want: hyper::Version, name: &str) {
    let scratch = Scratch::new(name);
    let pki = pki(scratch.path());
    let bridge = Bridge::start(&[]);
    for tls in [false, true] {
        let config = FrontConfig {
            http2,
            tls: tls.then(|| (pki.cert.clone(), pki.key.clone())),
            ..FrontConfig::default()
        };
        let front = Front::start(bridge.addr, config);
        let plain = if http2 { "h2c" } else { "plain" };
        let project = scratch.project(if tls { "tls" } else { plain });
        let run = turn_through(&front, tls, &pki.ca, &project);
        run.assert_full_turn(&project);
        let (versions, methods) = versions(&front);
        assert!(
            front.seen().iter().all(|s| s.status < 300),
            "{:?}",
            front.seen()
        );
        assert!(
            versions.iter().all(|v| *v == want),
            "tls {tls}: {:?}",
            front.seen()
        );
        assert_eq!(methods, [true; 3], "tls {tls}: {:?}", front.seen());
    }
}

#[test]
fn streamable_http_client_speaks_http2_by_alpn_and_by_prior_knowledge() {
    turns_use_version(true, hyper::Version::HTTP_2, "h2");
}

#[test]
fn streamable_http_client_falls_back_to_http1() {
    turns_use_version(false, hyper::Version::HTTP_11, "h1");
}

/// Each request `front` got carried the cookies it had set by then (the
/// affinity cookie after the first refusal, the route cookie after the
/// first answer), and never one it must not get back.
fn assert_cookies_returned(front: &Front) {
    let seen = front.seen();
    let first = seen.first().unwrap();
    assert_eq!((first.status, &first.cookie), (307, &None), "{seen:?}");
    for (n, s) in seen.iter().enumerate().skip(1) {
        let pairs: Vec<&str> = s.cookie.as_deref().unwrap_or("").split("; ").collect();
        assert!(pairs.contains(&front::AFFINITY), "request {n}: {seen:?}");
        if n > 1 {
            assert!(pairs.contains(&front::ROUTE), "request {n}: {seen:?}");
        }
        for never in front::NEVER_SENT {
            let name = never.split('=').next().unwrap();
            assert!(
                !pairs.iter().any(|p| p.starts_with(&format!("{name}="))),
                "request {n}: {seen:?}"
            );
        }
        assert!(s.status < 300, "request {n}: {seen:?}");
    }
}

#[test]
fn cookies_are_kept_and_returned_on_both_profiles() {
    let scratch = Scratch::new("cookies");
    let bridge = Bridge::start(&[]);
    // Streamable HTTP, over HTTP/2 and over HTTP/1.1: every POST, GET and
    // DELETE carries the cookies.
    for http2 in [true, false] {
        let config = FrontConfig {
            http2,
            affinity: true,
            ..FrontConfig::default()
        };
        let front = Front::start(bridge.addr, config);
        let project = scratch.project(if http2 { "h2" } else { "h1" });
        let run = turn_through(&front, false, Path::new(""), &project);
        run.assert_full_turn(&project);
        assert_cookies_returned(&front);
        let (_, methods) = versions(&front);
        assert_eq!(methods, [true; 3], "http2 {http2}: {:?}", front.seen());
    }
    // WebSocket: the upgrade, refused for want of the cookie, is made
    // again with it.
    let config = FrontConfig {
        http2: true,
        affinity: true,
        ..FrontConfig::default()
    };
    let front = Front::start(bridge.addr, config);
    let project = scratch.project("ws");
    let url = format!("ws://127.0.0.1:{}/acp", front.port());
    let run = client(
        &["--connect", &url, "--cwd", project.to_str().unwrap()],
        &[("ACP_BRIDGE_TOKEN", TOKEN)],
        LIMIT,
    );
    run.assert_full_turn(&project);
    assert_cookies_returned(&front);
    let statuses: Vec<u16> = front.seen().iter().map(|s| s.status).collect();
    assert_eq!(statuses, [307, 101]);
}

/// A Streamable HTTP connection over HTTP/2 on `io`, every request a
/// stream of the one connection: `initialize`, the connection's event
/// stream, `session/new` and its answer on that stream.
async fn h2_session<I>(io: I, base: &str)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use hyper::{Request, StatusCode, Version};

    let (mut send, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(io),
    )
    .await
    .unwrap();
    tokio::spawn(conn);
    let request = |method: &str, connection: Option<&str>, body: &str| {
        let mut req = Request::builder()
            .method(method)
            .uri(format!("{base}/acp"))
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(id) = connection {
            req = req.header("acp-connection-id", id);
        }
        req.body(Full::new(Bytes::from(body.to_owned()))).unwrap()
    };
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    let resp = send
        .send_request(request("POST", None, init))
        .await
        .unwrap();
    assert_eq!(
        (resp.status(), resp.version()),
        (StatusCode::OK, Version::HTTP_2)
    );
    let id = resp.headers()["acp-connection-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let answer: Value =
        serde_json::from_slice(&resp.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert!(answer["result"]["protocolVersion"].is_number(), "{answer}");

    let events = send
        .send_request(request("GET", Some(&id), ""))
        .await
        .unwrap();
    assert_eq!(events.status(), StatusCode::OK);
    let new = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#;
    let resp = send
        .send_request(request("POST", Some(&id), new))
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    let mut body = events.into_body();
    let mut text = String::new();
    let created = loop {
        let frame = body.frame().await.expect("stream ended").unwrap();
        text.push_str(&String::from_utf8_lossy(
            &frame.into_data().unwrap_or_default(),
        ));
        let found = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .find(|m| m["id"] == 1);
        if let Some(m) = found {
            break m;
        }
    };
    assert!(created["result"]["sessionId"].is_string(), "{created}");

    // One-off answers (their `Connection: close` has no meaning in HTTP/2)
    // leave the connection usable.
    let mut wrong = request("POST", None, init);
    wrong
        .headers_mut()
        .insert("authorization", "Bearer wrong".parse().unwrap());
    let resp = send.send_request(wrong).await.unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let health = Request::get(format!("{base}/health"))
        .body(Full::new(Bytes::new()))
        .unwrap();
    let resp = send.send_request(health).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(
        &resp.into_body().collect().await.unwrap().to_bytes()[..],
        b"ok"
    );
}

#[test]
fn bridge_answers_http2_by_prior_knowledge_and_by_alpn() {
    let scratch = Scratch::new("h2_server");
    let pki = pki(scratch.path());
    let plain = Bridge::start(&[]);
    let secure = Bridge::start_tls(&pki, &[]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let tcp = tokio::net::TcpStream::connect(plain.addr).await.unwrap();
        h2_session(tcp, &format!("http://127.0.0.1:{}", plain.port())).await;

        let mut config = (*tls::client_config(Some(&pki.ca)).unwrap()).clone();
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let tcp = tokio::net::TcpStream::connect(secure.addr).await.unwrap();
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let stream = tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(name, tcp)
            .await
            .unwrap();
        assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
        h2_session(stream, &format!("https://localhost:{}", secure.port())).await;
    });
}

#[test]
fn full_turn_over_wss_and_health_over_https() {
    let scratch = Scratch::new("wss");
    let pki = pki(scratch.path());
    let bridge = Bridge::start_tls(&pki, &[]);
    assert!(bridge.proc.stderr().contains("listening on wss://"));
    let url = format!("wss://localhost:{}/", bridge.port());
    let ca = pki.ca.to_str().unwrap();

    let project = scratch.project("p");
    let run = client(
        &[
            "--connect",
            &url,
            "--ca-cert",
            ca,
            "--cwd",
            project.to_str().unwrap(),
        ],
        &[("ACP_BRIDGE_TOKEN", TOKEN)],
        LIMIT,
    );
    run.assert_full_turn(&project);

    let (p, outside) = escaping_project(&scratch);
    let run = client(
        &[
            "--connect",
            &url,
            "--ca-cert",
            ca,
            "--cwd",
            p.to_str().unwrap(),
        ],
        &[("ACP_BRIDGE_TOKEN", TOKEN)],
        LIMIT,
    );
    assert_confined(&run, &outside);

    let health = https_get(bridge.port(), "/health", &pki.ca);
    assert!(health.starts_with("HTTP/1.1 200 OK"), "{health}");
    assert!(health.ends_with("\r\n\r\nok"), "{health}");
}

#[test]
fn failures_are_one_line_and_quick() {
    let scratch = Scratch::new("fail");
    let pki = pki(scratch.path());
    let plain = Bridge::start(&[]);
    let secure = Bridge::start_tls(&pki, &[]);
    let cwd = scratch.project("p");
    let cwd = cwd.to_str().unwrap();
    let ws = format!("ws://127.0.0.1:{}/", plain.port());
    let wss = |host: &str| format!("wss://{host}:{}/", secure.port());
    let within = Duration::from_secs(20);

    // Nothing listening.
    let closed = format!("ws://127.0.0.1:{}/", free_port());
    let run = client(&["--connect", &closed, "--cwd", cwd], &[], within);
    run.assert_failure(&["cannot connect to", "refused"], 10.0);

    // No token, a wrong token (also over TLS): HTTP 401.
    let run = client(&["--connect", &ws, "--cwd", cwd], &[], within);
    run.assert_failure(&["HTTP 401", "token required", "ACP_BRIDGE_TOKEN"], 10.0);
    let run = client(
        &["--connect", &ws, "--cwd", cwd],
        &[("ACP_BRIDGE_TOKEN", "not-the-token")],
        within,
    );
    run.assert_failure(&["HTTP 401", "wrong token"], 10.0);
    assert!(!run.stderr.contains("not-the-token"));
    let url = format!("{}?token=not-the-token", wss("localhost"));
    let run = client(
        &["--connect", &url, "--ca-cert", pki.ca.to_str().unwrap()],
        &[],
        within,
    );
    run.assert_failure(&["HTTP 401", "wrong token", "?token=***"], 10.0);
    assert!(!run.stderr.contains("not-the-token"));

    // The server's certificate from a CA we were not told to trust, and
    // the public roots (no --ca-cert) do not know it either.
    let run = client(
        &[
            "--connect",
            &wss("localhost"),
            "--ca-cert",
            pki.other_ca.to_str().unwrap(),
        ],
        &[("ACP_BRIDGE_TOKEN", TOKEN)],
        within,
    );
    run.assert_failure(&["tls handshake", "UnknownIssuer", "--ca-cert"], 10.0);
    let run = client(
        &["--connect", &wss("localhost")],
        &[("ACP_BRIDGE_TOKEN", TOKEN)],
        within,
    );
    run.assert_failure(&["tls handshake", "UnknownIssuer"], 10.0);

    // A name the certificate does not carry (it names localhost only).
    let run = client(
        &[
            "--connect",
            &wss("127.0.0.1"),
            "--ca-cert",
            pki.ca.to_str().unwrap(),
        ],
        &[("ACP_BRIDGE_TOKEN", TOKEN)],
        within,
    );
    run.assert_failure(&["tls handshake", "not valid for name"], 10.0);

    // wss:// to a plain bridge.
    let run = client(
        &[
            "--connect",
            &format!("wss://localhost:{}/", plain.port()),
            "--ca-cert",
            pki.ca.to_str().unwrap(),
        ],
        &[("ACP_BRIDGE_TOKEN", TOKEN)],
        within,
    );
    run.assert_failure(&["tls handshake", "try ws://"], 10.0);

    // ws:// to a TLS bridge.
    let run = client(
        &["--connect", &format!("ws://127.0.0.1:{}/", secure.port())],
        &[("ACP_BRIDGE_TOKEN", TOKEN)],
        within,
    );
    run.assert_failure(&["websocket handshake", "try wss://"], 10.0);

    // Both bridges are still fine after all that.
    let run = client(
        &["--connect", &ws, "--cwd", cwd],
        &[("ACP_BRIDGE_TOKEN", TOKEN)],
        LIMIT,
    );
    assert_eq!(run.summary["stopReason"], "end_turn", "{run:#?}");
}

#[test]
fn modes_exclude_each_other() {
    let cases: [&[&str]; 6] = [
        &["--agent", "cat", "--connect", "ws://127.0.0.1:1/"],
        &["--token", "x"],
        &["--agent", "cat", "--ca-cert", "ca.pem"],
        &["--connect", "ws://127.0.0.1:1/", "--ca-cert", "ca.pem"],
        &["--connect", "ws://127.0.0.1:1/", "--big-bytes", "10"],
        &["--agent", "cat", "--mock-delay-ms", "10"],
    ];
    for args in cases {
        let run = client(args, &[], Duration::from_secs(10));
        assert_eq!(run.code, 2, "{args:?}: {run:#?}");
        assert!(run.stderr.contains("Usage: acp-client"), "{run:#?}");
    }
    let run = client(&["--connect", "ftp://127.0.0.1:1/"], &[], LIMIT);
    run.assert_failure(&["ws://, wss://, http:// or https://"], 10.0);
}

#[test]
fn bridge_refuses_tls_or_public_bind_without_token() {
    let scratch = Scratch::new("notoken");
    let pki = pki(scratch.path());
    let refuse = |args: &[&str], what: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_acp-bridge"))
            .args(["--port", "0", "--log-dir"])
            .arg(scratch.path())
            .args(args)
            .env_remove("GEMINI_BRIDGE_TOKEN")
            .env_remove("GEMINI_BRIDGE_TLS_CERT")
            .env_remove("GEMINI_BRIDGE_TLS_KEY")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(what), "{what:?} not in {err}");
    };
    let (cert, key) = (pki.cert.to_str().unwrap(), pki.key.to_str().unwrap());
    refuse(
        &["--tls-cert", cert, "--tls-key", key],
        "serving TLS needs a token",
    );
    refuse(&["--host", "0.0.0.0"], "needs a token");
    refuse(
        &["--tls-cert", cert, "--token", "t"],
        "--tls-cert needs --tls-key",
    );
    // A key that does not belong to the certificate, a missing file.
    refuse(
        &["--tls-cert", cert, "--tls-key", cert, "--token", "t"],
        "no private key",
    );
    refuse(
        &[
            "--tls-cert",
            "/nonexistent.pem",
            "--tls-key",
            key,
            "--token",
            "t",
        ],
        "/nonexistent.pem",
    );
}

#[test]
fn bridge_killed_mid_turn_is_an_error_not_a_hang() {
    let scratch = Scratch::new("kill");
    let pki = pki(scratch.path());
    for secure in [false, true] {
        // Slow steps, so the turn is still running when the bridge dies.
        let mut bridge = if secure {
            Bridge::start_tls(&pki, &["--mock-args", "--delay-ms 200"])
        } else {
            Bridge::start(&["--mock-args", "--delay-ms 200"])
        };
        let project = scratch.project(if secure { "wss" } else { "ws" });
        let url = if secure {
            format!("wss://localhost:{}/", bridge.port())
        } else {
            format!("ws://127.0.0.1:{}/", bridge.port())
        };
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_acp-client"));
        cmd.args([
            "--summary-json",
            "--permission",
            "allow",
            // The bridge resumes, so the client would dial it again for
            // its reconnect budget: off here, the error is the point.
            "--reconnect-secs",
            "0",
            "--connect",
            &url,
            "--cwd",
        ])
        .arg(&project)
        .env("ACP_BRIDGE_TOKEN", TOKEN);
        if secure {
            cmd.arg("--ca-cert").arg(&pki.ca);
        }
        let t0 = Instant::now();
        let mut c = Proc::spawn(&mut cmd);
        // The first tool call is on screen: the turn is under way.
        c.wait_for("List the project files", Duration::from_secs(30));
        let killed = Instant::now();
        // The bridge first: killed after its agent, it could still tell the
        // client that the agent exited (a different, also clean, error).
        let agents = bridge.proc.children();
        let _ = bridge.proc.child.kill();
        for pid in agents {
            crate::nginx::signal(pid, "-KILL");
        }
        let (code, exited) = c.wait(Duration::from_secs(20));
        let took = (exited - killed).as_secs_f64();
        let (stdout, stderr) = (c.stdout(), c.stderr());
        assert_eq!(code, 1, "{stdout}\n{stderr}");
        assert!(took < 5.0, "exit {took:.1} s after the kill");
        let line = stderr
            .lines()
            .find(|l| l.starts_with("acp-client: error: "))
            .unwrap_or_else(|| panic!("no error line: {stderr}"));
        assert!(line.contains("session/prompt"), "{line}");
        assert!(line.contains(&format!("bridge at {url}")), "{line}");
        let summary: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        assert_eq!(summary["stopReason"], Value::Null);
        assert!(summary["messageChunks"].as_u64() > Some(0));
        assert!(t0.elapsed() < Duration::from_secs(40));
    }
}

// ---------------------------------------------------------------- nginx

#[test]
fn nginx_terminates_tls_in_front_of_two_bridges() {
    let Some(bin) = nginx_binary() else { return };
    let scratch = Scratch::new("nginx_test");
    let pki = pki(scratch.path());
    // The bridges listen on loopback without TLS, with a token (nginx
    // makes them public); each agent adds a 6 MB tool output to its turn.
    let big = 6_000_000usize;
    let mock = format!("--big-bytes {big}");
    let mut b1 = Bridge::start(&["--mock-args", &mock]);
    let b2 = Bridge::start(&["--mock-args", &mock]);
    let nginx = Nginx::start(&bin, "acp-bridge.conf", &pki, &[b1.port(), b2.port()]);
    let url = format!("wss://localhost:{}/", nginx.port);
    let ca = pki.ca.to_str().unwrap();
    let turn = |name: &str, url: &str| {
        let project = scratch.project(name);
        let run = client(
            &[
                "--connect",
                url,
                "--ca-cert",
                ca,
                "--cwd",
                project.to_str().unwrap(),
            ],
            &[],
            LIMIT,
        );
        (run, project)
    };

    // Health through nginx.
    let health = https_get(nginx.port, "/health", &pki.ca);
    assert!(health.starts_with("HTTP/1.1 200 OK"), "{health}");
    assert!(health.ends_with("\r\n\r\nok"), "{health}");

    // Two full turns, a 6 MB line in each, token in the URL (moved to the
    // header by the client, so it never reaches nginx's access log).
    let with_token = format!("{url}?token={TOKEN}");
    for name in ["t1", "t2"] {
        let (run, project) = turn(name, &with_token);
        run.assert_full_turn(&project);
        assert!(
            run.summary["largestLineBytes"].as_u64() > Some(big as u64),
            "{run:#?}"
        );
    }
    let log = nginx.access_log();
    assert!(log.contains("\"GET / HTTP/1.1\" 101"), "{log}");
    assert!(log.contains("\"GET /health HTTP/1.1\" 200"), "{log}");
    assert!(!log.contains(TOKEN), "{log}");

    // A wrong token: the bridge's 401, through nginx.
    let (run, _) = turn("bad", &format!("{url}?token=wrong"));
    run.assert_failure(&["HTTP 401", "wrong token"], 10.0);

    // One bridge gone: nginx sends the next connections to the other.
    for pid in b1.proc.children() {
        crate::nginx::signal(pid, "-KILL");
    }
    let _ = b1.proc.child.kill();
    let _ = b1.proc.child.wait();
    for name in ["t3", "t4"] {
        let (run, project) = turn(name, &with_token);
        run.assert_full_turn(&project);
    }
    drop(b2);
}

// ---------------------------------------------------------------- remote.rs

#[test]
fn urls_are_shown_without_tokens() {
    use remote::{redact, target};
    assert_eq!(
        redact("wss://h:1/x?a=1&token=s3cret&b=2"),
        "wss://h:1/x?a=1&token=***&b=2"
    );
    assert_eq!(redact("ws://u:pw@h/"), "ws://***@h/");
    assert_eq!(redact("ws://h:4444/"), "ws://h:4444/");
    let t = target("ws://127.0.0.1:9/?token=abc&x=1", None).unwrap();
    assert!(t.has_token());
    assert_eq!(t.request().uri().to_string(), "ws://127.0.0.1:9/?x=1");
    assert_eq!(t.shown, "ws://127.0.0.1:9/?token=***&x=1");
    assert!(!format!("{:?}", t.request()).contains("abc"));
    let t = target("ws://127.0.0.1:9/?token=abc", Some("given")).unwrap();
    assert_eq!(
        t.request().headers()["authorization"].to_str().unwrap(),
        "Bearer given"
    );
    assert_eq!(t.request().uri().to_string(), "ws://127.0.0.1:9/");
    let t = target("wss://[::1]/", Some("T")).unwrap();
    assert_eq!((t.host.as_str(), t.port, t.tls), ("::1", 443, true));
    assert!(t.is_loopback());
    assert!(!target("ws://example.org/", None).unwrap().is_loopback());
    assert!(target("ftp://h/", None).is_err());
    // Streamable HTTP: http:// and https://.
    let t = target("https://h/acp", None).unwrap();
    assert_eq!((t.port, t.tls, t.http), (443, true, true));
    assert!(target("http://h/", None).unwrap().http);
    assert!(!target("ws://h/", None).unwrap().http);
    assert!(target("ws:///", None).is_err());
}

// ---------------------------------------------------------------- bench

/// Median of `xs` (sorted in place).
fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// One turn with a 6 MB tool output, in every mode: embedded, local
/// process, ws:// bridge, wss:// bridge (rustls), wss:// through nginx to
/// a ws:// bridge. Wall time of the whole `acp-client` run (start,
/// connect, initialize, session/new, the turn, exit), median of
/// `REMOTE_BENCH_REPS` (default 7) after one warm-up; also a turn without
/// the big output, so the cost of the 6 MB line alone shows. Run with
/// `scripts/remote_bench.sh` (release build); not a timed test.
#[test]
#[ignore = "a measurement: run scripts/remote_bench.sh"]
fn remote_bench() {
    let reps: usize = std::env::var("REMOTE_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let big: usize = std::env::var("REMOTE_BENCH_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6_000_000);
    let scratch = Scratch::new("bench");
    let pki = pki(scratch.path());
    let ca = pki.ca.to_str().unwrap().to_owned();
    let mock = std::path::PathBuf::from(env!("CARGO_BIN_EXE_acp-mock-agent"));
    let nginx_bin = nginx_binary();

    let measure =
        |label: &str, args: &dyn Fn(usize) -> (Vec<String>, Vec<Bridge>, Option<Nginx>)| {
            let mut row = Vec::new();
            for bytes in [0, big] {
                let (args, bridges, nginx) = args(bytes);
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let mut times = Vec::new();
                for i in 0..=reps {
                    let project = scratch.project(&format!("b{i}"));
                    let mut a = args.clone();
                    a.extend(["--cwd", project.to_str().unwrap()]);
                    let run = client(&a, &[("ACP_BRIDGE_TOKEN", TOKEN)], LIMIT);
                    assert_eq!(run.summary["stopReason"], "end_turn", "{label}: {run:#?}");
                    assert!(run.summary["largestLineBytes"].as_u64() >= Some(bytes as u64));
                    if i > 0 {
                        times.push(run.secs * 1000.0);
                    }
                }
                drop((bridges, nginx));
                row.push(median(&mut times));
            }
            let (small, large) = (row[0], row[1]);
            let mb = big as f64 / 1e6;
            println!(
                "| {label} | {small:.1} | {large:.1} | {:.1} | {:.1} |",
                mb / (large / 1000.0),
                mb / ((large - small).max(0.001) / 1000.0)
            );
        };

    println!(
        "\n{} MB tool output in one line; median of {reps} runs after a warm-up; wall time of a whole acp-client run\n",
        big as f64 / 1e6
    );
    println!("| mode | small turn (ms) | turn with the big line (ms) | MB/s (whole run) | MB/s (the big line alone) |");
    println!("|---|---:|---:|---:|---:|");
    measure("embedded (in-process pipe)", &|bytes| {
        (vec!["--big-bytes".into(), bytes.to_string()], vec![], None)
    });
    measure("local process (stdio)", &|bytes| {
        let cmd = format!("{} --big-bytes {bytes}", mock.display());
        (vec!["--agent".into(), cmd], vec![], None)
    });
    measure("ws:// bridge (loopback)", &|bytes| {
        let b = Bridge::start(&["--mock-args", &format!("--big-bytes {bytes}")]);
        let url = format!("ws://127.0.0.1:{}/", b.port());
        (vec!["--connect".into(), url], vec![b], None)
    });
    measure("http:// bridge (Streamable HTTP)", &|bytes| {
        let b = Bridge::start(&["--mock-args", &format!("--big-bytes {bytes}")]);
        let url = format!("http://127.0.0.1:{}/acp", b.port());
        (vec!["--connect".into(), url], vec![b], None)
    });
    measure("wss:// bridge (rustls)", &|bytes| {
        let b = Bridge::start_tls(&pki, &["--mock-args", &format!("--big-bytes {bytes}")]);
        let url = format!("wss://localhost:{}/", b.port());
        (
            vec!["--connect".into(), url, "--ca-cert".into(), ca.clone()],
            vec![b],
            None,
        )
    });
    if let Some(bin) = &nginx_bin {
        measure("wss:// nginx -> ws:// bridge", &|bytes| {
            let mock = format!("--big-bytes {bytes}");
            let b1 = Bridge::start(&["--mock-args", &mock]);
            let b2 = Bridge::start(&["--mock-args", &mock]);
            let n = Nginx::start(bin, "acp-bridge.conf", &pki, &[b1.port(), b2.port()]);
            let url = format!("wss://localhost:{}/", n.port);
            (
                vec!["--connect".into(), url, "--ca-cert".into(), ca.clone()],
                vec![b1, b2],
                Some(n),
            )
        });
    }
}

/// Peak and current resident memory of process `pid` in MiB, from
/// `/proc/<pid>/status` (`VmHWM`, `VmRSS`).
fn rss_mib(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib = |key: &str| -> f64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    (kib("VmHWM:") / 1024.0, kib("VmRSS:") / 1024.0)
}

/// `clients` concurrent `acp-client` runs, each a full turn (two permission
/// requests, a file written) through one bridge and its one mock agent,
/// over `url`'s profile. Measured by `scripts/remote_bench.sh` on a release
/// build: wall time, the slowest client, and the bridge's peak memory.
#[test]
#[ignore = "a measurement: run scripts/remote_bench.sh"]
fn remote_load() {
    let clients: usize = std::env::var("REMOTE_LOAD_CLIENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let scratch = Scratch::new("load");
    println!(
        "\n{clients} concurrent clients, each a full turn through one bridge (one mock agent)\n"
    );
    println!("| profile | wall time (s) | slowest client (s) | bridge idle RSS (MiB) | bridge peak RSS (MiB) |");
    println!("|---|---:|---:|---:|---:|");
    for (label, scheme, path) in [
        ("WebSocket", "ws", "/"),
        ("Streamable HTTP", "http", "/acp"),
    ] {
        let bridge = Bridge::start(&[]);
        let url = format!("{scheme}://127.0.0.1:{}{path}", bridge.port());
        let (_, idle) = rss_mib(bridge.proc.child.id());
        let t0 = Instant::now();
        let runs: Vec<Run> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..clients)
                .map(|i| {
                    let project = scratch.project(&format!("{scheme}{i}"));
                    let url = url.clone();
                    s.spawn(move || {
                        let run = client(
                            &["--connect", &url, "--cwd", project.to_str().unwrap()],
                            &[("ACP_BRIDGE_TOKEN", TOKEN)],
                            Duration::from_secs(300),
                        );
                        run.assert_full_turn(&project);
                        run
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let wall = t0.elapsed().as_secs_f64();
        let slowest = runs.iter().map(|r| r.secs).fold(0.0, f64::max);
        let (peak, _) = rss_mib(bridge.proc.child.id());
        println!("| {label} | {wall:.2} | {slowest:.2} | {idle:.1} | {peak:.1} |");
    }
}
