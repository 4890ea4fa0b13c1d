//! Every kind of message the encoder produces validates against the
//! official ACP JSON Schemas (`tests/fixtures/acp/`: what
//! `agent-client-protocol-schema` 1.20.0 derives, stable and unstable),
//! checked by `scripts/check_acp_schema.py` (Python `jsonschema`).
//!
//! Samples come from the proptest strategies restricted to schema-valid
//! values (no unknown variants). When `python3` with `jsonschema` is not
//! installed the check is skipped with a message, unless
//! `ACP_SCHEMA_CHECK=require` (CI sets it), which makes that a failure.
#![cfg(feature = "std")]

use crate::acp_support;

use acp_codec::acp::*;
use acp_support::arb::*;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use serde_json::{json, Value};

const PER_TYPE: usize = 40;

fn samples<T, S: Strategy<Value = T>>(runner: &mut TestRunner, s: S) -> Vec<T> {
    (0..PER_TYPE)
        .map(|_| s.new_tree(runner).unwrap().current())
        .collect()
}

struct Out(Vec<String>);

impl Out {
    fn push(&mut self, def: Option<&str>, part: Option<&str>, bytes: &[u8]) {
        let text = std::str::from_utf8(bytes).unwrap();
        assert_eq!(text.matches('\n').count(), 1, "{text}");
        let message: Value = serde_json::from_str(text).unwrap();
        self.0
            .push(json!({"def": def, "part": part, "message": message}).to_string());
    }

    fn request(&mut self, def: &str, p: RequestParams<'_>) {
        let mut out = Vec::new();
        encode_request(&RequestId::Number(3), &p, &mut out).unwrap();
        self.push(Some(def), Some("params"), &out);
        let mut out = Vec::new();
        encode_request(&RequestId::from("req-7"), &p, &mut out).unwrap();
        self.push(None, None, &out);
    }

    fn notification(&mut self, def: &str, p: NotificationParams<'_>) {
        let mut out = Vec::new();
        encode_notification(&p, &mut out).unwrap();
        self.push(Some(def), Some("params"), &out);
    }

    fn result(&mut self, def: &str, r: ResponseResult<'_>) {
        let mut out = Vec::new();
        encode_response(&RequestId::Number(3), &r, &mut out).unwrap();
        self.push(Some(def), Some("result"), &out);
    }
}

#[test]
fn encoded_messages_validate_against_the_schema() {
    let mut r = TestRunner::deterministic();
    let mut o = Out(Vec::new());
    macro_rules! req {
        ($def:literal, $arb:ident, $v:ident) => {
            for x in samples(&mut r, $arb(true)) {
                o.request($def, RequestParams::$v(x));
            }
        };
    }
    macro_rules! res {
        ($def:literal, $arb:ident, $v:ident) => {
            for x in samples(&mut r, $arb(true)) {
                o.result($def, ResponseResult::$v(x));
            }
        };
    }
    req!("InitializeRequest", arb_initialize_request, Initialize);
    req!(
        "AuthenticateRequest",
        arb_authenticate_request,
        Authenticate
    );
    req!("LogoutRequest", arb_meta_only, Logout);
    req!("NewSessionRequest", arb_new_session_request, NewSession);
    req!("LoadSessionRequest", arb_load_session_request, LoadSession);
    req!(
        "ListSessionsRequest",
        arb_list_sessions_request,
        ListSessions
    );
    req!(
        "DeleteSessionRequest",
        arb_session_id_request,
        DeleteSession
    );
    req!(
        "ResumeSessionRequest",
        arb_resume_session_request,
        ResumeSession
    );
    req!("CloseSessionRequest", arb_session_id_request, CloseSession);
    req!(
        "SetSessionModeRequest",
        arb_set_session_mode_request,
        SetSessionMode
    );
    req!(
        "SetSessionConfigOptionRequest",
        arb_set_session_config_option_request,
        SetSessionConfigOption
    );
    req!(
        "SetSessionModelRequest",
        arb_set_session_model_request,
        SetSessionModel
    );
    req!("PromptRequest", arb_prompt_request, Prompt);
    req!(
        "RequestPermissionRequest",
        arb_request_permission_request,
        RequestPermission
    );
    req!(
        "ReadTextFileRequest",
        arb_read_text_file_request,
        ReadTextFile
    );
    req!(
        "WriteTextFileRequest",
        arb_write_text_file_request,
        WriteTextFile
    );
    req!(
        "CreateTerminalRequest",
        arb_create_terminal_request,
        CreateTerminal
    );
    req!(
        "TerminalOutputRequest",
        arb_terminal_request,
        TerminalOutput
    );
    req!(
        "ReleaseTerminalRequest",
        arb_terminal_request,
        ReleaseTerminal
    );
    req!(
        "WaitForTerminalExitRequest",
        arb_terminal_request,
        WaitForTerminalExit
    );
    req!("KillTerminalRequest", arb_terminal_request, KillTerminal);
    req!(
        "CreateElicitationRequest",
        arb_create_elicitation_request,
        CreateElicitation
    );
    for x in samples(&mut r, arb_session_id_request(true)) {
        o.notification("CancelNotification", NotificationParams::Cancel(x));
    }
    // Many session updates: the union with the most variants.
    for _ in 0..5 {
        for x in samples(&mut r, arb_session_notification(true)) {
            o.notification("SessionNotification", NotificationParams::SessionUpdate(x));
        }
    }
    for x in samples(&mut r, arb_complete_elicitation_notification(true)) {
        o.notification(
            "CompleteElicitationNotification",
            NotificationParams::CompleteElicitation(x),
        );
    }
    for x in samples(&mut r, arb_cancel_request_notification(true)) {
        o.notification(
            "CancelRequestNotification",
            NotificationParams::CancelRequest(x),
        );
    }
    res!("InitializeResponse", arb_initialize_response, Initialize);
    res!("AuthenticateResponse", arb_meta_only, Authenticate);
    res!("LogoutResponse", arb_meta_only, Logout);
    res!("NewSessionResponse", arb_new_session_response, NewSession);
    res!(
        "LoadSessionResponse",
        arb_load_session_response,
        LoadSession
    );
    res!(
        "ListSessionsResponse",
        arb_list_sessions_response,
        ListSessions
    );
    res!("DeleteSessionResponse", arb_meta_only, DeleteSession);
    res!(
        "ResumeSessionResponse",
        arb_resume_session_response,
        ResumeSession
    );
    res!("CloseSessionResponse", arb_meta_only, CloseSession);
    res!("SetSessionModeResponse", arb_meta_only, SetSessionMode);
    res!(
        "SetSessionConfigOptionResponse",
        arb_set_session_config_option_response,
        SetSessionConfigOption
    );
    res!("SetSessionModelResponse", arb_meta_only, SetSessionModel);
    res!("PromptResponse", arb_prompt_response, Prompt);
    res!(
        "RequestPermissionResponse",
        arb_request_permission_response,
        RequestPermission
    );
    res!(
        "ReadTextFileResponse",
        arb_read_text_file_response,
        ReadTextFile
    );
    res!("WriteTextFileResponse", arb_meta_only, WriteTextFile);
    res!(
        "CreateTerminalResponse",
        arb_create_terminal_response,
        CreateTerminal
    );
    res!(
        "TerminalOutputResponse",
        arb_terminal_output_response,
        TerminalOutput
    );
    res!("ReleaseTerminalResponse", arb_meta_only, ReleaseTerminal);
    res!(
        "WaitForTerminalExitResponse",
        arb_terminal_exit_status,
        WaitForTerminalExit
    );
    res!("KillTerminalResponse", arb_meta_only, KillTerminal);
    res!(
        "CreateElicitationResponse",
        arb_create_elicitation_response,
        CreateElicitation
    );
    #[cfg(feature = "unstable")]
    unstable_samples(&mut r, &mut o);
    // Error responses with every ACP code, and the tracker's cancellations.
    for code in [
        -32700, -32600, -32601, -32602, -32603, -32800, -32000, -32002, -1,
    ] {
        let mut out = Vec::new();
        let mut e = RpcError::new(acp_codec::ErrorCode(code), "boom");
        if code == -32002 {
            e.data = Some(RawJson::from_text("{\"uri\":\"file:///x\"}").unwrap());
        }
        encode_error(&RequestId::Number(1), &e, &mut out).unwrap();
        o.push(Some("Error"), Some("error"), &out);
    }
    let mut t = Tracker::new();
    let id = t.start("session/prompt", std::time::Duration::ZERO);
    let mut out = Vec::new();
    t.cancel(&id, &mut out).unwrap();
    o.push(Some("CancelRequestNotification"), Some("params"), &out);
    let mut out = Vec::new();
    t.cancel_session("s1", &mut out).unwrap();
    o.push(Some("CancelNotification"), Some("params"), &out);

    // With feature `unstable` the strategies generate its additions
    // anywhere: everything is checked against the unstable schema.
    let flags: &[&str] = if cfg!(feature = "unstable") {
        &["--unstable"]
    } else {
        &[]
    };
    crate::schema_check::validate("acp-schema-samples.ndjson", &o.0, flags);
}

/// Samples of every method, result and notification feature `unstable`
/// adds (the new members and variants of existing types come with the
/// samples above).
#[cfg(feature = "unstable")]
fn unstable_samples(r: &mut TestRunner, o: &mut Out) {
    macro_rules! req {
        ($def:literal, $arb:ident, $v:ident) => {
            for x in samples(r, $arb(true)) {
                o.request($def, RequestParams::$v(x));
            }
        };
    }
    macro_rules! res {
        ($def:literal, $arb:ident, $v:ident) => {
            for x in samples(r, $arb(true)) {
                o.result($def, ResponseResult::$v(x));
            }
        };
    }
    req!(
        "ListProvidersRequest",
        arb_list_providers_request,
        ListProviders
    );
    req!("SetProviderRequest", arb_set_provider_request, SetProvider);
    req!(
        "DisableProviderRequest",
        arb_disable_provider_request,
        DisableProvider
    );
    req!("AuthStatusRequest", arb_auth_status_request, AuthStatus);
    req!("ForkSessionRequest", arb_fork_session_request, ForkSession);
    req!(
        "ArchiveSessionRequest",
        arb_archive_session_request,
        ArchiveSession
    );
    req!(
        "UnarchiveSessionRequest",
        arb_unarchive_session_request,
        UnarchiveSession
    );
    req!(
        "SessionStatusRequest",
        arb_session_status_request,
        SessionStatus
    );
    req!(
        "SessionOptionsRequest",
        arb_session_options_request,
        SessionOptions
    );
    req!(
        "SetSessionTitleRequest",
        arb_set_session_title_request,
        SetSessionTitle
    );
    req!("MessageMcpRequest", arb_message_mcp_request, McpMessage);
    res!(
        "ListProvidersResponse",
        arb_list_providers_response,
        ListProviders
    );
    res!(
        "SetProviderResponse",
        arb_set_provider_response,
        SetProvider
    );
    res!(
        "DisableProviderResponse",
        arb_disable_provider_response,
        DisableProvider
    );
    res!("AuthStatusResponse", arb_auth_status_response, AuthStatus);
    res!(
        "ForkSessionResponse",
        arb_fork_session_response,
        ForkSession
    );
    res!(
        "ArchiveSessionResponse",
        arb_archive_session_response,
        ArchiveSession
    );
    res!(
        "UnarchiveSessionResponse",
        arb_unarchive_session_response,
        UnarchiveSession
    );
    res!(
        "SessionStatusResponse",
        arb_session_status_response,
        SessionStatus
    );
    res!(
        "SessionOptionsResponse",
        arb_session_options_response,
        SessionOptions
    );
    res!(
        "SetSessionTitleResponse",
        arb_set_session_title_response,
        SetSessionTitle
    );
    res!("MessageMcpResponse", arb_message_mcp_response, McpMessage);
    for x in samples(r, arb_auth_status_update_notification(true)) {
        o.notification(
            "AuthStatusUpdateNotification",
            NotificationParams::AuthStatusUpdate(x),
        );
    }
    for x in samples(r, arb_message_mcp_notification(true)) {
        o.notification("MessageMcpNotification", NotificationParams::McpMessage(x));
    }
    // Every session update, many times (the union picks one of 21).
    for _ in 0..5 {
        for x in samples(r, arb_session_update(true)) {
            let n = SessionNotification::new("s1", x);
            o.notification("SessionNotification", NotificationParams::SessionUpdate(n));
        }
    }
}
