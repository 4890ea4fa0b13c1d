//! Leaf strategies for the generated ones in `arb.rs`, and the few types
//! whose schema ties fields together.
#![allow(dead_code)]

use std::borrow::Cow;

use acp_codec::acp::*;
use proptest::option;
use proptest::prelude::*;

pub fn text() -> BoxedStrategy<Cow<'static, str>> {
    prop_oneof![
        3 => "[a-z0-9 _./-]{0,12}",
        1 => any::<String>(),
        1 => Just("quote \" backslash \\ newline \n tab \t é 🦀".to_owned()),
    ]
    .prop_map(Cow::Owned)
    .boxed()
}

/// Non-empty text (the schema's `minLength: 1`).
pub fn text1() -> BoxedStrategy<Cow<'static, str>> {
    "[a-zA-Z0-9 ]{1,12}".prop_map(Cow::Owned).boxed()
}

pub fn float() -> BoxedStrategy<f64> {
    (-1000i32..1000).prop_map(|n| f64::from(n) / 4.0).boxed()
}

/// A JSON number: an integer, or a float exact in decimal.
pub fn number() -> BoxedStrategy<serde_json::Number> {
    prop_oneof![
        any::<i32>().prop_map(serde_json::Number::from),
        float().prop_map(|f| serde_json::Number::from_f64(f).unwrap()),
    ]
    .boxed()
}

fn raw_of(text: &str) -> RawJson<'static> {
    RawJson::from_string(text.to_owned()).unwrap()
}

/// Any JSON value, compact (as a decoder sees it after encoding).
pub fn raw() -> BoxedStrategy<RawJson<'static>> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i32>().prop_map(|n| serde_json::json!(n)),
        "[a-z\"\\\\\n]{0,6}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(3, 12, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            proptest::collection::btree_map("[a-z_]{1,5}", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
    .prop_map(|v| raw_of(&serde_json::to_string(&v).unwrap()))
    .boxed()
}

/// `_meta`: an object or null.
pub fn meta() -> BoxedStrategy<RawJson<'static>> {
    prop_oneof![
        Just(raw_of("{}")),
        Just(raw_of("{\"k\":[1,\"v\"]}")),
        Just(raw_of("null")),
        Just(raw_of("{\"quota\":{\"used\":1.5}}")),
    ]
    .boxed()
}

/// `env` of a terminal auth method: an object of strings.
pub fn env_map() -> BoxedStrategy<RawJson<'static>> {
    prop_oneof![
        Just(raw_of("{}")),
        Just(raw_of("{\"A\":\"1\",\"B\":\"x y\"}"))
    ]
    .boxed()
}

pub fn request_id() -> BoxedStrategy<RequestId<'static>> {
    prop_oneof![
        Just(RequestId::Null),
        any::<i64>().prop_map(RequestId::Number),
        text().prop_map(RequestId::Str),
    ]
    .boxed()
}

/// A word no ACP enum uses.
pub fn unknown_word() -> BoxedStrategy<String> {
    "[a-z]{1,8}".prop_map(|w| format!("x_future_{w}")).boxed()
}

/// An object whose `tag` member holds a value no ACP union uses.
pub fn unknown_object(tag: &'static str) -> BoxedStrategy<RawJson<'static>> {
    (unknown_word(), raw())
        .prop_map(move |(w, v)| raw_of(&format!("{{\"{tag}\":\"{w}\",\"payload\":{v}}}")))
        .boxed()
}

pub fn arb_set_session_config_option_request(
    valid: bool,
) -> BoxedStrategy<SetSessionConfigOptionRequest<'static>> {
    let _ = valid;
    let value = prop_oneof![
        any::<bool>().prop_map(|b| (Some(Cow::Borrowed("boolean")), ConfigValue::Bool(b))),
        text().prop_map(|s| (None, ConfigValue::Id(s))),
    ];
    (text(), text(), value, option::of(meta()))
        .prop_map(|(session_id, config_id, (kind, value), meta)| {
            let mut v = SetSessionConfigOptionRequest::new(session_id, config_id, value);
            v.kind = kind;
            v.meta = meta;
            v
        })
        .boxed()
}

pub fn arb_create_elicitation_request(
    valid: bool,
) -> BoxedStrategy<CreateElicitationRequest<'static>> {
    let _ = valid;
    let scope = prop_oneof![
        (text(), option::of(text())).prop_map(|(s, t)| (Some(s), t, None)),
        request_id().prop_map(|r| (None, None, Some(r))),
    ];
    let mode = prop_oneof![
        Just((ElicitationMode::Form, Some(raw_of("{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"title\":\"Name\"}},\"required\":[\"name\"]}")), None, None)),
        (text(), text()).prop_map(|(id, url)| (ElicitationMode::Url, None, Some(id), Some(url))),
    ];
    (text(), mode, scope, option::of(meta()))
        .prop_map(
            |(
                message,
                (mode, requested_schema, elicitation_id, url),
                (session_id, tool_call_id, request_id),
                meta,
            )| {
                let mut v = CreateElicitationRequest::new(message, mode);
                v.requested_schema = requested_schema;
                v.elicitation_id = elicitation_id;
                v.url = url;
                v.session_id = session_id;
                v.tool_call_id = tool_call_id;
                v.request_id = request_id;
                v.meta = meta;
                v
            },
        )
        .boxed()
}

pub fn arb_create_elicitation_response(
    valid: bool,
) -> BoxedStrategy<CreateElicitationResponse<'static>> {
    let _ = valid;
    prop_oneof![
        option::of(Just(raw_of(
            "{\"name\":\"Ada\",\"age\":36,\"tags\":[\"a\"],\"ok\":true}"
        )))
        .prop_map(|content| (ElicitationAction::Accept, content)),
        Just((ElicitationAction::Decline, None)),
        Just((ElicitationAction::Cancel, None)),
    ]
    .prop_flat_map(|(action, content)| {
        option::of(meta()).prop_map(move |meta| {
            let mut v = CreateElicitationResponse::new(action.clone());
            v.content = content.clone();
            v.meta = meta;
            v
        })
    })
    .boxed()
}

/// `type: "boolean"` goes with a boolean value, no `type` with a value id.
#[cfg(feature = "unstable")]
pub fn arb_initial_session_config_option(
    valid: bool,
) -> BoxedStrategy<InitialSessionConfigOption<'static>> {
    let _ = valid;
    let value = prop_oneof![
        any::<bool>().prop_map(|b| (Some(Cow::Borrowed("boolean")), ConfigValue::Bool(b))),
        text().prop_map(|s| (None, ConfigValue::Id(s))),
    ];
    (text(), value, option::of(meta()))
        .prop_map(|(config_id, (kind, value), meta)| {
            let mut v = InitialSessionConfigOption::new(config_id, value);
            v.kind = kind;
            v.meta = meta;
            v
        })
        .boxed()
}

/// A suggestion's prompt is never empty.
#[cfg(feature = "unstable")]
pub fn arb_prompt_suggestion(valid: bool) -> BoxedStrategy<PromptSuggestion<'static>> {
    (
        proptest::collection::vec(super::arb::arb_content_block(valid), 1..3),
        option::of(meta()),
    )
        .prop_map(|(prompt, meta)| {
            let mut v = PromptSuggestion::new(prompt);
            v.meta = meta;
            v
        })
        .boxed()
}

/// Exactly one outcome, a result or an MCP error (the schema's two arms).
#[cfg(feature = "unstable")]
pub fn arb_message_mcp_response(valid: bool) -> BoxedStrategy<MessageMcpResponse<'static>> {
    let outcome = prop_oneof![
        raw().prop_map(|r| (Some(r), None)),
        super::arb::arb_mcp_error(valid).prop_map(|e| (None, Some(e))),
    ];
    (outcome, option::of(meta()))
        .prop_map(|((result, error), m)| {
            let mut v = MessageMcpResponse::new();
            v.result = result;
            v.error = error;
            v.meta = m;
            v
        })
        .boxed()
}
