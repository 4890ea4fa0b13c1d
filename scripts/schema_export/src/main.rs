//! Prints the JSON Schema of every ACP message that
//! `agent-client-protocol-schema` derives, laid out as the official
//! `schema.json`: a root `anyOf` of the agent's messages, the client's and
//! the protocol-level notifications, with the types under `$defs`. With
//! feature `unstable` the schema crate's `unstable_*` additions are in
//! (its `unstable` feature: all of them but `unstable_protocol_v2`).
//!
//! From the crate root:
//!
//! ```text
//! cd scripts/schema_export
//! cargo run -q > ../../tests/fixtures/acp/schema-crate-1.20.0.json
//! cargo run -q --features unstable > ../../tests/fixtures/acp/schema-crate-1.20.0.unstable.json
//! ```

use agent_client_protocol_schema::v1::{
    AgentNotification, AgentRequest, AgentResponse, ClientNotification, ClientRequest,
    ClientResponse, JsonRpcMessage, Notification, ProtocolLevelNotification, Request, Response,
};
use schemars::generate::SchemaSettings;
use schemars::JsonSchema;

/// What one side sends.
#[allow(dead_code)]
#[derive(JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
enum Outgoing<Req: JsonSchema, Res: JsonSchema, Notif: JsonSchema> {
    #[schemars(title = "Request")]
    Request(Request<Req>),
    #[schemars(title = "Response")]
    Response(Response<Res>),
    #[schemars(title = "Notification")]
    Notification(Notification<Notif>),
}

// Every ACP message (a `//` comment: a doc comment would become the root
// schema's description, which the official file does not have).
#[allow(dead_code)]
#[derive(JsonSchema)]
#[serde(untagged)]
#[schemars(title = "Agent Client Protocol")]
enum AcpTypes {
    #[schemars(title = "Agent")]
    Agent(JsonRpcMessage<Outgoing<AgentRequest, AgentResponse, AgentNotification>>),
    #[schemars(title = "Client")]
    Client(JsonRpcMessage<Outgoing<ClientRequest, ClientResponse, ClientNotification>>),
    #[schemars(title = "ProtocolLevel")]
    ProtocolLevel(JsonRpcMessage<Notification<ProtocolLevelNotification>>),
}

fn main() -> Result<(), serde_json::Error> {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let schema = generator.into_root_schema_for::<AcpTypes>();
    println!("{}", serde_json::to_string_pretty(&schema)?);
    Ok(())
}
