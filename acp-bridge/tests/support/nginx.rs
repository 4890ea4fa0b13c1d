//! nginx in front of bridges, for the tests: Debian's `nginx` started by
//! the test itself, as a non-daemon with its own prefix, configuration,
//! pid and logs in a temp directory, on a rendered file of
//! `deploy/nginx/`; and the throwaway PKI its TLS (and the bridge's) uses.
//!
//! Without nginx the tests that need it print a notice and pass, unless
//! `ACP_REQUIRE_NGINX=1` (CI), where they fail.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// nginx's binary, or `None` (with a notice) when it is not installed;
/// with `ACP_REQUIRE_NGINX=1` a missing nginx fails the test.
pub fn nginx_binary() -> Option<PathBuf> {
    let candidates = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain(["/usr/sbin".into(), "/usr/local/sbin".into()])
        .map(|d: PathBuf| d.join("nginx"));
    for c in candidates {
        if c.is_file() {
            return Some(c);
        }
    }
    if std::env::var("ACP_REQUIRE_NGINX").is_ok_and(|v| v == "1") {
        panic!(
            "nginx is not installed but ACP_REQUIRE_NGINX=1: \
             apt-get install -y --no-install-recommends nginx"
        );
    }
    eprintln!(
        "NOTICE: nginx not installed; skipping the nginx test \
         (apt-get install nginx, or set ACP_REQUIRE_NGINX=1 to make this a failure)"
    );
    None
}

/// The throwaway PKI: `ca.pem` signed `server.pem` (for `localhost` only,
/// no IP address); `other-ca.pem` signed nothing.
pub struct Pki {
    pub ca: PathBuf,
    pub other_ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Makes the [`Pki`] in `dir`.
pub fn pki(dir: &Path) -> Pki {
    use rcgen::{
        BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose,
        IsCa, KeyPair, KeyUsagePurpose,
    };
    let ca = |name: &str| {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
    };
    let issuer = ca("acp-codec test CA");
    let other = ca("acp-codec other CA");
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let cert = params.signed_by(&key, &issuer).unwrap();
    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    Pki {
        ca: write("ca.pem", issuer.pem()),
        other_ca: write("other-ca.pem", other.pem()),
        cert: write("server.pem", cert.pem()),
        key: write("server-key.pem", key.serialize_pem()),
    }
}

/// A free port on 127.0.0.1 (bound and released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The children of process `pid` (from /proc).
pub fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            let list = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            out.extend(
                list.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    out
}

/// Sends `sig` (`-TERM`, `-KILL`) to `pid`.
pub fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .args([sig, &pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// nginx on a rendered file of `deploy/nginx/`, in the foreground,
/// everything under its own prefix; stopped on drop.
pub struct Nginx {
    child: Child,
    stderr: Arc<Mutex<String>>,
    /// Where it listens (TLS), on 127.0.0.1.
    pub port: u16,
    prefix: PathBuf,
}

impl Nginx {
    /// nginx on `deploy/nginx/<template>`, its `@@LISTEN@@`,
    /// `@@SERVER_NAME@@` (`localhost`), `@@TLS_CERT@@`, `@@TLS_KEY@@` and
    /// `@@BRIDGE_n@@` (the `bridges`' loopback ports, in order) filled in.
    pub fn start(bin: &Path, template: &str, pki: &Pki, bridges: &[u16]) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let prefix = std::env::temp_dir().join(format!(
            "acp_nginx_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&prefix);
        for d in ["logs", "tmp"] {
            std::fs::create_dir_all(prefix.join(d)).unwrap();
        }
        let port = free_port();
        let mut site = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("deploy/nginx")
                .join(template),
        )
        .unwrap()
        .replace("@@LISTEN@@", &format!("127.0.0.1:{port}"))
        .replace("@@SERVER_NAME@@", "localhost")
        .replace("@@TLS_CERT@@", pki.cert.to_str().unwrap())
        .replace("@@TLS_KEY@@", pki.key.to_str().unwrap());
        for (n, b) in bridges.iter().enumerate() {
            site = site.replace(&format!("@@BRIDGE_{}@@", n + 1), &format!("127.0.0.1:{b}"));
        }
        let left = site
            .lines()
            .filter(|l| !l.trim_start().starts_with('#') && l.contains("@@"));
        assert_eq!(left.count(), 0, "placeholder left:\n{site}");
        let p = &prefix;
        std::fs::write(p.join("site.conf"), site).unwrap();
        let d = p.display();
        let main = format!(
            "worker_processes 1;\n\
             pid {d}/nginx.pid;\n\
             error_log {d}/logs/error.log info;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n\
             \x20   access_log {d}/logs/access.log;\n\
             \x20   client_body_temp_path {d}/tmp/body;\n\
             \x20   proxy_temp_path {d}/tmp/proxy;\n\
             \x20   fastcgi_temp_path {d}/tmp/fastcgi;\n\
             \x20   uwsgi_temp_path {d}/tmp/uwsgi;\n\
             \x20   scgi_temp_path {d}/tmp/scgi;\n\
             \x20   include {d}/site.conf;\n\
             }}\n"
        );
        std::fs::write(p.join("nginx.conf"), main).unwrap();
        let mut cmd = Command::new(bin);
        cmd.arg("-p")
            .arg(p)
            .arg("-c")
            .arg(p.join("nginx.conf"))
            .arg("-e")
            .arg(p.join("logs/error.log"))
            .args(["-g", "daemon off;"]);
        // `nginx -t` first: a bad template is a clear failure.
        let check = Command::new(bin)
            .args(cmd.get_args())
            .arg("-t")
            .output()
            .unwrap();
        assert!(
            check.status.success(),
            "nginx -t: {}",
            String::from_utf8_lossy(&check.stderr)
        );
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn nginx: {e}"));
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { return };
                sink.lock().unwrap().push_str(&line);
            }
        });
        let end = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(s)) = child.try_wait() {
                panic!(
                    "nginx exited ({s}): {}\n{}",
                    stderr.lock().unwrap(),
                    std::fs::read_to_string(p.join("logs/error.log")).unwrap_or_default()
                );
            }
            assert!(Instant::now() < end, "nginx not listening within 10 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self {
            child,
            stderr,
            port,
            prefix,
        }
    }

    /// The access log so far.
    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.prefix.join("logs/access.log")).unwrap_or_default()
    }

    /// The error log so far.
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.prefix.join("logs/error.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // A graceful stop lets the master end its workers; SIGKILL of the
        // master alone would leave them running.
        let workers = children(self.child.id());
        signal(self.child.id(), "-TERM");
        let end = Instant::now() + Duration::from_secs(5);
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        for pid in workers {
            signal(pid, "-KILL");
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("nginx error log:\n{}", self.error_log());
        } else {
            let _ = std::fs::remove_dir_all(&self.prefix);
        }
    }
}
