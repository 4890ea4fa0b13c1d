//! The hand-written parts of the v2 strategies (`arb_v2.rs` is generated):
//! the flattened unions, whose members go with their tag (`mode`,
//! `operation`, `state`, `type`), and the leaves the v2 schema bounds.
#![allow(dead_code)]

use std::borrow::Cow;

use super::arb_v2::*;
use acp_codec::acp::v2::*;
use acp_codec::acp::{RawJson, RequestId};
use proptest::option;
use proptest::prelude::*;

#[cfg(feature = "unstable")]
pub use super::arb_base::arb_message_mcp_response;
#[allow(unused_imports)] // `env_map` serves unstable types only
pub use super::arb_base::{
    arb_create_elicitation_response, env_map, meta, number, raw, text, text1, unknown_object,
    unknown_word,
};

fn raw_of(text: &str) -> RawJson<'static> {
    RawJson::from_string(text.to_owned()).unwrap()
}

/// A v2 request id: a number or a string (never `null`).
pub fn request_id() -> BoxedStrategy<RequestId<'static>> {
    prop_oneof![
        any::<i64>().prop_map(RequestId::Number),
        text().prop_map(RequestId::Str)
    ]
    .boxed()
}

/// A number in `0..=1`, kept as sent.
pub fn unit() -> BoxedStrategy<serde_json::Number> {
    (0u8..=4)
        .prop_map(|n| serde_json::Number::from_f64(f64::from(n) / 4.0).unwrap())
        .boxed()
}

/// The `properties` of an elicitation form: a map of property schemas.
pub fn property_schemas() -> BoxedStrategy<RawJson<'static>> {
    prop_oneof![
        Just(raw_of("{}")),
        Just(raw_of(r#"{"name":{"type":"string","title":"Name","minLength":1},"age":{"type":"integer","minimum":0},"ok":{"type":"boolean","default":true}}"#)),
    ]
    .boxed()
}

pub fn arb_create_elicitation_request(
    valid: bool,
) -> BoxedStrategy<CreateElicitationRequest<'static>> {
    let scope = prop_oneof![
        (text(), option::of(text())).prop_map(|(s, t)| (Some(s), t, None)),
        request_id().prop_map(|r| (None, None, Some(r))),
    ];
    let mode = prop_oneof![
        arb_elicitation_schema(valid).prop_map(|s| (ElicitationMode::Form, Some(s), None, None)),
        (text(), text()).prop_map(|(id, url)| (ElicitationMode::Url, None, Some(id), Some(url))),
    ];
    (text(), mode, scope, option::of(meta()))
        .prop_map(
            |(message, (mode, schema, id, url), (session, tool_call, request), meta)| {
                let mut v = CreateElicitationRequest::new(message, mode);
                v.requested_schema = schema;
                v.elicitation_id = id;
                v.url = url;
                v.session_id = session;
                v.tool_call_id = tool_call;
                v.request_id = request;
                v.meta = meta;
                v
            },
        )
        .boxed()
}

pub fn arb_diff_change(valid: bool) -> BoxedStrategy<DiffChange<'static>> {
    let op = prop_oneof![
        Just((DiffOperation::Add, false)),
        Just((DiffOperation::Delete, false)),
        Just((DiffOperation::Modify, false)),
        Just((DiffOperation::Move, true)),
        Just((DiffOperation::Copy, true)),
    ];
    let file_type = option::of(arb_diff_file_type(valid));
    (
        op,
        text(),
        text(),
        file_type,
        option::of(text()),
        option::of(meta()),
    )
        .prop_map(|((op, pair), path, old, file_type, mime, meta)| {
            let mut v = DiffChange::new(path, op);
            v.old_path = pair.then_some(old);
            v.file_type = file_type;
            v.mime_type = mime;
            v.meta = meta;
            v
        })
        .boxed()
}

pub fn arb_state_update(valid: bool) -> BoxedStrategy<StateUpdate<'static>> {
    let idle = (
        option::of(arb_idle_stop_reason(valid)),
        option::of(arb_error(valid)),
    );
    let state = prop_oneof![
        Just((SessionState::Running, None, None)),
        Just((SessionState::RequiresAction, None, None)),
        idle.prop_map(|(reason, error)| {
            let error = error.filter(|_| reason == Some(IdleStopReason::Error));
            (SessionState::Idle, reason, error)
        }),
    ];
    let background = option::of(proptest::collection::vec(arb_background_work(valid), 0..3));
    (state, background, option::of(meta()))
        .prop_map(|((state, reason, error), background, meta)| {
            let mut v = StateUpdate::new(state);
            v.stop_reason = reason;
            v.error = error;
            v.background = background;
            v.meta = meta;
            v
        })
        .boxed()
}

pub fn arb_session_config_option(valid: bool) -> BoxedStrategy<SessionConfigOption<'static>> {
    let kind = prop_oneof![
        (text(), arb_session_config_select_options(valid)).prop_map(|(id, options)| (
            SessionConfigKind::Select,
            ConfigValue::Id(id),
            Some(options)
        )),
        any::<bool>().prop_map(|b| (SessionConfigKind::Boolean, ConfigValue::Bool(b), None)),
    ];
    let category = option::of(arb_session_config_option_category(valid));
    (
        text(),
        text(),
        kind,
        option::of(text()),
        category,
        option::of(meta()),
    )
        .prop_map(
            |(id, name, (kind, value, options), description, category, meta)| {
                let mut v = SessionConfigOption::new(id, name, value, kind);
                v.options = options;
                v.description = description;
                v.category = category;
                v.meta = meta;
                v
            },
        )
        .boxed()
}

pub fn arb_set_session_config_option_request(
    valid: bool,
) -> BoxedStrategy<SetSessionConfigOptionRequest<'static>> {
    let _ = valid;
    let value = prop_oneof![
        text().prop_map(|s| (SessionConfigValueKind::Id, ConfigValue::Id(s))),
        any::<bool>().prop_map(|b| (SessionConfigValueKind::Boolean, ConfigValue::Bool(b))),
    ];
    (text(), text(), value, option::of(meta()))
        .prop_map(|(session, config, (kind, value), meta)| {
            let mut v = SetSessionConfigOptionRequest::new(session, config, value, kind);
            v.meta = meta;
            v
        })
        .boxed()
}

/// Text of `1..` characters (for a name the schema wants non-empty).
pub fn name() -> BoxedStrategy<Cow<'static, str>> {
    text1()
}
