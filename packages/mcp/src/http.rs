//! Running a [`SkillServer`] over MCP's Streamable HTTP transport: the
//! SDK's stateless service (one endpoint, [`MCP_PATH`]; `POST` for every
//! request, answered as JSON, or as an event stream for
//! `subscriptions/listen`) under hyper's HTTP/1.1 server, with the same
//! skill tree re-checks as stdio. In front of the SDK, each request is
//! held to what a client may cost: a loopback address unless the operator
//! gives a bearer token (then every request must carry it), no request
//! from a web page (`Origin`; the SDK also checks `Host` on loopback), at
//! most [`MAX_HTTP_CONNECTIONS`] connections (the next is answered 503), a
//! body of at most [`MAX_HTTP_BODY_BYTES`] scanned once like a stdio line
//! before the SDK parses it, at most [`MAX_HTTP_REQUESTS_IN_FLIGHT`]
//! answers being made or written at once (the next request waits), and at
//! most [`MAX_HTTP_STREAMS`] open subscriptions (the next is answered
//! 503). A plain `skills/list` of the `initialize` era is then answered
//! here, as stdio answers it, without the SDK's per-request service and
//! second check of every entry (`http_listing.rs`); everything else goes
//! to the SDK.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bcode_skill::SkillRegistry;
use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body::{Body, Frame, SizeHint};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::http_listing;
use crate::request_line::{self, Checked};
use crate::serve_error::{HttpRefusal, ServeError};
use crate::server::SkillServer;
use crate::stdio::{follow_trees, warm_in_background};

/// The one endpoint.
pub const MCP_PATH: &str = "/mcp";

/// The most connections held at once; the next is answered
/// `503 Service Unavailable` and closed. Each holds at most one request
/// (HTTP/1.1), its buffers and, while answered, its answer.
pub const MAX_HTTP_CONNECTIONS: usize = 128;

/// The most requests whose answers are being made or written at once,
/// as on stdio ([`crate::MAX_REQUESTS_IN_FLIGHT`], a file of up to 16 MiB
/// each); the next waits for one to finish.
pub const MAX_HTTP_REQUESTS_IN_FLIGHT: usize = 16;

/// The most `subscriptions/listen` streams open at once; the next is
/// answered `503 Service Unavailable`.
pub const MAX_HTTP_STREAMS: usize = 32;

/// The longest request body accepted (`413 Payload Too Large` past it).
/// The largest request this server answers (`initialize`) is a few
/// kilobytes.
pub const MAX_HTTP_BODY_BYTES: usize = 1024 * 1024;

/// How long a client may take to send a request's head.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Where and for whom [`serve_http`] serves.
#[derive(Clone)]
pub struct HttpOptions {
    addr: SocketAddr,
    token: Option<String>,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is a secret: never printed.
        f.debug_struct("HttpOptions")
            .field("addr", &self.addr)
            .field("token", &self.token.as_ref().map(|_| "…"))
            .finish()
    }
}

impl HttpOptions {
    /// Serving on `addr` (port 0: one the system picks).
    pub fn new(addr: SocketAddr) -> HttpOptions {
        HttpOptions { addr, token: None }
    }

    /// Every request must carry `Authorization: Bearer <token>`; needed to
    /// serve on an address other than loopback.
    pub fn with_bearer_token(mut self, token: String) -> HttpOptions {
        self.token = Some(token);
        self
    }

    /// Why these options may not serve: an address other than loopback
    /// without a token, or an empty token.
    pub fn refusal(&self) -> Option<HttpRefusal> {
        match &self.token {
            Some(token) if token.is_empty() => Some(HttpRefusal::EmptyToken),
            None if !self.addr.ip().is_loopback() => {
                Some(HttpRefusal::NotLoopback { addr: self.addr })
            }
            _ => None,
        }
    }
}

/// What [`serve_http`] tells its caller, for the operator, while it serves.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpNotice {
    /// Serving: the address bound (the port the system picked for port 0).
    Listening {
        /// The address bound.
        addr: SocketAddr,
    },
    /// A connection was refused: [`MAX_HTTP_CONNECTIONS`] were open. Told
    /// once a run.
    TooManyConnections,
}

/// Serves `server` over Streamable HTTP on `options`' address until
/// `shutdown` completes; every `interval`, `refresh` (run off the async
/// workers) may return a rebuilt registry, and open subscriptions hear of
/// a change. `notices` hears what the operator should know.
pub async fn serve_http<F, N>(
    server: SkillServer,
    options: HttpOptions,
    refresh: F,
    interval: Duration,
    notices: N,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError>
where
    F: FnMut() -> Option<SkillRegistry> + Send + 'static,
    N: Fn(HttpNotice) + Send + Sync + 'static,
{
    if let Some(why) = options.refusal() {
        return Err(why.into());
    }
    let listener = TcpListener::bind(options.addr)
        .await
        .map_err(|source| ServeError::Listen {
            addr: options.addr,
            source,
        })?;
    let bound = listener.local_addr().map_err(ServeError::BoundAddress)?;
    let gate = Arc::new(Gate::new(&server, &options, bound));
    warm_in_background(&server);
    let watcher = tokio::spawn(follow_trees(server.clone(), refresh, interval));
    notices(HttpNotice::Listening { addr: bound });
    let connections = Arc::new(Semaphore::new(MAX_HTTP_CONNECTIONS));
    let mut told = false;
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // A failed accept (out of descriptors, a reset) costs that
                // connection only.
                Err(_) => continue,
            },
        };
        let permit = Arc::clone(&connections).try_acquire_owned().ok();
        if permit.is_none() && !told {
            told = true;
            notices(HttpNotice::TooManyConnections);
        }
        let gate = Arc::clone(&gate);
        tokio::spawn(async move {
            let io = TokioIo::new(stream);
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT);
            match permit {
                Some(permit) => {
                    let service = hyper::service::service_fn(move |request| {
                        let gate = Arc::clone(&gate);
                        async move { Ok::<_, Infallible>(gate.answer(request).await) }
                    });
                    let _ = http.serve_connection(io, service).await;
                    drop(permit);
                }
                None => {
                    let service = hyper::service::service_fn(|_| async {
                        Ok::<_, Infallible>(plain(
                            StatusCode::SERVICE_UNAVAILABLE,
                            "too many connections; try again later",
                        ))
                    });
                    let _ = http.keep_alive(false).serve_connection(io, service).await;
                }
            }
        });
    }
    // Ends the streams the SDK holds open, and each subscription with its
    // final result.
    gate.service.config.cancellation_token.cancel();
    server.end_subscriptions();
    watcher.abort();
    let saver = server;
    let _ = tokio::task::spawn_blocking(move || saver.save_digests()).await;
    Ok(())
}

/// [`serve_http`] on a runtime of its own (two workers, plus the blocking
/// pool the file reads use) until the process is told to stop (`SIGINT`,
/// `SIGTERM`), for a program that has none.
pub fn run_http<F, N>(
    server: SkillServer,
    options: HttpOptions,
    refresh: F,
    interval: Duration,
    notices: N,
) -> Result<(), ServeError>
where
    F: FnMut() -> Option<SkillRegistry> + Send + 'static,
    N: Fn(HttpNotice) + Send + Sync + 'static,
{
    if let Some(why) = options.refusal() {
        return Err(why.into());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let ended = runtime.block_on(async {
        let stop = stop_signal().map_err(ServeError::Signals)?;
        serve_http(server, options, refresh, interval, notices, stop).await
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    ended
}

/// Completes at the first `SIGINT` or `SIGTERM`.
fn stop_signal() -> std::io::Result<impl Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

/// What stands before the SDK's service: the checks and bounds of the
/// module documentation.
struct Gate {
    service: StreamableHttpService<SkillServer, NeverSessionManager>,
    /// What `skills/list` pages are answered from in front of the SDK
    /// (`http_listing.rs`).
    server: SkillServer,
    token: Option<String>,
    answering: Arc<Semaphore>,
    streams: Arc<Semaphore>,
}

impl Gate {
    fn new(server: &SkillServer, options: &HttpOptions, bound: SocketAddr) -> Gate {
        let config = StreamableHttpServerConfig::default()
            // Stateless: no session is kept between requests, so nothing a
            // client leaves behind is held. A client of 2025-11-25 has its
            // `initialize` answered and sends each request on its own; one
            // of 2026-07-28 needs no session.
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_max_request_body_bytes(MAX_HTTP_BODY_BYTES)
            // No web page may call this server: a request carrying
            // `Origin` is refused.
            .enforce_origin_validation();
        let config = if options.token.is_some() && !bound.ip().is_loopback() {
            // Reached by names the server cannot know; the token guards it.
            config.disable_allowed_hosts()
        } else {
            // Loopback: the SDK's list (`localhost`, `127.0.0.1`, `::1`) and
            // the address bound, which keeps a rebound DNS name out.
            let mut hosts = config.allowed_hosts.clone();
            hosts.push(bound.ip().to_string());
            config.with_allowed_hosts(hosts)
        };
        let served = server.clone();
        Gate {
            service: StreamableHttpService::new(
                move || Ok(served.clone()),
                Arc::new(NeverSessionManager::default()),
                config,
            ),
            server: server.clone(),
            token: options.token.clone(),
            answering: Arc::new(Semaphore::new(MAX_HTTP_REQUESTS_IN_FLIGHT)),
            streams: Arc::new(Semaphore::new(MAX_HTTP_STREAMS)),
        }
    }

    async fn answer(&self, request: Request<hyper::body::Incoming>) -> Response<Reply> {
        if request.uri().path() != MCP_PATH {
            return plain(StatusCode::NOT_FOUND, "not found: the MCP endpoint is /mcp");
        }
        if let Some(token) = &self.token
            && !bearer_matches(request.headers(), token)
        {
            let mut refused = plain(
                StatusCode::UNAUTHORIZED,
                "unauthorized: send the operator's bearer token",
            );
            refused.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            return refused;
        }
        let (parts, body) = request.into_parts();
        if parts.method != http::Method::POST {
            // The SDK answers every other method (405: stateless, no GET
            // stream), after its own checks.
            let request = Request::from_parts(parts, Full::new(Bytes::new()));
            return held(self.service.handle(request).await, None);
        }
        let bytes = match Limited::new(body, MAX_HTTP_BODY_BYTES).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(err) if err.is::<http_body_util::LengthLimitError>() => {
                return plain(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &format!("the request body is longer than {MAX_HTTP_BODY_BYTES} bytes"),
                );
            }
            Err(_) => {
                return plain(
                    StatusCode::BAD_REQUEST,
                    "the request body could not be read",
                );
            }
        };
        let permit = match request_line::check(&bytes) {
            Err(answer) => return json(StatusCode::BAD_REQUEST, answer),
            Ok(Checked::Stream) => match Arc::clone(&self.streams).try_acquire_owned() {
                Ok(permit) => permit,
                Err(_) => {
                    return plain(
                        StatusCode::SERVICE_UNAVAILABLE,
                        &format!("{MAX_HTTP_STREAMS} subscriptions are open; try again later"),
                    );
                }
            },
            Ok(Checked::Plain) => match Arc::clone(&self.answering).acquire_owned().await {
                Ok(permit) => permit,
                Err(_) => return plain(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping"),
            },
        };
        if let Some(listing) =
            http_listing::listing(&parts.headers, &bytes, &self.service.config.allowed_hosts)
            && let Some(page) = http_listing::answer(&self.server, listing).await
        {
            let mut answer = json(StatusCode::OK, page);
            answer.body_mut()._permit = Some(permit);
            return answer;
        }
        let request = Request::from_parts(parts, Full::new(bytes));
        held(self.service.handle(request).await, Some(permit))
    }
}

/// Whether `headers` carry `Authorization: Bearer <token>`, compared in
/// time that does not depend on where they differ.
fn bearer_matches(headers: &http::HeaderMap, token: &str) -> bool {
    let Some(given) = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.as_bytes().strip_prefix(b"Bearer "))
    else {
        return false;
    };
    let expected = token.as_bytes();
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |differ, (a, b)| differ | (a ^ b))
            == 0
}

/// An answer's body, holding its permit until it is written whole (or the
/// connection drops it).
pub(crate) struct Reply {
    body: BoxBody<Bytes, Infallible>,
    _permit: Option<OwnedSemaphorePermit>,
}

impl Body for Reply {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

fn held(
    response: Response<BoxBody<Bytes, Infallible>>,
    permit: Option<OwnedSemaphorePermit>,
) -> Response<Reply> {
    response.map(|body| Reply {
        body,
        _permit: permit,
    })
}

fn plain(status: StatusCode, text: &str) -> Response<Reply> {
    let mut response = Response::new(Reply {
        body: Full::new(Bytes::from(format!("{text}\n"))).boxed(),
        _permit: None,
    });
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn json(status: StatusCode, body: impl Into<Bytes>) -> Response<Reply> {
    let mut response = Response::new(Reply {
        body: Full::new(body.into()).boxed(),
        _permit: None,
    });
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_serves_without_a_token() {
        let at = |addr: &str| {
            HttpOptions::new(addr.parse().unwrap_or(SocketAddr::from(([0, 0, 0, 0], 1))))
        };
        assert_eq!(at("127.0.0.1:0").refusal(), None);
        assert_eq!(at("[::1]:8080").refusal(), None);
        assert_eq!(
            at("0.0.0.0:8080").refusal(),
            Some(HttpRefusal::NotLoopback {
                addr: SocketAddr::from(([0, 0, 0, 0], 8080))
            })
        );
        assert_eq!(
            at("0.0.0.0:8080")
                .with_bearer_token("s3cret".into())
                .refusal(),
            None
        );
        assert_eq!(
            at("127.0.0.1:0").with_bearer_token(String::new()).refusal(),
            Some(HttpRefusal::EmptyToken)
        );
        assert_eq!(
            HttpRefusal::NotLoopback {
                addr: SocketAddr::from(([0, 0, 0, 0], 8080))
            }
            .to_string(),
            "0.0.0.0:8080 is not a loopback address: serving there needs a bearer token every client must send"
        );
    }

    #[test]
    fn the_bearer_token_must_match_exactly() {
        let with = |value: &str| {
            let mut headers = http::HeaderMap::new();
            if let Ok(value) = header::HeaderValue::from_str(value) {
                headers.insert(header::AUTHORIZATION, value);
            }
            headers
        };
        assert!(bearer_matches(&with("Bearer s3cret"), "s3cret"));
        for wrong in [
            "Bearer s3cre",
            "Bearer s3cret2",
            "bearer s3cret",
            "s3cret",
            "Basic s3cret",
            "",
        ] {
            assert!(!bearer_matches(&with(wrong), "s3cret"), "{wrong}");
        }
    }
}
