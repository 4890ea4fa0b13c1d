//! The path rules: whole components, there and back, and through the
//! server core with a user's room.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::time::Duration;

use proptest::prelude::*;
use serde_json::{json, Value};

use super::*;
use crate::remote::router::Permissions;
use crate::remote::server::{Action, Principal, Profile, ServerConfig};

const CLIENT: &str = "/home/ana/proj";
const ROOM: &str = "/srv/acp/ana/work";

fn root(dir: &str) -> Root {
    Root::new(dir).unwrap()
}

/// The oracle of "under": `root`'s components (after dropping its
/// trailing `/`s) begin `path`'s, split on `/` (sharing no code with
/// `Root::rest`).
fn under(path: &str, root: &str) -> bool {
    let root: Vec<&str> = root.trim_end_matches('/').split('/').collect();
    let path: Vec<&str> = path.split('/').collect();
    path.len() >= root.len() && path[..root.len()] == root[..]
}

/// The oracle of a move: `path`'s components past `from`'s, after `to`'s.
fn moved(path: &str, from: &str, to: &str) -> String {
    let from_n = from.trim_end_matches('/').split('/').count();
    let rest: Vec<&str> = path.split('/').skip(from_n).collect();
    let mut out = to.trim_end_matches('/').to_string();
    for c in rest {
        out.push('/');
        out.push_str(c);
    }
    out
}

#[test]
fn a_root_is_absolute_and_not_the_file_systems() {
    assert_eq!(Root::new("/home/ana/proj/").unwrap().as_str(), CLIENT);
    assert!(Root::new("home/ana").is_none());
    assert!(Root::new("").is_none());
    assert!(Root::new("/").is_none());
    assert!(Root::new("///").is_none());
}

#[test]
fn a_prefix_matches_whole_components() {
    let (c, r) = (root(CLIENT), root(ROOM));
    assert_eq!(rebase("/home/ana/proj", &c, &r).unwrap(), ROOM);
    assert_eq!(
        rebase("/home/ana/proj/src/a.rs", &c, &r).unwrap(),
        "/srv/acp/ana/work/src/a.rs"
    );
    assert_eq!(
        rebase("/home/ana/proj/", &c, &r).unwrap(),
        "/srv/acp/ana/work/"
    );
    assert_eq!(rebase("/home/ana/proj2", &c, &r), None);
    assert_eq!(rebase("/home/ana/proj2/a.rs", &c, &r), None);
    assert_eq!(rebase("/home/ana", &c, &r), None);
    assert_eq!(rebase("relative/proj", &c, &r), None);
    assert_eq!(rebase("", &c, &r), None);
}

#[test]
fn file_uris_move_with_their_path_decoded() {
    let (c, r) = (root("/home/ana/my proj"), root(ROOM));
    assert_eq!(
        rebase_file_uri("file:///home/ana/my%20proj/a%20b.rs", &c, &r).unwrap(),
        "file:///srv/acp/ana/work/a%20b.rs"
    );
    assert_eq!(
        rebase_file_uri("file://localhost/home/ana/my%20proj/x.rs#L3", &c, &r).unwrap(),
        "file:///srv/acp/ana/work/x.rs#L3"
    );
    // Outside, another scheme, another host, a bad escape: unchanged.
    assert_eq!(rebase_file_uri("file:///home/ana/other/x", &c, &r), None);
    assert_eq!(
        rebase_file_uri("https://x/home/ana/my%20proj", &c, &r),
        None
    );
    assert_eq!(
        rebase_file_uri("file://host/home/ana/my%20proj/x", &c, &r),
        None
    );
    assert_eq!(rebase_file_uri("file:///home/ana/my%2", &c, &r), None);
    assert_eq!(rebase_file_uri("file:///home/ana/my%FF", &c, &r), None);
}

/// A path of 0 to 5 components of tricky text (short names that share
/// prefixes, dots, spaces, quotes and non-ASCII), sometimes with a
/// trailing `/`.
fn components() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(
        prop_oneof![
            Just("proj".to_string()),
            Just("proj2".to_string()),
            Just("p".to_string()),
            Just("..".to_string()),
            Just("".to_string()),
            "[a-z\" é\\\\]{1,4}",
        ],
        0..5,
    )
}

fn dir() -> impl Strategy<Value = String> {
    prop::collection::vec("[a-z]{1,3}", 1..4).prop_map(|c| format!("/{}", c.join("/")))
}

proptest! {
    /// A path under the client's directory goes to the room and comes back
    /// as it was; one under the room likewise the other way.
    #[test]
    fn there_and_back_is_the_identity_under_the_prefix(
        client in dir(), room in dir(), rest in components(), slash in any::<bool>(),
    ) {
        let (c, r) = (root(&client), root(&room));
        let mut tail = String::new();
        for part in &rest {
            tail.push('/');
            tail.push_str(part);
        }
        let tail = if slash { format!("{tail}/") } else { tail };
        let path = format!("{client}{tail}");
        let there = rebase(&path, &c, &r).unwrap();
        prop_assert_eq!(&there, &moved(&path, &client, &room));
        prop_assert_eq!(rebase(&there, &r, &c).unwrap(), path.clone());
        let path = format!("{room}{tail}");
        let there = rebase(&path, &r, &c).unwrap();
        prop_assert_eq!(rebase(&there, &c, &r).unwrap(), path);
    }

    /// Nothing outside the prefix moves, whatever bytes it shares with it.
    #[test]
    fn nothing_outside_the_prefix_changes(
        client in dir(), room in dir(), parts in components(), lead in "[a-z/]{0,6}",
    ) {
        let path = format!("{lead}/{}", parts.join("/"));
        let (c, r) = (root(&client), root(&room));
        let got = rebase(&path, &c, &r);
        if under(&path, &client) {
            prop_assert_eq!(got.unwrap(), moved(&path, &client, &room));
        } else {
            prop_assert_eq!(got, None);
        }
        // A sibling whose name extends the prefix's last component.
        let sibling = format!("{client}x/{}", parts.join("/"));
        prop_assert_eq!(rebase(&sibling, &c, &r), None);
    }

    /// Through the JSON: an `fs/write_text_file` whose path is any text
    /// comes out with only that path changed, as the oracle moves it.
    #[test]
    fn only_the_path_member_of_a_line_changes(
        parts in components(), inside in any::<bool>(), content in ".{0,20}",
    ) {
        let base = if inside { ROOM } else { "/srv/acp/ana/workx" };
        let path = format!("{base}/{}", parts.join("/"));
        let mut paths = Paths::new(root(ROOM));
        paths.learn("s1".into(), root(CLIENT));
        let line = json!({"jsonrpc": "2.0", "id": 3, "method": "fs/write_text_file",
            "params": {"sessionId": "s1", "path": path, "content": content, "note": ROOM}});
        let text = line.to_string();
        let out = paths.toward_client(ClientId(1), &text, &mut Passed::default());
        let mut want = line.clone();
        if under(&path, ROOM) {
            want["params"]["path"] = Value::from(moved(&path, ROOM, CLIENT));
            let got: Value = serde_json::from_str(&out.unwrap()).unwrap();
            prop_assert_eq!(got, want);
        } else {
            prop_assert_eq!(out, None);
        }
    }

    /// An MCP message's strings: each that is, whole, a path under the
    /// room moves as the oracle moves it, at any depth; every other
    /// string, the keys and the shape stay.
    #[test]
    fn an_mcp_messages_whole_path_strings_under_the_room_move(
        items in prop::collection::vec((components(), 0u8..4), 0..6),
    ) {
        let mut strings = Vec::new();
        for (parts, how) in &items {
            let tail = parts.join("/");
            strings.push(match how {
                0 => format!("{ROOM}/{tail}"),
                1 => format!("/srv/acp/ana/workx/{tail}"),
                2 => format!("see {ROOM}/{tail}"),
                _ => format!("/srv/acp/bo/work/{tail}"),
            });
        }
        let message = |s: &[String]| json!({"name": "t", "arguments": {
            "first": s.first(), "all": s, "nested": [{"deep": s.last()}]}});
        let mut got = message(&strings);
        move_mcp_paths(&mut got, &root(ROOM), &root(CLIENT));
        let want: Vec<String> = strings
            .iter()
            .map(|p| if under(p, ROOM) { moved(p, ROOM, CLIENT) } else { p.clone() })
            .collect();
        prop_assert_eq!(got, message(&want));
    }
}

/// `text` as a JSON string token, each character written as `how`
/// picks (`0`: as it is, escaped where JSON requires; `1`: `\uXXXX`;
/// `2`: a `/` as `\/`).
fn token(text: &str, how: &[u8]) -> String {
    let mut out = String::from("\"");
    for (i, c) in text.chars().enumerate() {
        match (how.get(i % how.len().max(1)).copied().unwrap_or(0), c) {
            (2, '/') => out.push_str("\\/"),
            (1, c) if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            (_, '"') => out.push_str("\\\""),
            (_, '\\') => out.push_str("\\\\"),
            (_, c) => out.push(c),
        }
    }
    out.push('"');
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    /// The search that passes lines naming no path under the room
    /// ([`Paths::may_name_room`]) changes nothing: every line comes out
    /// as the walk of every line (the same map with the search off)
    /// makes it, the room's path written with escapes or without, in
    /// path members or elsewhere, the line broken or not.
    #[test]
    fn the_rooms_search_passes_only_lines_the_walk_leaves(
        room in prop_oneof![Just(ROOM.to_string()), dir(), Just("/srv/a\"b".to_string())],
        parts in components(),
        base in 0u8..4,
        how in prop::collection::vec(0u8..3, 1..6),
        kind in prop_oneof![Just("tool_call"), Just("tool_call_update"), Just("agent_message_chunk")],
        member in prop_oneof![Just("path"), Just("title"), Just("oldText")],
        escaped_elsewhere in any::<bool>(),
        cut in any::<prop::sample::Index>(),
        broken in any::<bool>(),
    ) {
        let dir = match base {
            0 => room.clone(),
            1 => format!("{room}x"),
            2 => room.trim_end_matches(|c| c != '/').to_string(),
            _ => "/etc".to_string(),
        };
        let path = format!("{dir}/{}", parts.join("/"));
        let note = if escaped_elsewhere { "a\\nb\\u00e9" } else { "plain" };
        let text = format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{{"sessionUpdate":"{kind}","toolCallId":"t","title":"{note}","locations":[{{"{member}":{}}}],"content":[{{"type":"diff","path":{},"newText":"x"}}]}}}}}}"#,
            token(&path, &how),
            token(&path, &how),
        );
        let text = if broken {
            let at = cut.index(text.len());
            let at = (0..=at).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
            text[..at].to_string()
        } else {
            text
        };
        let mut searched = Paths::new(root(&room));
        let mut walked = Paths::new(root(&room));
        walked.plain_room = false;
        for p in [&mut searched, &mut walked] {
            p.learn("s1".into(), root(CLIENT));
        }
        let want = walked.toward_client(ClientId(1), &text, &mut Passed::default());
        prop_assert_eq!(searched.toward_client(ClientId(1), &text, &mut Passed::default()), want.clone(), "{}", text);
        // The search did pass some lines, and the walk moved some paths.
        if searched.plain_room && !text.contains(room.as_str()) && !text.contains('\\') {
            prop_assert!(!searched.may_name_room(&text));
        }
        if !broken && base == 0 && member == "path" && kind != "agent_message_chunk" {
            prop_assert!(want.is_some());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// A walk told the long strings the routing peek passed over in the
    /// same line (a tool's output of 64 KiB and more, before, among or
    /// after the paths) moves the same paths as a walk told nothing, and
    /// the peek noted them (it is the peek's walk that is skipped).
    #[test]
    fn the_peeks_long_strings_change_nothing_the_walk_finds(
        long in prop::collection::vec(64usize * 1024..80 * 1024, 1..4),
        where_ in prop::collection::vec(0u8..3, 3),
        escapes in any::<bool>(),
        kind in prop_oneof![Just("tool_call"), Just("tool_call_update")],
    ) {
        let texts: Vec<String> = long
            .iter()
            .map(|&n| {
                let unit = if escapes { "ab\\n\\\"" } else { "abcdefgh" };
                unit.repeat(n / unit.len() + 1)
            })
            .collect();
        let text_at = |w: u8| -> String {
            texts
                .iter()
                .zip(&where_)
                .filter(|(_, at)| **at == w)
                .map(|(t, _)| format!(r#"{{"type":"content","content":{{"type":"text","text":"{t}"}}}},"#))
                .collect()
        };
        let line = format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{{"sessionUpdate":"{kind}","toolCallId":"t","content":[{}{{"type":"diff","path":"{ROOM}/a.rs","oldText":"{}","newText":"x"}},{}{{"type":"diff","path":"{ROOM}/b.rs","newText":"y"}}],"locations":[{{"path":"{ROOM}/c.rs"}}]}}}}}}"#,
            text_at(0),
            texts[0],
            text_at(1),
        );
        let line = line.replacen(r#""locations""#, &format!(r#""note":"{}","locations""#, text_at(2).len()), 1);
        let mut passed = crate::remote::transport::Passed::default();
        prop_assert!(crate::remote::transport::peek_passed(&line, &mut passed).is_some());
        prop_assert_ne!(passed, crate::remote::transport::Passed::default());
        let mut told = Paths::new(root(ROOM));
        let mut untold = Paths::new(root(ROOM));
        for p in [&mut told, &mut untold] {
            p.learn("s1".into(), root(CLIENT));
        }
        let want = untold.toward_client(ClientId(1), &line, &mut Passed::default());
        let moved = format!("{CLIENT}/b.rs");
        prop_assert!(want.as_deref().is_some_and(|w| w.contains(&moved)));
        prop_assert_eq!(told.toward_client(ClientId(1), &line, &mut passed), want);
    }
}

#[test]
fn a_session_new_moves_its_cwd_and_learns_the_session_from_the_answer() {
    let mut paths = Paths::new(root(ROOM));
    let text = r#"{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"/home/ana/proj/","mcpServers":[],"additionalDirectories":["/home/ana/proj/lib","/opt/x"]}}"#;
    let msg = Message::decode(text).unwrap();
    let out = paths.toward_agent(ClientId(1), text, &msg).unwrap();
    assert_eq!(
        out,
        r#"{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"/srv/acp/ana/work/","mcpServers":[],"additionalDirectories":["/srv/acp/ana/work/lib","/opt/x"]}}"#,
        "a trailing slash is kept"
    );
    // Another client's answer with the same id teaches nothing.
    let answer = r#"{"jsonrpc":"2.0","id":5,"result":{"sessionId":"s9"}}"#;
    assert_eq!(
        paths.toward_client(ClientId(2), answer, &mut Passed::default()),
        None
    );
    assert!(paths.sessions.is_empty());
    assert_eq!(
        paths.toward_client(ClientId(1), answer, &mut Passed::default()),
        None
    );
    assert_eq!(paths.sessions.get("s9"), Some(&root(CLIENT)));
    assert!(paths.pending.is_empty());
    // A load names its session: learnt at once.
    let text = r#"{"jsonrpc":"2.0","id":6,"method":"session/load","params":{"sessionId":"s7","cwd":"/home/ana/other","mcpServers":[]}}"#;
    let msg = Message::decode(text).unwrap();
    let out = paths.toward_agent(ClientId(1), text, &msg).unwrap();
    assert!(out.contains(r#""cwd":"/srv/acp/ana/work""#), "{out}");
    assert_eq!(paths.sessions.get("s7"), Some(&root("/home/ana/other")));
    // Closed: forgotten.
    let text = r#"{"jsonrpc":"2.0","id":7,"method":"session/close","params":{"sessionId":"s7"}}"#;
    let msg = Message::decode(text).unwrap();
    assert_eq!(paths.toward_agent(ClientId(1), text, &msg), None);
    assert!(!paths.sessions.contains_key("s7"));
    // A client at `/`: not mapped, passed as it is.
    let text =
        r#"{"jsonrpc":"2.0","id":8,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#;
    let msg = Message::decode(text).unwrap();
    assert_eq!(paths.toward_agent(ClientId(1), text, &msg), None);
}

#[test]
fn a_prompts_file_links_move_and_nothing_else_does() {
    let mut paths = Paths::new(root(ROOM));
    paths.learn("s1".into(), root(CLIENT));
    let text = r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"see file:///home/ana/proj/a.rs"},{"type":"resource_link","name":"a","uri":"file:///home/ana/proj/a.rs"},{"type":"resource","resource":{"uri":"file:///home/ana/proj2/b.rs","text":"x"}},{"type":"resource","resource":{"uri":"file:///home/ana/proj/c.rs","text":"y"}}]}}"#;
    let msg = Message::decode(text).unwrap();
    let out = paths.toward_agent(ClientId(1), text, &msg).unwrap();
    let want = text
        .replace(
            r#""uri":"file:///home/ana/proj/a.rs""#,
            r#""uri":"file:///srv/acp/ana/work/a.rs""#,
        )
        .replace(
            r#""uri":"file:///home/ana/proj/c.rs""#,
            r#""uri":"file:///srv/acp/ana/work/c.rs""#,
        );
    assert_eq!(out, want);
    // A prompt without `file:` is not walked; one of an unknown session
    // passes.
    let text = r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s2","prompt":[{"type":"resource_link","name":"a","uri":"file:///home/ana/proj/a.rs"}]}}"#;
    let msg = Message::decode(text).unwrap();
    assert_eq!(paths.toward_agent(ClientId(1), text, &msg), None);
}

#[test]
fn tool_calls_fs_and_terminals_come_back_in_the_clients_directory() {
    let mut paths = Paths::new(root(ROOM));
    paths.learn("s1".into(), root(CLIENT));
    let to_client = |paths: &mut Paths, line: Value| {
        let text = line.to_string();
        paths
            .toward_client(ClientId(1), &text, &mut Passed::default())
            .map(|t| serde_json::from_str::<Value>(&t).unwrap())
    };
    let call = |kind: &str| {
        json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{
            "sessionUpdate": kind, "toolCallId":"t1", "title": "/srv/acp/ana/work/a.rs",
            "locations":[{"path":"/srv/acp/ana/work/a.rs","line":3},{"path":"/etc/hosts"}],
            "content":[{"type":"diff","path":"/srv/acp/ana/work/a.rs","oldText":null,"newText":"x"},
                       {"type":"content","content":{"type":"text","text":"/srv/acp/ana/work"}}]}}})
    };
    for kind in ["tool_call", "tool_call_update"] {
        let got = to_client(&mut paths, call(kind)).unwrap();
        let mut want = call(kind);
        want["params"]["update"]["locations"][0]["path"] = "/home/ana/proj/a.rs".into();
        want["params"]["update"]["content"][0]["path"] = "/home/ana/proj/a.rs".into();
        assert_eq!(got, want);
    }
    // A message chunk naming the room: unchanged (not a path member).
    let chunk = json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{
        "sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"/srv/acp/ana/work/a.rs"},
        "locations":[{"path":"/srv/acp/ana/work/a.rs"}]}}});
    assert_eq!(to_client(&mut paths, chunk), None);
    // A permission request's tool call.
    let ask = json!({"jsonrpc":"2.0","id":4,"method":"session/request_permission","params":{"sessionId":"s1",
        "options":[],"toolCall":{"toolCallId":"t1","locations":[{"path":"/srv/acp/ana/work"}],
        "content":[{"type":"diff","path":"/srv/acp/ana/work/b","newText":""}]}}});
    let got = to_client(&mut paths, ask).unwrap();
    assert_eq!(got["params"]["toolCall"]["locations"][0]["path"], CLIENT);
    assert_eq!(
        got["params"]["toolCall"]["content"][0]["path"],
        "/home/ana/proj/b"
    );
    // fs and terminals.
    let read = json!({"jsonrpc":"2.0","id":5,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/srv/acp/ana/work/x\"y é"}});
    let got = to_client(&mut paths, read).unwrap();
    assert_eq!(got["params"]["path"], "/home/ana/proj/x\"y é");
    let term = json!({"jsonrpc":"2.0","id":6,"method":"terminal/create","params":{"sessionId":"s1","command":"ls","cwd":"/srv/acp/ana/work/src"}});
    let got = to_client(&mut paths, term).unwrap();
    assert_eq!(got["params"]["cwd"], "/home/ana/proj/src");
    assert_eq!(got["params"]["command"], "ls");
    // `params` before `method`: read all the same.
    let late = r#"{"params":{"sessionId":"s1","path":"/srv/acp/ana/work/z"},"id":9,"method":"fs/write_text_file","jsonrpc":"2.0"}"#;
    let got = paths
        .toward_client(ClientId(1), late, &mut Passed::default())
        .unwrap();
    assert_eq!(got, late.replace("/srv/acp/ana/work/z", "/home/ana/proj/z"));
    // Not JSON past the room's name: passed as it came.
    let broken = r#"{"jsonrpc":"2.0","method":"fs/write_text_file","params":{"sessionId":"s1","path":"/srv/acp/ana/work/z",}"#;
    assert_eq!(
        paths.toward_client(ClientId(1), broken, &mut Passed::default()),
        None
    );
    // Another session, or a sibling of the room: unchanged.
    let other = json!({"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{"sessionId":"s2","path":"/srv/acp/ana/work/x"}});
    assert_eq!(to_client(&mut paths, other), None);
    let sibling = json!({"jsonrpc":"2.0","id":8,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/srv/acp/ana/work2/x"}});
    assert_eq!(to_client(&mut paths, sibling), None);
}

#[test]
fn an_escaped_path_is_read_and_written_as_json() {
    let mut paths = Paths::new(root(ROOM));
    paths.learn("s1".into(), root("/home/ana/a\"b"));
    // `\u002f` for a slash: the value is the room's path all the same.
    let text = r#"{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/srv/acp/ana/work\u002fsrc/x"}}"#;
    let out = paths
        .toward_client(ClientId(1), text, &mut Passed::default())
        .unwrap();
    assert_eq!(
        out,
        r#"{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/home/ana/a\"b/src/x"}}"#
    );
}

#[test]
fn the_tables_are_bounded() {
    let mut paths = Paths::new(root(ROOM));
    for n in 0..MAX_SESSIONS + 5 {
        paths.learn(format!("s{n}"), root(CLIENT));
    }
    assert_eq!(paths.sessions.len(), MAX_SESSIONS);
    assert!(!paths.sessions.contains_key("s0"));
    for n in 0..MAX_PENDING + 5 {
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"session/new","params":{{"cwd":"/home/ana/proj","mcpServers":[]}}}}"#
        );
        let msg = Message::decode(&text).unwrap();
        assert!(paths.toward_agent(ClientId(1), &text, &msg).is_some());
    }
    assert_eq!(paths.pending.len(), MAX_PENDING);
}

fn writes(server: &mut Server) -> Vec<String> {
    let mut out = vec![];
    while let Some(a) = server.poll_action() {
        if let Action::WriteAgent { line, .. } = a {
            out.push(String::from_utf8(line.into_vec()).unwrap());
        }
    }
    out
}

fn sends(server: &mut Server) -> Vec<String> {
    let mut out = vec![];
    while let Some(a) = server.poll_action() {
        if let Action::Send { text, .. } = a {
            out.push(text);
        }
    }
    out
}

/// Through the core: a user's agent with a room is told the room, the
/// client sees its own directory; a user without a room (and a shared
/// pool) pass paths as they are.
#[test]
fn a_users_agent_works_in_the_room_and_the_client_sees_its_own_paths() {
    let t = Duration::ZERO;
    let config = ServerConfig {
        pool: PoolMode::PerUser,
        ..ServerConfig::new()
    };
    let mut server = Server::new(config, t);
    let ana = Principal::user("ana", Permissions::READ_WRITE);
    let conn = server.open(t, Profile::WebSocket, &ana).unwrap();
    server.handle_text(
        t,
        conn,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
    );
    let Some(Action::StartAgent { run, user, .. }) = server.poll_action() else {
        panic!("no start");
    };
    assert_eq!(user.as_deref(), Some("ana"));
    // The binary names the room as it starts the agent.
    server.set_session_dir("ana", "relative");
    assert_eq!(server.session_dir("ana"), None);
    server.set_session_dir("ana", "/srv/acp/ana/work/");
    assert_eq!(server.session_dir("ana"), Some(ROOM));
    server.handle_agent_started(t, run, 9);
    let _ = writes(&mut server);
    server.handle_agent_line(
        t,
        run,
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
    );
    let _ = sends(&mut server);
    server.handle_text(
        t,
        conn,
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/home/ana/proj","mcpServers":[]}}"#,
    );
    let line = writes(&mut server).remove(0);
    assert!(line.contains(r#""cwd":"/srv/acp/ana/work""#), "{line}");
    let id: Value = serde_json::from_str(line.trim()).unwrap();
    let id = id["id"].as_i64().unwrap();
    server.handle_agent_line(
        t,
        run,
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"sessionId":"s1"}}}}"#),
    );
    assert_eq!(
        sends(&mut server),
        [r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}"#]
    );
    server.handle_agent_line(
        t,
        run,
        r#"{"jsonrpc":"2.0","id":"w1","method":"fs/write_text_file","params":{"sessionId":"s1","path":"/srv/acp/ana/work/summary.txt","content":"hi"}}"#,
    );
    let got = sends(&mut server);
    assert_eq!(
        got,
        [
            r#"{"jsonrpc":"2.0","id":"w1","method":"fs/write_text_file","params":{"sessionId":"s1","path":"/home/ana/proj/summary.txt","content":"hi"}}"#
        ]
    );
    // The client's answer goes back as it is.
    server.handle_text(t, conn, r#"{"jsonrpc":"2.0","id":"w1","result":{}}"#);
    assert!(writes(&mut server)[0].contains(r#""result":{}"#));
    // A shared pool: no rooms.
    let mut shared = Server::new(ServerConfig::new(), t);
    shared.set_session_dir("ana", ROOM);
    assert_eq!(shared.session_dir("ana"), None);
}
