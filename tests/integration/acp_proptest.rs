//! Property tests: arbitrary typed messages survive encode then decode,
//! unknown variants re-encode byte for byte, encoding is always one line.
#![cfg(feature = "std")]

use crate::acp_support;

use acp_codec::acp::Mode;
use acp_codec::acp::*;
use acp_support::arb::*;
use proptest::prelude::*;

/// Encodes `params` as a request, decodes it, and checks the typed value.
fn request_round_trip(id: RequestId<'static>, params: RequestParams<'static>) {
    let mut out = Vec::new();
    encode_request(&id, &params, &mut out).unwrap();
    let text = std::str::from_utf8(&out).unwrap();
    assert_eq!(text.matches('\n').count(), 1);
    let msg = Message::decode(text.trim_end_matches('\n')).unwrap();
    let Message::Request(r) = &msg else {
        panic!("{text}")
    };
    assert_eq!(r.id, id);
    // Equal, and nothing salvaged: what the crate encodes fits the schema.
    assert_eq!(
        r.typed(Mode::Lenient).unwrap(),
        Typed::clean(params),
        "{text}"
    );
    // Re-encoding the decoded envelope gives the same bytes.
    let mut again = Vec::new();
    msg.encode(&mut again).unwrap();
    assert_eq!(again, out);
}

fn notification_round_trip(params: NotificationParams<'static>) {
    let mut out = Vec::new();
    encode_notification(&params, &mut out).unwrap();
    let text = std::str::from_utf8(&out).unwrap();
    assert_eq!(text.matches('\n').count(), 1);
    let msg = Message::decode(text.trim_end_matches('\n')).unwrap();
    let Message::Notification(n) = &msg else {
        panic!("{text}")
    };
    assert_eq!(
        n.typed(Mode::Lenient).unwrap(),
        Typed::clean(params),
        "{text}"
    );
}

fn result_round_trip(method: &str, result: ResponseResult<'static>) {
    let mut out = Vec::new();
    encode_response(&RequestId::Number(1), &result, &mut out).unwrap();
    let text = std::str::from_utf8(&out).unwrap();
    assert_eq!(text.matches('\n').count(), 1);
    let msg = Message::decode(text.trim_end_matches('\n')).unwrap();
    let Message::Response(r) = &msg else {
        panic!("{text}")
    };
    assert_eq!(
        r.typed(method, Mode::Lenient).unwrap(),
        Typed::clean(result.clone()),
        "{text}"
    );
    assert_eq!(
        r.typed(method, Mode::Lenient).unwrap().into_owned(),
        Typed::clean(result)
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn session_updates_round_trip(u in arb_session_notification(false)) {
        notification_round_trip(NotificationParams::SessionUpdate(u));
    }

    #[test]
    fn prompts_round_trip(id in request_id(), p in arb_prompt_request(false)) {
        request_round_trip(id, RequestParams::Prompt(p));
    }

    #[test]
    fn client_requests_round_trip(
        id in request_id(),
        i in arb_initialize_request(false),
        n in arb_new_session_request(false),
        l in arb_load_session_request(false),
        r in arb_resume_session_request(false),
        c in arb_set_session_config_option_request(false),
        a in arb_authenticate_request(false),
        ls in arb_list_sessions_request(false),
        m in arb_set_session_mode_request(false),
        sm in arb_set_session_model_request(false),
        s in arb_session_id_request(false),
    ) {
        for p in [
            RequestParams::Initialize(i), RequestParams::NewSession(n), RequestParams::LoadSession(l),
            RequestParams::ResumeSession(r), RequestParams::SetSessionConfigOption(c),
            RequestParams::Authenticate(a), RequestParams::ListSessions(ls), RequestParams::SetSessionMode(m),
            RequestParams::SetSessionModel(sm), RequestParams::DeleteSession(s.clone()),
            RequestParams::CloseSession(s), RequestParams::Logout(MetaOnly::new()),
        ] {
            request_round_trip(id.clone(), p);
        }
    }

    #[test]
    fn agent_requests_round_trip(
        id in request_id(),
        perm in arb_request_permission_request(false),
        rf in arb_read_text_file_request(false),
        wf in arb_write_text_file_request(false),
        ct in arb_create_terminal_request(false),
        t in arb_terminal_request(false),
        el in arb_create_elicitation_request(false),
    ) {
        for p in [
            RequestParams::RequestPermission(perm), RequestParams::ReadTextFile(rf),
            RequestParams::WriteTextFile(wf), RequestParams::CreateTerminal(ct),
            RequestParams::TerminalOutput(t.clone()), RequestParams::ReleaseTerminal(t.clone()),
            RequestParams::WaitForTerminalExit(t.clone()), RequestParams::KillTerminal(t),
            RequestParams::CreateElicitation(el),
        ] {
            request_round_trip(id.clone(), p);
        }
    }

    #[test]
    fn notifications_round_trip(
        c in arb_session_id_request(false),
        e in arb_complete_elicitation_notification(false),
        r in arb_cancel_request_notification(false),
    ) {
        notification_round_trip(NotificationParams::Cancel(c));
        notification_round_trip(NotificationParams::CompleteElicitation(e));
        notification_round_trip(NotificationParams::CancelRequest(r));
    }

    #[test]
    fn results_round_trip(
        i in arb_initialize_response(false),
        n in arb_new_session_response(false),
        l in arb_load_session_response(false),
        ls in arb_list_sessions_response(false),
        rs in arb_resume_session_response(false),
        sc in arb_set_session_config_option_response(false),
        p in arb_prompt_response(false),
        perm in arb_request_permission_response(false),
        rf in arb_read_text_file_response(false),
        ct in arb_create_terminal_response(false),
        to in arb_terminal_output_response(false),
        we in arb_terminal_exit_status(false),
        el in arb_create_elicitation_response(false),
        m in arb_meta_only(false),
    ) {
        result_round_trip(names::INITIALIZE, ResponseResult::Initialize(i));
        result_round_trip(names::SESSION_NEW, ResponseResult::NewSession(n));
        result_round_trip(names::SESSION_LOAD, ResponseResult::LoadSession(l));
        result_round_trip(names::SESSION_LIST, ResponseResult::ListSessions(ls));
        result_round_trip(names::SESSION_RESUME, ResponseResult::ResumeSession(rs));
        result_round_trip(names::SESSION_SET_CONFIG_OPTION, ResponseResult::SetSessionConfigOption(sc));
        result_round_trip(names::SESSION_PROMPT, ResponseResult::Prompt(p));
        result_round_trip(names::SESSION_REQUEST_PERMISSION, ResponseResult::RequestPermission(perm));
        result_round_trip(names::FS_READ_TEXT_FILE, ResponseResult::ReadTextFile(rf));
        result_round_trip(names::TERMINAL_CREATE, ResponseResult::CreateTerminal(ct));
        result_round_trip(names::TERMINAL_OUTPUT, ResponseResult::TerminalOutput(to));
        result_round_trip(names::TERMINAL_WAIT_FOR_EXIT, ResponseResult::WaitForTerminalExit(we));
        result_round_trip(names::ELICITATION_CREATE, ResponseResult::CreateElicitation(el));
        for method in [names::AUTHENTICATE, names::LOGOUT, names::SESSION_DELETE, names::SESSION_CLOSE,
                       names::SESSION_SET_MODE, names::SESSION_SET_MODEL, names::FS_WRITE_TEXT_FILE,
                       names::TERMINAL_RELEASE, names::TERMINAL_KILL] {
            let response = Response { id: RequestId::Number(1), result: RawJson::to_raw(&m).unwrap() };
            let r = response.typed(method, Mode::Lenient).unwrap().value.into_owned();
            result_round_trip(method, r);
        }
    }

    /// An unknown `sessionUpdate` re-encodes byte for byte, inside any
    /// envelope.
    #[test]
    fn unknown_updates_are_byte_identical(raw in unknown_object("sessionUpdate"), sid in text()) {
        let params = NotificationParams::SessionUpdate(SessionNotification::new(
            sid, SessionUpdate::Unknown(raw.clone()),
        ));
        let mut out = Vec::new();
        encode_notification(&params, &mut out).unwrap();
        let line = std::str::from_utf8(&out).unwrap().trim_end();
        let msg = Message::decode(line).unwrap();
        let Message::Notification(n) = &msg else { panic!() };
        let NotificationParams::SessionUpdate(u) = n.typed(Mode::Lenient).unwrap().value else { panic!() };
        let SessionUpdate::Unknown(back) = &u.update else { panic!("{line}") };
        prop_assert_eq!(back.get(), raw.get());
    }

    /// Any string decodes or fails cleanly; what decodes re-encodes to one
    /// line that decodes to the same message.
    #[test]
    fn any_line_is_safe(line in "\\PC{0,80}") {
        if let Ok(msg) = Message::decode(&line) {
            let mut out = Vec::new();
            msg.encode(&mut out).unwrap();
            prop_assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
            let again = Message::decode(std::str::from_utf8(&out).unwrap().trim_end()).unwrap();
            prop_assert_eq!(again, msg);
        }
    }
}
