//! An agent's environment (`acp_bridge::room::agent_env`) against a naive
//! oracle: only the allow-list, `--agent-env` names and the user's own
//! variables, the room's `HOME` and `TMPDIR` last; never a token or
//! another variable of the bridge's.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

use acp_bridge::room::{agent_env, UserDirs, ENV_ALLOW};
use acp_bridge::users::UserRoom;
use proptest::prelude::*;

/// Names drawn from: allow-listed ones, secrets, the room's own, others.
const NAMES: &[&str] = &[
    "PATH",
    "LANG",
    "TZ",
    "HOME",
    "TMPDIR",
    "GEMINI_BRIDGE_TOKEN",
    "GEMINI_BRIDGE_TOKEN_FILE",
    "GEMINI_API_KEY",
    "OPENAI_API_KEY",
    "XDG_CONFIG_HOME",
    "BO_KEY",
    "EXTRA",
];

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(NAMES).prop_map(str::to_owned)
}

fn dirs() -> UserDirs {
    UserDirs::beside(
        &PathBuf::from("/rooms/ana/home"),
        &PathBuf::from("/rooms/ana/work"),
    )
}

/// What the agent must get, computed the plain way.
fn oracle(
    server: &[(String, String)],
    extra: &[String],
    user: Option<&BTreeMap<String, String>>,
) -> BTreeMap<String, String> {
    let mut want = BTreeMap::new();
    for (k, v) in server {
        let room_own = k == "HOME" || k == "TMPDIR";
        if ENV_ALLOW.contains(&k.as_str()) || extra.contains(k) || (user.is_none() && room_own) {
            // The environment holds one value per name: the last set.
            want.insert(k.clone(), v.clone());
        }
    }
    if let Some(env) = user {
        want.extend(env.iter().map(|(k, v)| (k.clone(), v.clone())));
        want.insert("HOME".to_owned(), "/rooms/ana/home".to_owned());
        want.insert("TMPDIR".to_owned(), "/rooms/ana/tmp".to_owned());
    }
    want
}

fn as_map(env: Vec<(OsString, OsString)>) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for (k, v) in env {
        let k = k.into_string().unwrap();
        assert!(
            map.insert(k.clone(), v.into_string().unwrap()).is_none(),
            "{k} set twice"
        );
    }
    map
}

proptest! {
    #[test]
    fn only_allowed_and_own_variables_reach_an_agent(
        server in prop::collection::vec((name(), "[a-z]{0,6}"), 0..12),
        extra in prop::collection::vec(name(), 0..3),
        user_env in prop::option::of(prop::collection::btree_map(
            name().prop_filter("the room's own", |n| n != "HOME" && n != "TMPDIR"),
            "[a-z]{0,6}",
            0..4,
        )),
    ) {
        // One value per name in a real environment.
        let server: Vec<(String, String)> = server
            .into_iter()
            .collect::<BTreeMap<_, _>>()
            .into_iter()
            .collect();
        let room = user_env.clone().map(|env| UserRoom { env, ..UserRoom::default() });
        let d = dirs();
        let got = agent_env(
            server.iter().map(|(k, v)| (k.into(), v.into())),
            &extra,
            room.as_ref().map(|r| (&d, r)),
        );
        let names: Vec<&OsString> = got.iter().map(|(k, _)| k).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        prop_assert_eq!(unique.len(), names.len(), "a variable set twice: {:?}", names);
        prop_assert_eq!(as_map(got), oracle(&server, &extra, user_env.as_ref()));
    }
}

#[test]
fn a_token_never_reaches_an_agent() {
    let server = [
        ("GEMINI_BRIDGE_TOKEN", "secret-token"),
        ("GEMINI_API_KEY", "the bridge's key"),
        ("PATH", "/usr/bin"),
    ];
    let room = UserRoom {
        env: [("GEMINI_API_KEY".to_owned(), "ana's key".to_owned())].into(),
        ..UserRoom::default()
    };
    let d = dirs();
    let got = as_map(agent_env(
        server.iter().map(|(k, v)| ((*k).into(), (*v).into())),
        &[],
        Some((&d, &room)),
    ));
    assert_eq!(
        got.get("GEMINI_API_KEY").map(String::as_str),
        Some("ana's key")
    );
    assert_eq!(got.get("PATH").map(String::as_str), Some("/usr/bin"));
    assert!(!got.contains_key("GEMINI_BRIDGE_TOKEN"));
    assert_eq!(got.get("HOME").map(String::as_str), Some("/rooms/ana/home"));
}
