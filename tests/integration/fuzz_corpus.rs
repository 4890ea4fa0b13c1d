//! Replays the committed fuzz seeds (`fuzz/seeds/<target>/`) through the
//! same invariant checks the fuzz targets assert, so `cargo test` runs them.

use std::path::Path;

use crate::checks::line_splitter;
use crate::checks::title;

#[cfg(feature = "alloc")]
use crate::checks::acp_message;

/// Every seed of one target, read from the committed corpus.
fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/seeds")
        .join(target);
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            (path.display().to_string(), std::fs::read(&path).unwrap())
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no seeds for {target}");
    out
}

#[test]
fn line_splitter_seeds() {
    for (name, data) in seeds("line_splitter") {
        eprintln!("{name}");
        line_splitter::check(&data);
    }
}

#[test]
fn title_seeds() {
    for (name, data) in seeds("title") {
        eprintln!("{name}");
        title::check(&data);
    }
}

#[cfg(feature = "alloc")]
use crate::checks::chunk_reassembler;

#[cfg(feature = "alloc")]
#[test]
fn chunk_reassembler_seeds() {
    for (name, data) in seeds("chunk_reassembler") {
        eprintln!("{name}");
        chunk_reassembler::check(&data);
    }
}

#[cfg(feature = "alloc")]
use crate::checks::turn_view;

#[cfg(feature = "alloc")]
#[test]
fn turn_view_seeds() {
    for (name, data) in seeds("turn_view") {
        eprintln!("{name}");
        turn_view::check(&data);
    }
}

#[cfg(feature = "alloc")]
#[test]
fn acp_message_seeds() {
    for (name, data) in seeds("acp_message") {
        eprintln!("{name}");
        acp_message::check(&data);
    }
}

#[cfg(feature = "std")]
use crate::checks::acp_oracle;

#[cfg(feature = "std")]
#[test]
fn acp_oracle_seeds() {
    for (name, data) in seeds("acp_oracle") {
        eprintln!("{name}");
        acp_oracle::check(&data);
    }
}

#[cfg(feature = "tokio-util")]
use crate::checks::acp_codec;

#[cfg(feature = "tokio-util")]
#[test]
fn acp_codec_seeds() {
    for (name, data) in seeds("acp_codec") {
        eprintln!("{name}");
        acp_codec::check(&data);
    }
}

#[cfg(feature = "remote")]
use crate::checks::bridge_router;

#[cfg(feature = "remote")]
#[test]
fn bridge_router_seeds() {
    for (name, data) in seeds("bridge_router") {
        eprintln!("{name}");
        bridge_router::check(&data);
    }
}

#[cfg(feature = "remote")]
use crate::checks::server_core;

#[cfg(feature = "remote")]
#[test]
fn server_core_seeds() {
    for (name, data) in seeds("server_core") {
        eprintln!("{name}");
        server_core::check(&data);
    }
}

#[cfg(feature = "remote")]
#[test]
fn server_resume_seeds() {
    for (name, data) in seeds("server_resume") {
        eprintln!("{name}");
        let _ = crate::checks::server_resume::check(&data);
        let _ = crate::checks::server_resume_http::check(&data);
    }
}

#[cfg(feature = "remote")]
use crate::checks::remote_transport;

#[cfg(feature = "remote")]
#[test]
fn remote_transport_seeds() {
    for (name, data) in seeds("remote_transport") {
        eprintln!("{name}");
        remote_transport::check(&data);
    }
}

#[cfg(feature = "arbitrary")]
use crate::checks::round_trip;

#[cfg(feature = "arbitrary")]
#[test]
fn round_trip_seeds() {
    for (name, data) in seeds("round_trip") {
        eprintln!("{name}");
        round_trip::check(&data);
    }
}

#[cfg(feature = "arbitrary")]
use crate::checks::hostile_stream;

#[cfg(feature = "arbitrary")]
#[test]
fn hostile_stream_seeds() {
    for (name, data) in seeds("hostile_stream") {
        eprintln!("{name}");
        hostile_stream::check(&data);
    }
}

#[cfg(feature = "alloc")]
#[test]
fn observer_seeds() {
    for (name, data) in seeds("observer") {
        eprintln!("{name}");
        crate::checks::observer::check(&data);
    }
}

#[cfg(feature = "remote")]
#[test]
fn resume_log_seeds() {
    for (name, data) in seeds("resume_log") {
        eprintln!("{name}");
        crate::checks::resume_log::check(&data);
    }
}

#[cfg(feature = "arbitrary")]
#[test]
fn unescape_seeds() {
    for (name, data) in seeds("unescape") {
        eprintln!("{name}");
        crate::checks::unescape::check(&data);
    }
}

#[cfg(all(feature = "arbitrary", feature = "v2"))]
#[test]
fn acp_v2_seeds() {
    for (name, data) in seeds("acp_v2") {
        eprintln!("{name}");
        crate::checks::acp_v2::check(&data);
    }
}

#[cfg(feature = "std")]
#[test]
fn version_seeds() {
    for (name, data) in seeds("version") {
        eprintln!("{name}");
        crate::checks::version::check(&data);
    }
}

/// The `bridge_router` check's reader of a line forwarded without a full
/// decode: the top-level members `serde_json` reads from an object, and
/// `None` where a string or a bracket does not close.
#[cfg(feature = "remote")]
#[test]
fn the_routers_raw_member_oracle_reads_objects_as_serde_json_does() {
    let objects = [
        r#"{}"#,
        r#" { "a" : 1 , "b":[1,{"c":"}"}] ,"d\"e":"x\\"} "#,
        r#"{"jsonrpc":"2.0","method":"m","params":{"sessionId":"s","t":"a\nb"}}"#,
    ];
    for text in objects {
        let members = bridge_router::raw_members(text).unwrap();
        let value: serde_json::Map<String, serde_json::Value> = serde_json::from_str(text).unwrap();
        assert_eq!(members.len(), value.len(), "{text}");
        for (key, raw) in members {
            let key: String = serde_json::from_str(key).unwrap();
            let raw: serde_json::Value = serde_json::from_str(raw).unwrap();
            assert_eq!(value[&key], raw, "{text}");
        }
    }
    for text in [
        r#"{"a":"b}"#,
        r#"{"a":[1}"#,
        r#"{"a":{]}"#,
        r#"[1]"#,
        r#"{"a":1} x"#,
    ] {
        assert_eq!(bridge_router::raw_members(text), None, "{text}");
    }
}
