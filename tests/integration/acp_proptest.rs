//! Property tests: arbitrary typed messages survive encode then decode,
//! unknown variants re-encode byte for byte, encoding is always one line.
//! The params and results of every stable method of the generated method
//! table (`acp::METHODS`) are generated: a method missing from the lists
//! here fails `every_stable_method_is_covered`.
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

/// Every stable request's params, the same id for all (the lists below are
/// written by hand; `every_stable_method_is_covered` holds them against
/// the generated method table).
fn client_requests() -> impl Strategy<Value = Vec<RequestParams<'static>>> {
    (
        (
            arb_initialize_request(false),
            arb_new_session_request(false),
            arb_load_session_request(false),
            arb_resume_session_request(false),
            arb_set_session_config_option_request(false),
            arb_authenticate_request(false),
        ),
        (
            arb_list_sessions_request(false),
            arb_set_session_mode_request(false),
            arb_set_session_model_request(false),
            arb_session_id_request(false),
            arb_prompt_request(false),
        ),
    )
        .prop_map(|((i, n, l, r, c, a), (ls, m, sm, s, p))| {
            vec![
                RequestParams::Initialize(i),
                RequestParams::NewSession(n),
                RequestParams::LoadSession(l),
                RequestParams::ResumeSession(r),
                RequestParams::SetSessionConfigOption(c),
                RequestParams::Authenticate(a),
                RequestParams::ListSessions(ls),
                RequestParams::SetSessionMode(m),
                RequestParams::SetSessionModel(sm),
                RequestParams::DeleteSession(s.clone()),
                RequestParams::CloseSession(s),
                RequestParams::Logout(MetaOnly::new()),
                RequestParams::Prompt(p),
            ]
        })
}

fn agent_requests() -> impl Strategy<Value = Vec<RequestParams<'static>>> {
    (
        arb_request_permission_request(false),
        arb_read_text_file_request(false),
        arb_write_text_file_request(false),
        arb_create_terminal_request(false),
        arb_terminal_request(false),
        arb_create_elicitation_request(false),
    )
        .prop_map(|(perm, rf, wf, ct, t, el)| {
            vec![
                RequestParams::RequestPermission(perm),
                RequestParams::ReadTextFile(rf),
                RequestParams::WriteTextFile(wf),
                RequestParams::CreateTerminal(ct),
                RequestParams::TerminalOutput(t.clone()),
                RequestParams::ReleaseTerminal(t.clone()),
                RequestParams::WaitForTerminalExit(t.clone()),
                RequestParams::KillTerminal(t),
                RequestParams::CreateElicitation(el),
            ]
        })
}

fn notifications() -> impl Strategy<Value = Vec<NotificationParams<'static>>> {
    (
        arb_session_id_request(false),
        arb_complete_elicitation_notification(false),
        arb_cancel_request_notification(false),
        arb_session_notification(false),
    )
        .prop_map(|(c, e, r, u)| {
            vec![
                NotificationParams::Cancel(c),
                NotificationParams::CompleteElicitation(e),
                NotificationParams::CancelRequest(r),
                NotificationParams::SessionUpdate(u),
            ]
        })
}

/// Every stable request's result, with the method it answers.
fn results() -> impl Strategy<Value = Vec<(&'static str, ResponseResult<'static>)>> {
    (
        (
            arb_initialize_response(false),
            arb_new_session_response(false),
            arb_load_session_response(false),
            arb_list_sessions_response(false),
            arb_resume_session_response(false),
            arb_set_session_config_option_response(false),
            arb_prompt_response(false),
        ),
        (
            arb_request_permission_response(false),
            arb_read_text_file_response(false),
            arb_create_terminal_response(false),
            arb_terminal_output_response(false),
            arb_terminal_exit_status(false),
            arb_create_elicitation_response(false),
            arb_meta_only(false),
        ),
    )
        .prop_map(
            |((i, n, l, ls, rs, sc, p), (perm, rf, ct, to, we, el, m))| {
                let mut all = vec![
                    (names::INITIALIZE, ResponseResult::Initialize(i)),
                    (names::SESSION_NEW, ResponseResult::NewSession(n)),
                    (names::SESSION_LOAD, ResponseResult::LoadSession(l)),
                    (names::SESSION_LIST, ResponseResult::ListSessions(ls)),
                    (names::SESSION_RESUME, ResponseResult::ResumeSession(rs)),
                    (
                        names::SESSION_SET_CONFIG_OPTION,
                        ResponseResult::SetSessionConfigOption(sc),
                    ),
                    (names::SESSION_PROMPT, ResponseResult::Prompt(p)),
                    (
                        names::SESSION_REQUEST_PERMISSION,
                        ResponseResult::RequestPermission(perm),
                    ),
                    (names::FS_READ_TEXT_FILE, ResponseResult::ReadTextFile(rf)),
                    (names::TERMINAL_CREATE, ResponseResult::CreateTerminal(ct)),
                    (names::TERMINAL_OUTPUT, ResponseResult::TerminalOutput(to)),
                    (
                        names::TERMINAL_WAIT_FOR_EXIT,
                        ResponseResult::WaitForTerminalExit(we),
                    ),
                    (
                        names::ELICITATION_CREATE,
                        ResponseResult::CreateElicitation(el),
                    ),
                ];
                // The methods whose result is only `_meta`.
                for method in [
                    names::AUTHENTICATE,
                    names::LOGOUT,
                    names::SESSION_DELETE,
                    names::SESSION_CLOSE,
                    names::SESSION_SET_MODE,
                    names::SESSION_SET_MODEL,
                    names::FS_WRITE_TEXT_FILE,
                    names::TERMINAL_RELEASE,
                    names::TERMINAL_KILL,
                ] {
                    let response = Response {
                        id: RequestId::Number(1),
                        result: RawJson::to_raw(&m).unwrap(),
                    };
                    let r = response.typed(method, Mode::Lenient).unwrap().value;
                    all.push((method, r.into_owned()));
                }
                all
            },
        )
}

/// The hand-written lists above cover every stable method of the
/// generated table, requests with their results: a method added to the
/// schema and not here fails this test.
#[test]
fn every_stable_method_is_covered() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    use std::collections::BTreeSet;

    let mut runner = TestRunner::deterministic();
    let mut requests = client_requests().new_tree(&mut runner).unwrap().current();
    requests.extend(agent_requests().new_tree(&mut runner).unwrap().current());
    let requests: BTreeSet<String> = requests.iter().map(|p| p.method().to_owned()).collect();
    let notifications = notifications().new_tree(&mut runner).unwrap().current();
    let notifications: BTreeSet<String> = notifications
        .iter()
        .map(|p| p.method().to_owned())
        .collect();
    let results = results().new_tree(&mut runner).unwrap().current();
    for (method, result) in &results {
        assert_eq!(result.method(), Some(*method));
    }
    let results: BTreeSet<String> = results.iter().map(|(m, _)| m.to_string()).collect();
    let table = |kind: MethodKind| -> BTreeSet<String> {
        METHODS
            .iter()
            .filter(|m| m.kind == kind && !m.unstable)
            .map(|m| m.name.to_owned())
            .collect()
    };
    assert_eq!(requests, table(MethodKind::Request));
    assert_eq!(results, table(MethodKind::Request));
    assert_eq!(notifications, table(MethodKind::Notification));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn requests_round_trip(id in request_id(), client in client_requests(), agent in agent_requests()) {
        for p in client.into_iter().chain(agent) {
            request_round_trip(id.clone(), p);
        }
    }

    #[test]
    fn notifications_round_trip(all in notifications()) {
        for p in all {
            notification_round_trip(p);
        }
    }

    #[test]
    fn results_round_trip(all in results()) {
        for (method, result) in all {
            result_round_trip(method, result);
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
