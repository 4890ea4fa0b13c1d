//! Who a connection is: a user name, what the user may do, and the limits
//! every user has.

use alloc::string::String;
use core::fmt;

use crate::ErrorCode;

/// What a user may do through the router ([`Principal`](crate::remote::Principal)'s permissions).
///
/// - `read`: connect, `initialize`, `session/list`, reattach **their own**
///   sessions (`session/load`, `session/resume`) and receive their
///   updates; cancel their own requests (`$/cancel_request`). A read-only
///   user watches; the agent's requests for a session held by a read-only
///   connection (permission requests, `fs/*`, `terminal/*`) are answered
///   by the router (`cancelled`, or an error), never shown to it.
/// - `write` (which implies `read`): everything else: create sessions
///   (`session/new`, `session/fork`), prompt, cancel a turn, set the mode,
///   model or a config option, close or delete sessions, `authenticate`,
///   extension methods, and answer the agent's requests.
///
/// A user with neither may not connect.
///
/// ```
/// use acp_codec::remote::Permissions;
///
/// let p = Permissions::from_names(["read"]).unwrap();
/// assert!(p.read() && !p.write());
/// assert_eq!(Permissions::from_names(["write"]).unwrap(), Permissions::READ_WRITE);
/// let err = Permissions::from_names(["read", "admin"]).unwrap_err();
/// assert_eq!(err.name(), "admin");
/// assert_eq!(err.to_string(), "unknown permission \"admin\" (read, write)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Permissions {
    read: bool,
    write: bool,
}

impl Permissions {
    /// Neither: the user may not connect.
    pub const NONE: Self = Self {
        read: false,
        write: false,
    };
    /// `read` alone: watch their own sessions.
    pub const READ_ONLY: Self = Self {
        read: true,
        write: false,
    };
    /// `read` and `write`: everything.
    pub const READ_WRITE: Self = Self {
        read: true,
        write: true,
    };

    /// The permissions named (`"read"`, `"write"`); `write` implies `read`.
    ///
    /// # Errors
    ///
    /// [`UnknownPermission`] with the first name that is neither.
    pub fn from_names<'a>(
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self, UnknownPermission> {
        let mut p = Self::NONE;
        for name in names {
            match name {
                "read" => p.read = true,
                "write" => p = Self::READ_WRITE,
                other => return Err(UnknownPermission { name: other.into() }),
            }
        }
        Ok(p)
    }

    /// Whether the user may connect and watch their own sessions.
    pub const fn read(self) -> bool {
        self.read || self.write
    }

    /// Whether the user may prompt, change sessions and answer the agent.
    pub const fn write(self) -> bool {
        self.write
    }
}

/// A permission name [`Permissions::from_names`] does not know (the known
/// ones are `read` and `write`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPermission {
    name: String,
}

impl UnknownPermission {
    /// The name, as given.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for UnknownPermission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown permission {:?} (read, write)", self.name)
    }
}

impl core::error::Error for UnknownPermission {}

/// The default most connections one user may hold at once: 256.
pub const DEFAULT_MAX_USER_CONNECTIONS: usize = 256;

/// The default most sessions one user may hold open at once (held by a
/// connection, or being opened): 256. As many sessions whose connection
/// left stay the user's, for a reattach.
pub const DEFAULT_MAX_USER_SESSIONS: usize = 256;

/// The code of a request refused because its user lacks the `write`
/// permission: `-32010`, in JSON-RPC's range for server errors.
pub const FORBIDDEN: ErrorCode = ErrorCode(-32010);

/// The code of a request refused because its user holds as many sessions
/// as the limit allows: `-32011`, in JSON-RPC's range for server errors.
pub const USER_LIMIT: ErrorCode = ErrorCode(-32011);

/// Why the team server refused a connection: a WebSocket's
/// ([`Server::open_websocket`](crate::remote::Server::open_websocket))
/// or an `initialize` POST's, answered with its status and text.
///
/// ```
/// use std::time::Duration;
/// use acp_codec::remote::{ConnectError, Permissions, Principal, Server, ServerConfig};
///
/// let (t, mut config) = (Duration::ZERO, ServerConfig::new());
/// config.max_user_connections = 1;
/// let mut server = Server::new(config, t);
/// let ana = Principal::user("ana", Permissions::READ_WRITE);
/// let _a = server.open_websocket(t, &ana, Some([1; 16])).unwrap();
/// let refused = server.open_websocket(t, &ana, Some([2; 16])).unwrap_err();
/// let err = ConnectError::TooManyConnections { limit: 1 };
/// assert_eq!((refused.status, err.http_status()), (429, 429));
/// assert_eq!(refused.body, err.to_string());
/// assert_eq!(err.to_string(), "this user already holds 1 connections, the limit");
/// // Other users are not affected.
/// let bo = Principal::user("bo", Permissions::READ_ONLY);
/// assert!(server.open_websocket(t, &bo, Some([3; 16])).is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectError {
    /// The user has neither `read` nor `write`.
    NotPermitted,
    /// The agent is dedicated to another user (one agent per user,
    /// [`PoolMode`](crate::remote::PoolMode)).
    AnotherUsersAgent,
    /// The user holds as many connections as the limit allows.
    TooManyConnections {
        /// The limit.
        limit: usize,
    },
}

impl ConnectError {
    /// The HTTP status to refuse the connection with: `403`, or `429` for
    /// a limit.
    pub const fn http_status(&self) -> u16 {
        match self {
            Self::NotPermitted | Self::AnotherUsersAgent => 403,
            Self::TooManyConnections { .. } => 429,
        }
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotPermitted => f.write_str("this user has no permission to connect"),
            Self::AnotherUsersAgent => f.write_str("this agent serves another user"),
            Self::TooManyConnections { limit } => {
                write!(f, "this user already holds {limit} connections, the limit")
            }
        }
    }
}

impl core::error::Error for ConnectError {}
