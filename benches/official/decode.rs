//! A line of the recorded traffic decoded into the official
//! `agent-client-protocol-schema` types: shared by `traffic.rs` (criterion)
//! and `callgrind_official.rs` (instruction counts).

use std::hint::black_box;

use agent_client_protocol_schema::rpc::{JsonRpcMessage, Notification};
use agent_client_protocol_schema::v1::{
    PromptRequest, PromptResponse, ReadTextFileRequest, ReadTextFileResponse, Request,
    RequestPermissionRequest, RequestPermissionResponse, Response, SessionNotification,
    WriteTextFileRequest, WriteTextFileResponse,
};
use serde::de::DeserializeOwned;

use crate::real_traffic::Kind;

fn line_as<T: DeserializeOwned>(line: &str) -> bool {
    black_box(serde_json::from_str::<JsonRpcMessage<T>>(line)).is_ok()
}

/// The line decoded into the official types. Whether it succeeded.
pub fn official(kind: Kind, line: &str) -> bool {
    match kind {
        Kind::Update => line_as::<Notification<SessionNotification>>(line),
        Kind::Request("session/prompt") => line_as::<Request<PromptRequest>>(line),
        Kind::Request("fs/read_text_file") => line_as::<Request<ReadTextFileRequest>>(line),
        Kind::Request("fs/write_text_file") => line_as::<Request<WriteTextFileRequest>>(line),
        Kind::Request("session/request_permission") => {
            line_as::<Request<RequestPermissionRequest>>(line)
        }
        Kind::Result("session/prompt") => line_as::<Response<PromptResponse>>(line),
        Kind::Result("fs/read_text_file") => line_as::<Response<ReadTextFileResponse>>(line),
        Kind::Result("fs/write_text_file") => line_as::<Response<WriteTextFileResponse>>(line),
        Kind::Result("session/request_permission") => {
            line_as::<Response<RequestPermissionResponse>>(line)
        }
        Kind::Request(m) | Kind::Result(m) => unreachable!("{m}"),
    }
}
