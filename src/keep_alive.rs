//! The keep-alive verdict of RFC 9112 section 9.3.

/// Whether a connection may carry another message after the current one.
///
/// The verdict of a message is known once its head is decoded (it depends on
/// the version, the `Connection` field and the body framing) and final when
/// its last body byte has been decoded.
///
/// The default is [`KeepAlive::Reusable`]: a verdict before anything
/// says to close.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum KeepAlive {
    /// Another message may follow on this connection.
    #[default]
    Reusable,
    /// The connection must close after this message, for the given reason.
    Close(CloseReason),
}

impl KeepAlive {
    /// `true` for [`KeepAlive::Reusable`].
    pub fn is_reusable(self) -> bool {
        matches!(self, KeepAlive::Reusable)
    }

    /// The reason to close, if the verdict is to close.
    pub fn close_reason(self) -> Option<CloseReason> {
        match self {
            KeepAlive::Reusable => None,
            KeepAlive::Close(reason) => Some(reason),
        }
    }

    /// Combines two verdicts: reusable only if both are; otherwise the first
    /// reason to close wins.
    pub fn and(self, other: KeepAlive) -> KeepAlive {
        match self {
            KeepAlive::Reusable => other,
            close => close,
        }
    }
}

/// Why a connection cannot be reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CloseReason {
    /// The peer sent `Connection: close`.
    PeerClose,
    /// The local side asked for `Connection: close`.
    LocalClose,
    /// An HTTP/1.0 message without `Connection: keep-alive`.
    Http10,
    /// The body is delimited by the connection closing.
    CloseDelimited,
    /// A message carried both `Transfer-Encoding` and `Content-Length` (a
    /// response, or a request read with the `chunked_with_content_length`
    /// leniency tolerance); it was framed by `Transfer-Encoding`, but the
    /// connection is not trusted for another message (RFC 9112 sections
    /// 6.1 and 6.3).
    FramingConflict,
    /// A request body was not read to its end.
    UnreadBody,
    /// The server refused an `Expect: 100-continue` request body.
    RejectedContinue,
    /// The peer violated the protocol.
    ProtocolError,
    /// The connection switched to another protocol (101 Switching Protocols
    /// or a 2xx answer to CONNECT).
    Switched,
    /// The peer closed its side of the connection.
    PeerEof,
    /// A CONNECT request was answered with a final response other than
    /// 2xx: the bytes the client sent after its head may be tunnel data,
    /// so nothing more on the connection is read as HTTP.
    ConnectRefused,
    /// A final response other than 2xx arrived before the request was
    /// completely sent: the client withdraws the rest, and the connection
    /// cannot be reused.
    RequestWithdrawn,
}
