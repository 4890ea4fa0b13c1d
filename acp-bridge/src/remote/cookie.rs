//! The cookie jar of one connection to one server.
//!
//! The remote transport asks clients to accept the cookies a server sets
//! (load balancers pin a client to one server with them), keep them for the
//! connection and send them back on every request. This jar does the part
//! of RFC 6265 a client of a single server needs:
//!
//! - `Set-Cookie: name=value` stores the pair (a line without `=` or with
//!   an empty name is ignored); a later one of the same name and path
//!   replaces it;
//! - `Max-Age` (seconds, `0` or less: delete now) wins over `Expires` (an
//!   HTTP date); a cookie past its time is dropped and no longer sent;
//! - `Path` limits the requests it goes on (a missing or relative `Path`
//!   means the directory of the request that set it), `Secure` to TLS;
//! - a `Domain` that does not name the server's host drops the cookie (a
//!   server cannot set cookies for others);
//! - other attributes (`HttpOnly`, `SameSite`, …) do not matter here.
//!
//! The server is not trusted with memory: a cookie over [`MAX_COOKIE_BYTES`]
//! is ignored, and so is a new one once the jar holds [`MAX_COOKIES`].

use std::time::{Duration, SystemTime};

use hyper::header::{HeaderMap, SET_COOKIE};

/// The longest `name=value` kept, in bytes (what RFC 6265 asks a client
/// to keep at least).
pub const MAX_COOKIE_BYTES: usize = 4096;
/// The most cookies kept for one connection.
pub const MAX_COOKIES: usize = 50;

#[derive(Debug, Clone, PartialEq, Eq)]
struct Cookie {
    name: String,
    value: String,
    path: String,
    /// `None`: until the connection ends.
    expires: Option<SystemTime>,
    secure: bool,
}

/// The cookies one server set on one connection.
#[derive(Debug, Default, Clone)]
pub struct CookieJar {
    cookies: Vec<Cookie>,
}

impl CookieJar {
    /// Takes the value of one `Set-Cookie` header of a response to a
    /// request for `path` on `host`, at `now`.
    pub fn store(&mut self, set_cookie: &str, host: &str, path: &str, now: SystemTime) {
        let Some(cookie) = parse(set_cookie, host, path, now) else {
            return;
        };
        let same = |c: &Cookie| c.name == cookie.name && c.path == cookie.path;
        let old = self.cookies.iter().position(same);
        let live = cookie.expires.is_none_or(|t| t > now);
        match (old, live) {
            (Some(i), true) => {
                if let Some(slot) = self.cookies.get_mut(i) {
                    *slot = cookie;
                }
            }
            (Some(i), false) => {
                self.cookies.remove(i);
            }
            (None, true) if self.cookies.len() < MAX_COOKIES => self.cookies.push(cookie),
            (None, _) => {}
        }
    }

    /// Takes every `Set-Cookie` header of a response to a request for
    /// `path` on `host` (over TLS when `secure`); whether that changed the
    /// `Cookie` header such a request gets. A header that is not visible
    /// ASCII is ignored.
    pub fn store_response(
        &mut self,
        headers: &HeaderMap,
        host: &str,
        path: &str,
        secure: bool,
        now: SystemTime,
    ) -> bool {
        let before = self.header(path, secure, now);
        for value in headers.get_all(SET_COOKIE) {
            if let Ok(line) = value.to_str() {
                self.store(line, host, path, now);
            }
        }
        before != self.header(path, secure, now)
    }

    /// The `Cookie` header for a request for `path` (over TLS when
    /// `secure`) at `now`: the pairs that apply, longest path first; `None`
    /// when none does. Cookies past their time are dropped.
    pub fn header(&mut self, path: &str, secure: bool, now: SystemTime) -> Option<String> {
        self.cookies.retain(|c| c.expires.is_none_or(|t| t > now));
        let mut sent: Vec<&Cookie> = self
            .cookies
            .iter()
            .filter(|c| (secure || !c.secure) && path_matches(&c.path, path))
            .collect();
        if sent.is_empty() {
            return None;
        }
        // Stable: among equal paths, the order they were set in.
        sent.sort_by_key(|c| std::cmp::Reverse(c.path.len()));
        let pairs: Vec<String> = sent
            .iter()
            .map(|c| format!("{}={}", c.name, c.value))
            .collect();
        Some(pairs.join("; "))
    }
}

fn parse(line: &str, host: &str, request_path: &str, now: SystemTime) -> Option<Cookie> {
    let mut parts = line.split(';');
    let (name, value) = parts.next()?.split_once('=')?;
    let (name, value) = (name.trim(), value.trim());
    if name.is_empty() || name.len() + value.len() > MAX_COOKIE_BYTES {
        return None;
    }
    let mut cookie = Cookie {
        name: name.to_owned(),
        value: value.to_owned(),
        path: default_path(request_path).to_owned(),
        expires: None,
        secure: false,
    };
    let mut max_age = None;
    for attribute in parts {
        let (key, val) = match attribute.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (attribute.trim(), ""),
        };
        if key.eq_ignore_ascii_case("max-age") {
            max_age = parse_max_age(val, now).or(max_age);
        } else if key.eq_ignore_ascii_case("expires") {
            if let Ok(t) = httpdate::parse_http_date(val) {
                cookie.expires = Some(t);
            }
        } else if key.eq_ignore_ascii_case("path") {
            if val.starts_with('/') {
                val.clone_into(&mut cookie.path);
            }
        } else if key.eq_ignore_ascii_case("domain") {
            let domain = val.trim_start_matches('.');
            if !domain.is_empty() && !domain_matches(host, domain) {
                return None;
            }
        } else if key.eq_ignore_ascii_case("secure") {
            cookie.secure = true;
        }
    }
    if let Some(expires) = max_age {
        cookie.expires = expires;
    }
    Some(cookie)
}

/// When a cookie with a `Max-Age` of `val` seconds ends: at once for `0`
/// or less; `Some(None)`, with the connection, for a time past what
/// `SystemTime` holds; `None` when `val` is not a number.
fn parse_max_age(val: &str, now: SystemTime) -> Option<Option<SystemTime>> {
    let digits = val.strip_prefix('-').unwrap_or(val);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if val.starts_with('-') || digits.bytes().all(|b| b == b'0') {
        return Some(Some(SystemTime::UNIX_EPOCH));
    }
    // Digits that overflow a u64 are a time past any connection's life.
    let secs = digits.parse::<u64>().ok();
    Some(secs.and_then(|s| now.checked_add(Duration::from_secs(s))))
}

/// RFC 6265's default path: the request path up to its last `/`, or `/`.
fn default_path(request_path: &str) -> &str {
    match request_path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => request_path.get(..i).unwrap_or("/"),
    }
}

/// Whether a cookie of `cookie_path` goes on a request for `path`.
fn path_matches(cookie_path: &str, path: &str) -> bool {
    match path.strip_prefix(cookie_path) {
        Some(rest) => cookie_path.ends_with('/') || rest.is_empty() || rest.starts_with('/'),
        None => false,
    }
}

/// Whether `host` is `domain` or a name under it (an address only equals).
fn domain_matches(host: &str, domain: &str) -> bool {
    if host.eq_ignore_ascii_case(domain) {
        return true;
    }
    if host.parse::<std::net::IpAddr>().is_ok() {
        return false;
    }
    let (host, domain) = (host.to_ascii_lowercase(), domain.to_ascii_lowercase());
    host.strip_suffix(&domain)
        .is_some_and(|head| head.ends_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    const NOW: u64 = 1_700_000_000;

    fn jar(lines: &[&str]) -> CookieJar {
        let mut jar = CookieJar::default();
        for line in lines {
            jar.store(line, "lb.example.org", "/acp", at(NOW));
        }
        jar
    }

    #[test]
    fn pairs_are_sent_back_and_replaced_by_name() {
        let mut j = jar(&["a=1", "b = 2 ; HttpOnly; SameSite=Lax", "a=3"]);
        assert_eq!(
            j.header("/acp", false, at(NOW)).as_deref(),
            Some("a=3; b=2")
        );
        // Not cookies: no `=`, an empty name.
        let mut j = jar(&["novalue", "=x", ""]);
        assert_eq!(j.header("/acp", false, at(NOW)), None);
        // An empty value is a value.
        let mut j = jar(&["e="]);
        assert_eq!(j.header("/acp", false, at(NOW)).as_deref(), Some("e="));
    }

    #[test]
    fn max_age_and_expires_end_a_cookie() {
        let mut j = jar(&[
            "short=1; Max-Age=10",
            "dated=2; Expires=Tue, 14 Nov 2023 22:13:30 GMT",
            "gone=3; Max-Age=0",
            "past=4; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
            "bad=5; Max-Age=soon; Expires=whenever",
            "huge=6; Max-Age=99999999999999999999999",
        ]);
        let all = Some("short=1; dated=2; bad=5; huge=6");
        assert_eq!(j.header("/acp", false, at(NOW + 9)).as_deref(), all);
        // 2023-11-14 22:13:30 is NOW + 10.
        assert_eq!(
            j.header("/acp", false, at(NOW + 10)).as_deref(),
            Some("bad=5; huge=6")
        );
        // Max-Age wins over Expires, whatever their order.
        let mut j = jar(&["m=1; Max-Age=100; Expires=Thu, 01 Jan 1970 00:00:00 GMT"]);
        assert_eq!(
            j.header("/acp", false, at(NOW + 50)).as_deref(),
            Some("m=1")
        );
        // A cookie set again as expired is deleted.
        let mut j = jar(&["a=1", "a=1; Max-Age=-1"]);
        assert_eq!(j.header("/acp", false, at(NOW)), None);
    }

    #[test]
    fn path_domain_and_secure_choose_where_a_cookie_goes() {
        let mut j = jar(&[
            "root=1; Path=/",
            "acp=2; Path=/acp",
            "other=3; Path=/other",
            "slash=4; Path=/acp/",
            "relative=5; Path=acp",
            "tls=6; Secure",
            "mine=7; Domain=.example.org",
            "theirs=8; Domain=example.com",
            "tail=9; Domain=b.example.org",
        ]);
        // Longest path first; `relative` got the default path, `/`.
        assert_eq!(
            j.header("/acp", false, at(NOW)).as_deref(),
            Some("acp=2; root=1; relative=5; mine=7")
        );
        assert_eq!(
            j.header("/acp/x", true, at(NOW)).as_deref(),
            Some("slash=4; acp=2; root=1; relative=5; tls=6; mine=7")
        );
        assert_eq!(
            j.header("/acpx", false, at(NOW)).as_deref(),
            Some("root=1; relative=5; mine=7")
        );
        // The default path is the request's directory.
        let mut k = CookieJar::default();
        k.store("d=1", "h", "/a/b/acp", at(NOW));
        assert_eq!(k.header("/a/b/x", false, at(NOW)).as_deref(), Some("d=1"));
        assert_eq!(k.header("/a/x", false, at(NOW)), None);
        // An address matches only itself.
        let mut k = CookieJar::default();
        k.store("ip=1; Domain=127.0.0.1", "127.0.0.1", "/acp", at(NOW));
        k.store("no=1; Domain=0.0.1", "127.0.0.1", "/acp", at(NOW));
        assert_eq!(k.header("/acp", false, at(NOW)).as_deref(), Some("ip=1"));
    }

    #[test]
    fn the_server_cannot_fill_memory() {
        let big = format!("big={}", "x".repeat(MAX_COOKIE_BYTES));
        let mut j = jar(&[&big]);
        assert_eq!(j.header("/acp", false, at(NOW)), None);
        let fits = format!("fits={}", "x".repeat(MAX_COOKIE_BYTES - 4));
        let mut j = jar(&[&fits]);
        assert!(j.header("/acp", false, at(NOW)).is_some());
        let mut j = CookieJar::default();
        for n in 0..MAX_COOKIES + 5 {
            j.store(&format!("c{n}=1"), "h", "/acp", at(NOW));
        }
        assert_eq!(j.cookies.len(), MAX_COOKIES);
        // A known name is still replaced when the jar is full.
        j.store("c0=2", "h", "/acp", at(NOW));
        assert!(j
            .header("/acp", false, at(NOW))
            .unwrap()
            .starts_with("c0=2;"));
    }
}
