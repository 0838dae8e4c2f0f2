//! The consumer's Streamable HTTP transport: the SDK's streamable-HTTP
//! client worker (sessions, both protocol eras, request ordering) over a
//! small [`StreamableHttpClient`] of our own on hyper's HTTP/1.1 client
//! connection, under TLS for an `https` URL (`client_tls.rs`: the
//! certificate always verified). A connection whose answer was read to its
//! end is kept for the next request (at most [`MAX_IDLE`] are kept), so a
//! listing of many pages pays for one connection and one TLS handshake; a
//! kept connection the server closed meanwhile is given up for a new one,
//! and the request is sent again only when it had not been sent.
//!
//! Our own client rather than the SDK's reqwest one: hyper is in the tree
//! already for `mcp --http`, so this adds its client half and no crate, and
//! it keeps the raw text of each skills answer for the consumer
//! ([`RawResults`]), as the stdio tap does. Every body is bounded before it
//! is read: an answer at [`MAX_ANSWER_BYTES`], an error's text at
//! [`MAX_ERROR_BYTES`]. There is no standalone `GET` stream (the consumer
//! needs no notification it does not ask for: a listing's `ttlMs` says when
//! to ask again), so the SDK is told the server offers none.
//!
//! The entry's headers go with every request. Their values (a token taken
//! from the environment) are never written into an error: a failed request
//! is said by its status, never by what was sent.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorData, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use rustls::pki_types::ServerName;
use sse_stream::{Sse, SseStream};

use crate::client_tap::{MAX_LINE, RawResults};

/// The longest answer body read: one message at the SDK's stdio bound
/// (16 MiB, the size SEP-2640 asks a host to accept for one skill's
/// files), with room for an event stream's framing.
pub(crate) const MAX_ANSWER_BYTES: usize = MAX_LINE + 1024 * 1024;

/// The most of an error answer's body read, for its message.
const MAX_ERROR_BYTES: usize = 4096;

/// The most of an error answer's body put into a diagnostic.
const MAX_ERROR_SHOWN: usize = 200;

/// Connections kept idle for later requests, at most.
const MAX_IDLE: usize = 4;

/// Where an entry's `url` points: checked once, before any request.
#[derive(Clone, Debug)]
pub(crate) struct Endpoint {
    /// `host:port`, to connect to.
    authority: String,
    /// The `Host` header.
    host: HeaderValue,
    /// The request target (`/mcp`).
    target: Arc<str>,
    /// For an `https` URL, the name its server's certificate must carry.
    tls: Option<ServerName<'static>>,
}

/// Why an entry's `url` or `headers` cannot be used: the message names the
/// header and the variable, never a value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EntryError {
    #[error("its `url` is not a valid URL")]
    NotAUrl,
    #[error("its `url` is not an `http://` or `https://` URL")]
    NotHttp,
    #[error("its `url` names no host")]
    NoHost,
    #[error("its `url` carries credentials (`user@host`); put them in `headers`")]
    Credentials,
    #[error("its `url` names no valid host")]
    BadHost,
    #[error("its `url` names a host no certificate can be checked for")]
    NoCertificateName,
    #[error("`{name}` in its `headers` is not a valid header name")]
    HeaderName { name: String },
    #[error("`{name}` in its `headers` is set by the transport itself")]
    Reserved { name: String },
    #[error("the value of header `{name}` {fault}")]
    Placeholder {
        name: String,
        fault: PlaceholderFault,
    },
    #[error("the value of header `{name}` holds a character a header cannot carry")]
    BadCharacter { name: String },
}

/// What is wrong with a header's `${env:NAME}`; the message follows the
/// header's name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PlaceholderFault {
    #[error("has a `${{` without its `}}`")]
    Unclosed,
    #[error("has a `${{...}}` that is not `${{env:NAME}}` (NAME: letters, digits, `_`)")]
    NotEnv,
    #[error("takes `${{env:{name}}}`, and the environment variable {name} is not set or empty")]
    Unset { name: String },
}

impl Endpoint {
    /// The endpoint of `url`, or why it cannot be reached: an `http` or
    /// `https` URL naming a host and no credentials.
    pub(crate) fn parse(url: &str) -> Result<Endpoint, EntryError> {
        let uri: http::Uri = url.parse().map_err(|_| EntryError::NotAUrl)?;
        let secure = match uri.scheme_str() {
            Some("http") => false,
            Some("https") => true,
            _ => return Err(EntryError::NotHttp),
        };
        let authority = uri.authority().ok_or(EntryError::NoHost)?;
        if authority.as_str().contains('@') {
            return Err(EntryError::Credentials);
        }
        let host = HeaderValue::from_str(authority.as_str()).map_err(|_| EntryError::BadHost)?;
        let port = authority
            .port_u16()
            .unwrap_or(if secure { 443 } else { 80 });
        let tls = if secure {
            // An IPv6 host is written in brackets; its certificate names
            // the address without them.
            let name = authority
                .host()
                .trim_start_matches('[')
                .trim_end_matches(']');
            let name =
                ServerName::try_from(name.to_owned()).map_err(|_| EntryError::NoCertificateName)?;
            Some(name)
        } else {
            None
        };
        let target = uri
            .path_and_query()
            .map_or("/", |path| path.as_str())
            .to_owned();
        Ok(Endpoint {
            authority: format!("{}:{port}", authority.host()),
            host,
            target: target.into(),
            tls,
        })
    }

    /// Whether its URL is `https`.
    pub(crate) fn is_tls(&self) -> bool {
        self.tls.is_some()
    }
}

/// The entry's headers, their `${env:NAME}` taken from `env`, checked as
/// HTTP headers. An unset or empty variable, a malformed placeholder or a
/// header the transport sets itself fails the entry; the message names the
/// header and the variable, never a value.
pub(crate) fn resolve_headers(
    written: &BTreeMap<String, String>,
    env: &BTreeMap<String, String>,
) -> Result<HashMap<HeaderName, HeaderValue>, EntryError> {
    let mut headers = HashMap::new();
    for (name, template) in written {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| EntryError::HeaderName { name: name.clone() })?;
        if RESERVED.contains(&header.as_str()) {
            return Err(EntryError::Reserved { name: name.clone() });
        }
        let value = substitute(template, env).map_err(|fault| EntryError::Placeholder {
            name: name.clone(),
            fault,
        })?;
        let mut value = HeaderValue::from_str(&value)
            .map_err(|_| EntryError::BadCharacter { name: name.clone() })?;
        value.set_sensitive(true);
        headers.insert(header, value);
    }
    Ok(headers)
}

/// What no message may show of an entry's `headers`: each value as sent
/// and each environment value it takes, longest first (so a whole header
/// goes before the token inside it). Values shorter than 4 bytes are left
/// alone: striking every `a` would garble a message and protect nothing.
pub(crate) fn secrets(
    written: &BTreeMap<String, String>,
    env: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut secrets = Vec::new();
    for template in written.values() {
        if let Ok(value) = substitute(template, env) {
            secrets.push(value);
        }
        let mut rest = template.as_str();
        while let Some(at) = rest.find("${env:") {
            let after = &rest[at + 6..];
            let Some(end) = after.find('}') else { break };
            if let Some(value) = env.get(&after[..end]) {
                secrets.push(value.clone());
            }
            rest = &after[end + 1..];
        }
    }
    secrets.retain(|secret| secret.len() >= 4);
    secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    secrets.dedup();
    secrets
}

/// `message` with every one of `secrets` struck out.
pub(crate) fn redact(message: String, secrets: &[String]) -> String {
    let mut message = message;
    for secret in secrets {
        if message.contains(secret.as_str()) {
            message = message.replace(secret.as_str(), "[header value]");
        }
    }
    message
}

/// Headers the transport writes: an entry may not set them.
const RESERVED: &[&str] = &[
    "accept",
    "content-type",
    "content-length",
    "host",
    "transfer-encoding",
    "connection",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
];

/// `template` with each `${env:NAME}` replaced by the variable's value.
fn substitute(template: &str, env: &BTreeMap<String, String>) -> Result<String, PlaceholderFault> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after.find('}').ok_or(PlaceholderFault::Unclosed)?;
        let inner = &after[..end];
        let name = inner
            .strip_prefix("env:")
            .filter(|name| {
                !name.is_empty()
                    && !name.starts_with(|c: char| c.is_ascii_digit())
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
            .ok_or(PlaceholderFault::NotEnv)?;
        match env.get(name).filter(|value| !value.is_empty()) {
            Some(value) => out.push_str(value),
            None => {
                return Err(PlaceholderFault::Unset {
                    name: name.to_owned(),
                });
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Why a request failed below HTTP: the connection, or a body past its
/// bound.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HttpError {
    #[error("cannot connect to {0}: {1}")]
    Connect(String, std::io::Error),
    #[error("TLS with {0} failed: {1}")]
    Tls(String, String),
    #[error("HTTP: {0}")]
    Hyper(#[from] hyper::Error),
    #[error("the request could not be built")]
    Request,
    #[error("the answer is longer than {0} bytes")]
    TooLong(usize),
}

/// The client the SDK's worker sends through.
#[derive(Clone, Debug)]
pub(crate) struct HttpClient {
    endpoint: Endpoint,
    /// For an `https` endpoint, the TLS configuration (one for every
    /// request, so later connections resume the session).
    tls: Option<Arc<rustls::ClientConfig>>,
    raw: RawResults,
    /// Connections whose last answer was read to its end, for the next
    /// requests (shared by the clones the SDK's worker makes).
    idle: Arc<Mutex<Vec<Sender>>>,
}

/// The sending half of one HTTP/1.1 connection.
type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

impl HttpClient {
    /// A client of `endpoint`; for an `https` one, over TLS with `tls`.
    pub(crate) fn new(
        endpoint: Endpoint,
        tls: Option<Arc<rustls::ClientConfig>>,
        raw: RawResults,
    ) -> HttpClient {
        HttpClient {
            tls: endpoint.tls.as_ref().and(tls),
            endpoint,
            raw,
            idle: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Sends `request` on a kept connection that is still open, else on a
    /// new one. Returns the answer and its connection's sender, for
    /// [`HttpClient::keep`] once the answer has been read to its end.
    async fn send(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<(http::Response<hyper::body::Incoming>, Sender), HttpError> {
        let mut request = request;
        if let Some(mut sender) = self.take_ready().await {
            let again = copy_of(&request);
            match sender.try_send_request(request).await {
                Ok(response) => return Ok((response, sender)),
                // Not sent (the connection closed first), or sent on one
                // the server closed while it was kept, and no answer came:
                // the consumer's requests only ask, so it goes again, once,
                // on a new connection.
                Err(mut failed) => request = failed.take_message().unwrap_or(again),
            }
        }
        let mut sender = self.connect().await?;
        let response = sender.send_request(request).await?;
        Ok((response, sender))
    }

    /// A kept connection ready for a request, if one is still open: ready
    /// once it has settled its last answer; an error says the server
    /// closed it.
    async fn take_ready(&self) -> Option<Sender> {
        loop {
            let mut sender = {
                let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
                idle.pop()?
            };
            if !sender.is_closed() && sender.ready().await.is_ok() {
                return Some(sender);
            }
        }
    }

    /// Keeps `sender` for a later request; its answer has been read to
    /// its end.
    fn keep(&self, sender: Sender) {
        if sender.is_closed() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < MAX_IDLE {
            idle.push(sender);
        }
    }

    /// A new connection to the endpoint, under TLS for `https`.
    async fn connect(&self) -> Result<Sender, HttpError> {
        let authority = &self.endpoint.authority;
        let stream = tokio::net::TcpStream::connect(authority.as_str())
            .await
            .map_err(|err| HttpError::Connect(authority.clone(), err))?;
        let _ = stream.set_nodelay(true);
        match (&self.tls, &self.endpoint.tls) {
            (Some(config), Some(name)) => {
                let stream = tokio_rustls::TlsConnector::from(config.clone())
                    .connect(name.clone(), stream)
                    .await
                    .map_err(|err| {
                        HttpError::Tls(authority.clone(), crate::client_tls::handshake_reason(&err))
                    })?;
                open(stream).await
            }
            // `new` gives every `https` endpoint a connector: a plain
            // connection is only ever made to an `http` URL.
            (None, None) => open(stream).await,
            _ => Err(HttpError::Request),
        }
    }

    /// A request to the endpoint with the headers every request carries.
    fn request(
        &self,
        method: Method,
        session: Option<&str>,
        auth: Option<String>,
        custom: HashMap<HeaderName, HeaderValue>,
    ) -> http::request::Builder {
        let mut builder = Request::builder()
            .method(method)
            .uri(self.endpoint.target.as_ref())
            .header(http::header::HOST, self.endpoint.host.clone())
            .header(http::header::ACCEPT, "application/json, text/event-stream");
        if let Some(auth) = auth {
            builder = builder.header(http::header::AUTHORIZATION, format!("Bearer {auth}"));
        }
        for (name, value) in custom {
            builder = builder.header(name, value);
        }
        if let Some(session) = session {
            builder = builder.header("mcp-session-id", session);
        }
        builder
    }
}

/// A request with the same method, target, headers and body as `request`.
fn copy_of(request: &Request<Full<Bytes>>) -> Request<Full<Bytes>> {
    let mut copy = Request::new(request.body().clone());
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.version_mut() = request.version();
    *copy.headers_mut() = request.headers().clone();
    copy
}

/// An HTTP/1.1 connection over `io`, driven by a task of its own: it ends
/// when its sender is dropped and its last answer read or dropped.
async fn open<T>(io: T) -> Result<Sender, HttpError>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io)).await?;
    tokio::spawn(connection);
    Ok(sender)
}

/// The body of `response`, read up to `limit` bytes: past it, an error.
async fn read_body(
    response: http::Response<hyper::body::Incoming>,
    limit: usize,
) -> Result<Bytes, HttpError> {
    let too_long = response
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok())
        .is_some_and(|length| length > limit as u64);
    if too_long {
        return Err(HttpError::TooLong(limit));
    }
    Limited::new(response.into_body(), limit)
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .map_err(|err| match err.downcast::<hyper::Error>() {
            Ok(err) => HttpError::Hyper(*err),
            Err(_) => HttpError::TooLong(limit),
        })
}

/// At most the first `limit` bytes of the body of `response`, for a message.
async fn read_prefix(response: http::Response<hyper::body::Incoming>, limit: usize) -> Vec<u8> {
    let mut body = response.into_body();
    let mut prefix = Vec::new();
    while prefix.len() < limit {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    let take = data.len().min(limit - prefix.len());
                    prefix.extend_from_slice(&data[..take]);
                }
            }
            _ => break,
        }
    }
    prefix
}

/// Whether a `Content-Type` value is `expected`, parameters aside.
fn media_type_is(value: Option<&HeaderValue>, expected: &str) -> bool {
    value
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case(expected))
}

/// A short, printable excerpt of an error body.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut shown: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_ERROR_SHOWN)
        .collect();
    if text.chars().count() > MAX_ERROR_SHOWN {
        shown.push('…');
    }
    shown.trim().to_owned()
}

fn client_error(err: HttpError) -> StreamableHttpError<HttpError> {
    StreamableHttpError::Client(err)
}

impl StreamableHttpClient for HttpClient {
    type Error = HttpError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<HttpError>> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        _uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        _limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<HttpError>> {
        let body = serde_json::to_vec(&message)?;
        let request = self
            .request(
                Method::POST,
                session_id.as_deref(),
                auth_header,
                custom_headers,
            )
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|_| client_error(HttpError::Request))?;
        let (response, sender) = self.send(request).await.map_err(client_error)?;
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            // Read to its end (it is empty, or nearly), so the connection
            // can carry the next request.
            if read_body(response, MAX_ERROR_BYTES).await.is_ok() {
                self.keep(sender);
            }
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        let content_type = response.headers().get(http::header::CONTENT_TYPE).cloned();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let awaits_nothing = !matches!(message, ClientJsonRpcMessage::Request(_));
        if !status.is_success() {
            return self
                .refused(&message, session_id.is_some(), status, response)
                .await;
        }
        if media_type_is(content_type.as_ref(), "text/event-stream") {
            let raw = self.raw.clone();
            let body =
                Limited::new(response.into_body(), MAX_ANSWER_BYTES).map_err(std::io::Error::other);
            let events = SseStream::new(body)
                .map(move |event: Result<Sse, SseError>| {
                    let mut event = event?;
                    // A skills answer is kept for the consumer, and the SDK
                    // is given it with an empty result (see `client_tap`).
                    if let Some(stub) = event
                        .data
                        .as_ref()
                        .and_then(|data| raw.observe_message(data.as_bytes()))
                    {
                        event.data = Some(stub);
                    }
                    Ok(event)
                })
                .boxed();
            return Ok(StreamableHttpPostResponse::Sse(events, session));
        }
        if media_type_is(content_type.as_ref(), "application/json") {
            let body = read_body(response, MAX_ANSWER_BYTES)
                .await
                .map_err(client_error)?;
            self.keep(sender);
            // A skills answer is kept for the consumer, and the SDK is
            // given it with an empty result (see `client_tap`).
            let parsed = match self.raw.observe_message(&body) {
                Some(stub) => serde_json::from_str::<ServerJsonRpcMessage>(&stub),
                None => serde_json::from_slice::<ServerJsonRpcMessage>(&body),
            };
            return match parsed {
                Ok(parsed) => Ok(StreamableHttpPostResponse::Json(parsed, session)),
                Err(_) if awaits_nothing => Ok(StreamableHttpPostResponse::Accepted),
                Err(err) => Err(StreamableHttpError::UnexpectedServerResponse(
                    format!("its answer is not a JSON-RPC message: {err}").into(),
                )),
            };
        }
        if awaits_nothing {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        Err(StreamableHttpError::UnexpectedContentType(
            content_type.and_then(|value| value.to_str().ok().map(str::to_owned)),
        ))
    }

    async fn delete_session(
        &self,
        _uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<HttpError>> {
        let request = self
            .request(
                Method::DELETE,
                Some(&session_id),
                auth_header,
                custom_headers,
            )
            .body(Full::new(Bytes::new()))
            .map_err(|_| client_error(HttpError::Request))?;
        // Ending a session is a courtesy; a server that refuses it keeps
        // nothing of ours.
        let _answer = self.send(request).await.map_err(client_error)?;
        Ok(())
    }

    async fn get_stream(
        &self,
        _uri: Arc<str>,
        _session_id: Option<Arc<str>>,
        _last_event_id: Option<String>,
        _auth_header: Option<String>,
        _custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<HttpError>> {
        Err(StreamableHttpError::ServerDoesNotSupportSse)
    }
}

impl HttpClient {
    /// The answer to a request the server refused with `status`: a
    /// JSON-RPC error it sent, else an error naming the status. A
    /// `server/discover` refused outside a session with a client error
    /// other than 401 or 403 is a server of the 2025-11-25 era, as the
    /// SDK's own clients read it: it becomes the JSON-RPC error the SDK's
    /// fallback to `initialize` expects.
    async fn refused(
        &self,
        message: &ClientJsonRpcMessage,
        in_session: bool,
        status: StatusCode,
        response: http::Response<hyper::body::Incoming>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<HttpError>> {
        let is_json = media_type_is(
            response.headers().get(http::header::CONTENT_TYPE),
            "application/json",
        );
        let auth = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
        let body = read_prefix(response, MAX_ERROR_BYTES).await;
        let parsed = is_json
            .then(|| serde_json::from_slice::<ServerJsonRpcMessage>(&body).ok())
            .flatten();
        if let ClientJsonRpcMessage::Request(request) = message
            && matches!(request.request, ClientRequest::DiscoverRequest(_))
            && !in_session
            && status.is_client_error()
            && !auth
        {
            let error = match parsed {
                Some(ServerJsonRpcMessage::Error(error)) => error.error,
                _ => ErrorData::method_not_found::<rmcp::model::DiscoverRequestMethod>(),
            };
            return Ok(StreamableHttpPostResponse::Json(
                ServerJsonRpcMessage::error(error, Some(request.id.clone())),
                None,
            ));
        }
        if let Some(error @ ServerJsonRpcMessage::Error(_)) = parsed {
            return Ok(StreamableHttpPostResponse::Json(error, None));
        }
        let reason = status.canonical_reason().unwrap_or("");
        let what = if auth {
            format!(
                "HTTP {} {reason}: the server refused the request's credentials (check the entry's `headers`)",
                status.as_u16()
            )
        } else {
            format!("HTTP {} {reason}: {}", status.as_u16(), excerpt(&body))
        };
        Err(StreamableHttpError::UnexpectedServerResponse(what.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use bcode_test_support::env_map as env;

    #[test]
    fn placeholders_take_the_environment_and_name_only_the_variable() {
        let vars = env(&[("HF_TOKEN", "s3cret"), ("EMPTY", "")]);
        assert_eq!(
            substitute("Bearer ${env:HF_TOKEN}", &vars).map_err(|fault| fault.to_string()),
            Ok("Bearer s3cret".to_owned())
        );
        assert_eq!(
            substitute("plain", &vars).map_err(|fault| fault.to_string()),
            Ok("plain".to_owned())
        );
        assert_eq!(
            substitute("${env:HF_TOKEN}-${env:HF_TOKEN}", &vars).map_err(|fault| fault.to_string()),
            Ok("s3cret-s3cret".to_owned())
        );
        assert_eq!(
            substitute("Bearer ${env:MISSING}", &vars).map_err(|fault| fault.to_string()),
            Err(
                "takes `${env:MISSING}`, and the environment variable MISSING is not set or empty"
                    .to_owned()
            )
        );
        assert_eq!(
            substitute("${env:EMPTY}", &vars).map_err(|fault| fault.to_string()),
            Err(
                "takes `${env:EMPTY}`, and the environment variable EMPTY is not set or empty"
                    .to_owned()
            )
        );
        assert_eq!(
            substitute("${HF_TOKEN}", &vars).map_err(|fault| fault.to_string()),
            Err("has a `${...}` that is not `${env:NAME}` (NAME: letters, digits, `_`)".to_owned())
        );
        assert_eq!(
            substitute("${env:HF_TOKEN", &vars).map_err(|fault| fault.to_string()),
            Err("has a `${` without its `}`".to_owned())
        );
    }

    #[test]
    fn headers_are_checked_and_never_shown() {
        let vars = env(&[("T", "line\nbreak")]);
        let written =
            |name: &str, value: &str| BTreeMap::from([(name.to_owned(), value.to_owned())]);
        assert_eq!(
            resolve_headers(&written("Authorization", "Bearer ${env:T}"), &vars)
                .unwrap_err()
                .to_string(),
            "the value of header `Authorization` holds a character a header cannot carry"
        );
        assert_eq!(
            resolve_headers(&written("Mcp-Session-Id", "x"), &vars)
                .unwrap_err()
                .to_string(),
            "`Mcp-Session-Id` in its `headers` is set by the transport itself"
        );
        assert_eq!(
            resolve_headers(&written("bad name", "x"), &vars)
                .unwrap_err()
                .to_string(),
            "`bad name` in its `headers` is not a valid header name"
        );
        let ok = resolve_headers(&written("X-Key", "k"), &vars).unwrap();
        let value = ok.get(&HeaderName::from_static("x-key")).unwrap();
        assert!(value.is_sensitive());
        assert_eq!(format!("{value:?}"), "Sensitive");
    }

    #[test]
    fn header_values_are_struck_from_messages() {
        let vars = env(&[("HF_TOKEN", "s3cret"), ("SHORT", "ab")]);
        let written = BTreeMap::from([
            (
                "Authorization".to_owned(),
                "Bearer ${env:HF_TOKEN}".to_owned(),
            ),
            ("X-Short".to_owned(), "${env:SHORT}".to_owned()),
        ]);
        let secrets = secrets(&written, &vars);
        assert_eq!(secrets, ["Bearer s3cret", "s3cret"]);
        assert_eq!(
            redact(
                "HTTP 400: you sent Bearer s3cret, token s3cret, ab".to_owned(),
                &secrets
            ),
            "HTTP 400: you sent [header value], token [header value], ab"
        );
    }

    #[test]
    fn http_and_https_urls_are_reached() {
        let endpoint = Endpoint::parse("http://127.0.0.1:8080/mcp?x=1").unwrap();
        assert_eq!(
            (
                endpoint.authority.as_str(),
                endpoint.host.to_str().unwrap(),
                endpoint.target.as_ref(),
                endpoint.tls
            ),
            ("127.0.0.1:8080", "127.0.0.1:8080", "/mcp?x=1", None)
        );
        let endpoint = Endpoint::parse("http://example.org").unwrap();
        assert_eq!(
            (endpoint.authority.as_str(), endpoint.target.as_ref()),
            ("example.org:80", "/")
        );
        let endpoint = Endpoint::parse("https://huggingface.co/mcp").unwrap();
        assert_eq!(
            (
                endpoint.authority.as_str(),
                endpoint.host.to_str().unwrap(),
                endpoint.target.as_ref(),
                endpoint.tls
            ),
            (
                "huggingface.co:443",
                "huggingface.co",
                "/mcp",
                Some(ServerName::try_from("huggingface.co").unwrap())
            )
        );
        let endpoint = Endpoint::parse("https://[::1]:8443/mcp").unwrap();
        assert_eq!(
            (endpoint.authority.as_str(), endpoint.tls),
            (
                "[::1]:8443",
                Some(ServerName::try_from("::1").unwrap().to_owned())
            )
        );
        assert_eq!(
            Endpoint::parse("ftp://example.org/mcp")
                .unwrap_err()
                .to_string(),
            "its `url` is not an `http://` or `https://` URL"
        );
        assert_eq!(
            Endpoint::parse("http://user:pw@host/mcp")
                .unwrap_err()
                .to_string(),
            "its `url` carries credentials (`user@host`); put them in `headers`"
        );
    }
}
