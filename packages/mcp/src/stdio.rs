//! Running a [`SkillServer`] on standard input and output (newline-
//! delimited JSON-RPC 2.0, lines bounded by the SDK), with the skill tree
//! re-checked between requests.

use std::time::Duration;

use bcode_skill::SkillRegistry;
use rmcp::ServiceExt;
use std::io::Write;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::follow::EntryWatch;
use crate::server::SkillServer;
use crate::service::SkillService;

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ServeError(String);

/// Serves `server` on stdin/stdout until the client closes the connection.
/// Every `interval`, `refresh` (run off the async workers) may return a
/// rebuilt registry; when what is served changed, the client gets
/// `notifications/resources/list_changed`.
pub async fn serve_stdio<F>(
    server: SkillServer,
    mut refresh: F,
    interval: Duration,
) -> Result<(), ServeError>
where
    F: FnMut() -> Option<SkillRegistry> + Send + 'static,
{
    let (transport, pumps) = guarded_stdio()?;
    // Entries are built beside the handshake and the first requests, on a
    // thread of their own that ends when they are (the process may exit
    // first: it holds nothing that needs closing).
    warm_in_background(&server);
    let running = SkillService::new(server.clone())
        .serve(transport)
        .await
        .map_err(|err| ServeError(format!("the client's initialization failed: {err}")))?;
    let peer = running.peer().clone();
    let saver = server.clone();
    let watcher = tokio::spawn(async move {
        let mut entries = EntryWatch::default();
        loop {
            tokio::time::sleep(interval).await;
            let looked = server.clone();
            let (back, watch, registry, edited) = match tokio::task::spawn_blocking(move || {
                let registry = refresh();
                let edited = entries.edited(&looked);
                (refresh, entries, registry, edited)
            })
            .await
            {
                Ok(answer) => answer,
                Err(_) => return,
            };
            (refresh, entries) = (back, watch);
            let changed = match registry {
                Some(registry) => server.replace(&registry),
                None => false,
            };
            if edited {
                server.recheck();
            }
            if changed || edited {
                warm_in_background(&server);
                if peer.notify_resource_list_changed().await.is_err() {
                    return;
                }
            }
        }
    });
    let ended = running.waiting().await;
    watcher.abort();
    pumps.abort();
    let _ = tokio::task::spawn_blocking(move || saver.save_digests()).await;
    ended
        .map(drop)
        .map_err(|err| ServeError(format!("the server stopped: {err}")))
}

/// [`SkillServer::warm`] on a thread of its own; nothing when no thread
/// can be started (requests then build what they need).
fn warm_in_background(server: &SkillServer) {
    let server = server.clone();
    let _ = std::thread::Builder::new()
        .name("bcode-mcp-warm".into())
        .spawn(move || server.warm());
}

/// [`serve_stdio`] on a runtime of its own (one thread, plus the blocking
/// pool the file reads use), for a program that has none.
pub fn run_stdio<F>(server: SkillServer, refresh: F, interval: Duration) -> Result<(), ServeError>
where
    F: FnMut() -> Option<SkillRegistry> + Send + 'static,
{
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| ServeError(format!("cannot start the async runtime: {err}")))?
        .block_on(serve_stdio(server, refresh, interval))
}

/// The longest request line accepted; a longer one is dropped as it
/// arrives (never held whole) and answered with an error.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// The tasks between the process's stdin/stdout and the SDK.
struct Pumps(Vec<JoinHandle<()>>);

impl Pumps {
    fn abort(&self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// The SDK's transport, fed through a guard: each stdin line that is not
/// JSON (bad UTF-8 included) or is longer than [`MAX_REQUEST_BYTES`] is
/// answered with a JSON-RPC error (`-32700`, `-32600`) here, where the SDK
/// would drop it without a word; every other line goes to the SDK. Both
/// answer streams reach stdout through one writer, whole lines at a time.
fn guarded_stdio() -> Result<((DuplexStream, DuplexStream), Pumps), ServeError> {
    let (lines, mut outgoing) = mpsc::channel::<Vec<u8>>(64);
    // Stdout is written from a thread of its own, blocking: tokio's stdout
    // hands every write to its blocking pool, a hop per answer. The thread
    // ends when both answer streams have ended (or stdout is closed).
    std::thread::Builder::new()
        .name("bcode-mcp-stdout".into())
        .spawn(move || {
            let mut stdout = std::io::stdout().lock();
            while let Some(line) = outgoing.blocking_recv() {
                if stdout.write_all(&line).is_err() || stdout.flush().is_err() {
                    return;
                }
            }
        })
        .map_err(|err| {
            ServeError(format!(
                "cannot start the thread that writes answers: {err}"
            ))
        })?;
    let (sdk_in, mut to_sdk) = tokio::io::duplex(64 * 1024);
    // Room for a whole `skills/list` page (60 KB at 100 skills), so the SDK
    // writes an answer without waiting for it to be read.
    let (from_sdk, sdk_out) = tokio::io::duplex(1024 * 1024);
    let errors = lines.clone();
    let reader = tokio::spawn(async move {
        guard_lines(tokio::io::stdin(), &mut to_sdk, &errors).await;
        // Closing the SDK's input ends the session.
        let _ = to_sdk.shutdown().await;
    });
    let answers = tokio::spawn(async move {
        let mut from_sdk = BufReader::new(from_sdk);
        loop {
            let mut line = Vec::new();
            match from_sdk.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    if lines.send(line).await.is_err() {
                        return;
                    }
                }
            }
        }
    });
    Ok(((sdk_in, sdk_out), Pumps(vec![reader, answers])))
}

/// Copies the JSON lines of `input` to `sdk`, answering the others on
/// `errors`, until `input` ends or the SDK stops reading.
async fn guard_lines(
    input: impl AsyncRead + Unpin,
    sdk: &mut (impl AsyncWrite + Unpin),
    errors: &mpsc::Sender<Vec<u8>>,
) {
    let mut input = BufReader::new(input);
    loop {
        let line = match read_line(&mut input, MAX_REQUEST_BYTES).await {
            Line::End => return,
            Line::TooLong => {
                let _ = errors
                    .send(error_line(
                        -32600,
                        &format!("the request is longer than {MAX_REQUEST_BYTES} bytes"),
                    ))
                    .await;
                continue;
            }
            Line::Text(line) => line,
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<serde_json::Value>(&line) {
            Ok(request) if lacks_skill_uri(&request) => {
                let message = "skills/get needs params.uri, the skill's SKILL.md URI";
                let _ = errors
                    .send(answer_line(request.get("id"), -32602, message))
                    .await;
            }
            Ok(_) => {
                let mut line = line;
                line.push(b'\n');
                if sdk.write_all(&line).await.is_err() {
                    return;
                }
            }
            Err(err) => {
                let _ = errors
                    .send(error_line(-32700, &format!("parse error: {err}")))
                    .await;
            }
        }
    }
}

/// One line of input, without its end.
enum Line {
    Text(Vec<u8>),
    /// Longer than allowed; its bytes were dropped up to the line's end.
    TooLong,
    End,
}

async fn read_line(input: &mut (impl tokio::io::AsyncBufRead + Unpin), max: usize) -> Line {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buffer = match input.fill_buf().await {
            Ok(buffer) => buffer,
            Err(_) => return Line::End,
        };
        if buffer.is_empty() {
            return match (too_long, line.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::End,
                (false, false) => Line::Text(line),
            };
        }
        let (chunk, ended) = match buffer.iter().position(|b| *b == b'\n') {
            Some(at) => (&buffer[..at], Some(at + 1)),
            None => (buffer, None),
        };
        if !too_long && line.len() + chunk.len() <= max {
            line.extend_from_slice(chunk);
        } else {
            too_long = true;
            line = Vec::new();
        }
        let used = ended.unwrap_or(buffer.len());
        input.consume(used);
        if ended.is_some() {
            return if too_long {
                Line::TooLong
            } else {
                Line::Text(line)
            };
        }
    }
}

/// Whether `request` is a `skills/get` without a string `uri`: the SDK
/// would not recognise it as `skills/get` at all and answer "method not
/// found", where JSON-RPC says invalid params.
fn lacks_skill_uri(request: &serde_json::Value) -> bool {
    request.get("method").and_then(serde_json::Value::as_str) == Some("skills/get")
        && request.get("id").is_some()
        && !request
            .get("params")
            .and_then(|params| params.get("uri"))
            .is_some_and(serde_json::Value::is_string)
}

/// A JSON-RPC error answer with no id (the request's could not be read).
fn error_line(code: i64, message: &str) -> Vec<u8> {
    answer_line(None, code, message)
}

/// A JSON-RPC error answer to the request with `id`.
fn answer_line(id: Option<&serde_json::Value>, code: i64, message: &str) -> Vec<u8> {
    let mut line = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id.cloned().unwrap_or(serde_json::Value::Null),
        "error": {"code": code, "message": message},
    })
    .to_string()
    .into_bytes();
    line.push(b'\n');
    line
}
