//! JSON-RPC 2.0 error codes: every layer maps its errors to one, so an
//! adapter knows what to answer.

use core::fmt;

/// A JSON-RPC 2.0 error code, with the codes JSON-RPC and ACP define.
///
/// ```
/// use acp_codec::ErrorCode;
///
/// assert_eq!(ErrorCode::PARSE_ERROR.0, -32700);
/// assert_eq!(ErrorCode::REQUEST_CANCELLED.to_string(), "-32800 request cancelled");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// `-32700`: the line is not JSON.
    pub const PARSE_ERROR: Self = Self(-32700);
    /// `-32600`: the JSON is not a valid request (a batch, a bad envelope, a
    /// line over the size limit).
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// `-32601`: the method does not exist.
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// `-32602`: the params do not fit the method.
    pub const INVALID_PARAMS: Self = Self(-32602);
    /// `-32603`: an internal error.
    pub const INTERNAL_ERROR: Self = Self(-32603);
    /// `-32800` (ACP): the request was cancelled.
    pub const REQUEST_CANCELLED: Self = Self(-32800);
    /// `-32000` (ACP): authentication is required.
    pub const AUTH_REQUIRED: Self = Self(-32000);
    /// `-32002` (ACP): a resource, such as a file, was not found.
    pub const RESOURCE_NOT_FOUND: Self = Self(-32002);
    /// `-32022` (ACP): the agent speaks no protocol version at or below the
    /// one `initialize` asked for.
    pub const UNSUPPORTED_PROTOCOL_VERSION: Self = Self(-32022);

    /// The standard name of a known code, `None` for others.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            -32700 => "parse error",
            -32600 => "invalid request",
            -32601 => "method not found",
            -32602 => "invalid params",
            -32603 => "internal error",
            -32800 => "request cancelled",
            -32000 => "authentication required",
            -32002 => "resource not found",
            -32022 => "unsupported protocol version",
            _ => return None,
        })
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{} {}", self.0, name),
            None => write!(f, "{}", self.0),
        }
    }
}
