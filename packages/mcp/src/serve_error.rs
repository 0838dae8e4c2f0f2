//! Why serving stopped or could not start: the errors of
//! [`crate::serve_stdio`] and `serve_http`, in a module of their own that
//! both transports take them from.

#[cfg(feature = "http")]
use std::net::SocketAddr;

/// Why the server could not run, or stopped on an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// No thread could be started to write the answers.
    #[error("cannot start the thread that writes answers: {0}")]
    WriterThread(#[source] std::io::Error),
    /// The client's first messages opened no session (boxed: the SDK's
    /// error is large, and every call returns this type).
    #[error("the client's initialization failed: {0}")]
    Initialize(#[source] Box<rmcp::service::ServerInitializeError>),
    /// The session's task ended abnormally.
    #[error("the server stopped: {0}")]
    Stopped(#[source] tokio::task::JoinError),
    /// No async runtime could be started.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The HTTP options may not serve ([`crate::HttpOptions::refusal`]).
    #[cfg(feature = "http")]
    #[error(transparent)]
    Refused(#[from] HttpRefusal),
    /// The address could not be bound.
    #[cfg(feature = "http")]
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address asked for.
        addr: SocketAddr,
        /// The system's error.
        source: std::io::Error,
    },
    /// The address bound could not be read back.
    #[cfg(feature = "http")]
    #[error("cannot read the address bound: {0}")]
    BoundAddress(#[source] std::io::Error),
    /// The signals that stop serving could not be listened for.
    #[cfg(feature = "http")]
    #[error("cannot listen for the signals that stop serving: {0}")]
    Signals(#[source] std::io::Error),
}

/// Why [`crate::HttpOptions`] may not serve.
#[cfg(feature = "http")]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HttpRefusal {
    /// The bearer token is empty.
    #[error("the bearer token is empty")]
    EmptyToken,
    /// An address other than loopback, without a token.
    #[error(
        "{addr} is not a loopback address: serving there needs a bearer token every client must send"
    )]
    NotLoopback {
        /// The address asked for.
        addr: SocketAddr,
    },
}
