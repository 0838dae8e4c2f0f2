//! Running a [`SkillServer`] on standard input and output (newline-
//! delimited JSON-RPC 2.0, lines bounded), with the skill tree re-checked
//! between requests. The SDK's service runs on a transport of this
//! module's: a task reads stdin and takes each line once
//! (`request_line.rs`), and a thread of its own writes every answer to
//! stdout, whole lines at a time. Between them, the answers not yet written
//! and the requests not yet answered decide whether the next line is read:
//! with [`MAX_REQUESTS_IN_FLIGHT`] requests unanswered, or
//! [`MAX_UNREAD_ANSWER_BYTES`] of answers unwritten, stdin waits, so a
//! client that sends without reading holds the server to that much, never
//! to every answer it asked for. When stdin ends, every request read is
//! answered and every answer written before the server stops.

use std::collections::{HashSet, VecDeque};
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bcode_skill::SkillRegistry;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use rmcp::{RoleServer, ServiceExt};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::{Notify, mpsc};

use crate::follow::EntryWatch;
use crate::request_line::{self, Taken};
use crate::serve_error::ServeError;
use crate::server::SkillServer;
use crate::service::SkillService;

/// The longest request line accepted; a longer one is dropped as it
/// arrives (never held whole) and answered with an error.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// How many requests may wait for their answers before no more are read:
/// each holds its answer (a file of up to 16 MiB) until it is queued.
pub const MAX_REQUESTS_IN_FLIGHT: usize = 8;

/// How many bytes of answers may wait for the client to read them before
/// no more requests are read. What the server holds for a client that does
/// not read is this, plus the answers of the requests in flight.
pub const MAX_UNREAD_ANSWER_BYTES: usize = 16 * 1024 * 1024;

/// What [`serve_stdio`] tells its caller, for the operator, while it serves.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StdioNotice {
    /// The client has left `bytes` of answers unread, at least
    /// [`MAX_UNREAD_ANSWER_BYTES`]: no request is read until it reads them.
    /// Told once a session.
    AnswersUnread {
        /// The bytes waiting when it was told.
        bytes: usize,
    },
}

/// Serves `server` on stdin/stdout until the client closes the connection.
/// Every `interval`, `refresh` (run off the async workers) may return a
/// rebuilt registry; when what is served changed, the client gets
/// `notifications/resources/list_changed`. `notices` hears what the
/// operator should know.
pub async fn serve_stdio<F, N>(
    server: SkillServer,
    refresh: F,
    interval: Duration,
    notices: N,
) -> Result<(), ServeError>
where
    F: FnMut() -> Option<SkillRegistry> + Send + 'static,
    N: Fn(StdioNotice) + Send + Sync + 'static,
{
    let outbox = Arc::new(Outbox::default());
    let writer = {
        let outbox = Arc::clone(&outbox);
        // Blocking writes on a thread of their own: tokio's stdout hands
        // every write to its blocking pool, a hop per answer.
        std::thread::Builder::new()
            .name("bcode-mcp-stdout".into())
            .spawn(move || write_answers(&outbox, &mut std::io::stdout().lock()))
            .map_err(ServeError::WriterThread)?
    };
    let (to_sdk, requests) = mpsc::channel(1);
    let reader = {
        let outbox = Arc::clone(&outbox);
        let server = server.clone();
        tokio::spawn(async move {
            read_requests(tokio::io::stdin(), &outbox, to_sdk, &notices, &|| {
                server.end_subscriptions();
            })
            .await;
        })
    };
    let transport = StdioTransport {
        requests,
        outbox: Arc::clone(&outbox),
    };
    // Entries are built beside the handshake and the first requests, on a
    // thread of their own that ends when they are (the process may exit
    // first: it holds nothing that needs closing).
    warm_in_background(&server);
    let running = match SkillService::new(server.clone()).serve(transport).await {
        Ok(running) => running,
        Err(err) => {
            reader.abort();
            finish(&outbox, writer).await;
            return Err(ServeError::Initialize(Box::new(err)));
        }
    };
    let watcher = tokio::spawn(follow_trees(server.clone(), refresh, interval));
    // A client of 2026-07-28 asks for notices with `subscriptions/listen`
    // and gets them there alone; one that opened with `initialize` is told
    // directly, as always.
    let peer = running.peer().clone();
    let mut changes = server.follow_changes();
    let teller = tokio::spawn(async move {
        while changes.changed().await.is_ok() {
            if changes.borrow().ending() {
                return;
            }
            if peer.peer_info().is_some() && peer.notify_resource_list_changed().await.is_err() {
                return;
            }
        }
    });
    let saver = server;
    // The service ends once the reader has seen the end of stdin and every
    // request it read is answered (or stdout is gone).
    let ended = running.waiting().await;
    watcher.abort();
    teller.abort();
    reader.abort();
    let _ = tokio::task::spawn_blocking(move || saver.save_digests()).await;
    finish(&outbox, writer).await;
    ended.map(drop).map_err(ServeError::Stopped)
}

/// Every `interval`, runs `refresh` (off the async workers), which may
/// return a rebuilt registry, and checks the served entries' folders; when
/// what is served changed, swaps it in and announces it
/// ([`SkillServer::announce`]). Runs until aborted.
pub(crate) async fn follow_trees<F>(server: SkillServer, mut refresh: F, interval: Duration)
where
    F: FnMut() -> Option<SkillRegistry> + Send + 'static,
{
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
            server.announce();
        }
    }
}

/// [`SkillServer::warm`] on a thread of its own; nothing when no thread
/// can be started (requests then build what they need).
pub(crate) fn warm_in_background(server: &SkillServer) {
    let server = server.clone();
    let _ = std::thread::Builder::new()
        .name("bcode-mcp-warm".into())
        .spawn(move || server.warm());
}

/// [`serve_stdio`] on a runtime of its own (one thread, plus the blocking
/// pool the file reads use), for a program that has none.
pub fn run_stdio<F, N>(
    server: SkillServer,
    refresh: F,
    interval: Duration,
    notices: N,
) -> Result<(), ServeError>
where
    F: FnMut() -> Option<SkillRegistry> + Send + 'static,
    N: Fn(StdioNotice) + Send + Sync + 'static,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let ended = runtime.block_on(serve_stdio(server, refresh, interval, notices));
    // Not waiting for the blocking pool: when stdout closed first, its read
    // of stdin may never return.
    runtime.shutdown_background();
    ended
}

/// Lets the writer write everything queued, then waits for it to end.
async fn finish(outbox: &Outbox, writer: std::thread::JoinHandle<()>) {
    outbox.close();
    let _ = tokio::task::spawn_blocking(move || writer.join()).await;
}

/// The transport the SDK's service runs on: requests from the reader,
/// answers to the writer's queue.
struct StdioTransport {
    requests: mpsc::Receiver<ClientJsonRpcMessage>,
    outbox: Arc<Outbox>,
}

impl Transport<RoleServer> for StdioTransport {
    type Error = std::io::Error;

    /// Queues the message at once: the SDK calls this from its loop, so the
    /// request it answers stops counting in the same step as the SDK's own
    /// books (see [`Outbox::expect_answer`]).
    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        std::future::ready(self.outbox.answer(&item))
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.requests.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// The answers waiting for stdout and the requests waiting for answers,
/// shared by the reader, the SDK's loop and the writer.
#[derive(Default)]
struct Outbox {
    queue: Mutex<Queue>,
    /// Wakes the writer: a line was queued, or the queue closed.
    queued: Condvar,
    /// Wakes the reader: a line was written, a request answered or
    /// forgotten, or stdout closed.
    room: Notify,
}

#[derive(Default)]
struct Queue {
    lines: VecDeque<Vec<u8>>,
    /// The bytes of `lines`, and of the line being written.
    bytes: usize,
    /// The requests handed to the SDK and not answered yet.
    in_flight: HashSet<RequestId>,
    /// No more lines come: the writer ends once it wrote them.
    closed: bool,
    /// Stdout cannot be written: nothing more is.
    broken: bool,
}

impl Outbox {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues the SDK's `message`, which answers a request when it is a
    /// result or an error with an id. An answer that cannot be written as
    /// JSON is answered with the reason instead.
    fn answer(&self, message: &ServerJsonRpcMessage) -> std::io::Result<()> {
        let answered = match message {
            JsonRpcMessage::Response(response) => Some(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        let line = match (serde_json::to_vec(message), answered) {
            (Ok(mut line), _) => {
                line.push(b'\n');
                line
            }
            (Err(err), Some(id)) => request_line::answer_line(
                &serde_json::to_value(id).unwrap_or_default(),
                -32603,
                &format!("the answer cannot be written as JSON: {err}"),
            ),
            (Err(err), None) => return Err(std::io::Error::other(err)),
        };
        self.push(line, answered)
    }

    /// Queues `line`; `answered` is the request it answers.
    fn push(&self, line: Vec<u8>, answered: Option<&RequestId>) -> std::io::Result<()> {
        let mut queue = self.lock();
        if let Some(id) = answered {
            queue.in_flight.remove(id);
        }
        let open = !queue.broken && !queue.closed;
        if open {
            queue.bytes += line.len();
            queue.lines.push_back(line);
        }
        drop(queue);
        self.queued.notify_one();
        self.room.notify_one();
        if open {
            Ok(())
        } else {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
    }

    /// Waits until another request may be read: fewer than
    /// [`MAX_REQUESTS_IN_FLIGHT`] unanswered and less than
    /// [`MAX_UNREAD_ANSWER_BYTES`] unwritten; `false` once stdout is gone.
    async fn room_for_a_request(
        &self,
        told: &mut bool,
        notices: &(dyn Fn(StdioNotice) + Send + Sync),
    ) -> bool {
        loop {
            let unread = {
                let queue = self.lock();
                if queue.broken {
                    return false;
                }
                if queue.bytes < MAX_UNREAD_ANSWER_BYTES {
                    if queue.in_flight.len() < MAX_REQUESTS_IN_FLIGHT {
                        return true;
                    }
                    None
                } else {
                    Some(queue.bytes)
                }
            };
            if let Some(bytes) = unread
                && !*told
            {
                *told = true;
                notices(StdioNotice::AnswersUnread { bytes });
            }
            self.room.notified().await;
        }
    }

    /// Counts `id` as waiting for its answer, once no earlier request with
    /// the same id is (the SDK keeps one request per id, and would drop the
    /// answer of one of two at once); `false` once stdout is gone.
    async fn expect_answer(&self, id: &RequestId) -> bool {
        loop {
            {
                let mut queue = self.lock();
                if queue.broken {
                    return false;
                }
                if !queue.in_flight.contains(id) {
                    queue.in_flight.insert(id.clone());
                    return true;
                }
            }
            self.room.notified().await;
        }
    }

    /// Stops waiting for the answer to `id`: the client cancelled it, and
    /// the SDK drops the answer of a cancelled request.
    fn forget(&self, id: &RequestId) {
        self.lock().in_flight.remove(id);
        self.room.notify_one();
    }

    /// Waits until every request handed to the SDK is answered (or stdout
    /// is gone).
    async fn all_answered(&self) {
        loop {
            {
                let queue = self.lock();
                if queue.broken || queue.in_flight.is_empty() {
                    return;
                }
            }
            self.room.notified().await;
        }
    }

    /// No more lines come; the writer ends once it wrote those queued.
    fn close(&self) {
        self.lock().closed = true;
        self.queued.notify_one();
    }
}

/// Writes each queued line to `out` until the queue is closed and empty,
/// or `out` fails (then everything queued is dropped: nobody reads it).
fn write_answers(outbox: &Outbox, out: &mut impl Write) {
    loop {
        let line = {
            let mut queue = outbox.lock();
            loop {
                if let Some(line) = queue.lines.pop_front() {
                    break line;
                }
                if queue.closed || queue.broken {
                    return;
                }
                queue = outbox
                    .queued
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        };
        let written = out.write_all(&line).and_then(|()| out.flush()).is_ok();
        {
            let mut queue = outbox.lock();
            queue.bytes = queue.bytes.saturating_sub(line.len());
            if !written {
                queue.broken = true;
                queue.lines.clear();
                queue.bytes = 0;
            }
        }
        outbox.room.notify_one();
        if !written {
            return;
        }
    }
}

/// Reads `input` a line at a time while there is room (see
/// [`Outbox::room_for_a_request`]), hands each message to the SDK through
/// `sdk` and queues the answers given here; at the end of `input`, calls
/// `ending` (which ends the requests that stay open, `subscriptions/listen`),
/// waits until every request handed over is answered, then lets `sdk` go,
/// which ends the SDK's service.
async fn read_requests(
    input: impl AsyncRead + Unpin,
    outbox: &Outbox,
    sdk: mpsc::Sender<ClientJsonRpcMessage>,
    notices: &(dyn Fn(StdioNotice) + Send + Sync),
    ending: &(dyn Fn() + Send + Sync),
) {
    let mut input = BufReader::new(input);
    let mut told = false;
    loop {
        if !outbox.room_for_a_request(&mut told, notices).await {
            return;
        }
        let taken = match read_line(&mut input, MAX_REQUEST_BYTES).await {
            Line::End => break,
            Line::TooLong => Taken::Answered(request_line::error_line(
                -32600,
                &format!("the request is longer than {MAX_REQUEST_BYTES} bytes"),
            )),
            Line::Text(line) => request_line::take(&line),
        };
        let message = match taken {
            Taken::Message(message) => message,
            Taken::Answered(answer) => {
                if outbox.push(answer, None).is_err() {
                    return;
                }
                continue;
            }
            Taken::Ignored => continue,
        };
        match &*message {
            JsonRpcMessage::Request(request) if !outbox.expect_answer(&request.id).await => {
                return;
            }
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    outbox.forget(id);
                }
            }
            _ => {}
        }
        if sdk.send(*message).await.is_err() {
            return;
        }
    }
    ending();
    outbox.all_answered().await;
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn id(n: i64) -> RequestId {
        RequestId::Number(n)
    }

    /// Whether `future` is ready at its first poll.
    fn ready_now<T>(future: impl Future<Output = T>) -> Option<T> {
        let mut future = std::pin::pin!(future);
        let waker = std::task::Waker::noop();
        match future
            .as_mut()
            .poll(&mut std::task::Context::from_waker(waker))
        {
            std::task::Poll::Ready(value) => Some(value),
            std::task::Poll::Pending => None,
        }
    }

    fn no_notices(_: StdioNotice) {}

    /// Issue 38, item 6, counted: reading stops at
    /// [`MAX_REQUESTS_IN_FLIGHT`] unanswered requests and at
    /// [`MAX_UNREAD_ANSWER_BYTES`] unwritten, goes on once an answer comes
    /// or is written, and the operator is told once that answers wait.
    #[test]
    fn reading_waits_at_either_bound_and_goes_on_when_room_is_made() {
        let outbox = Outbox::default();
        let mut told = false;
        for n in 0..MAX_REQUESTS_IN_FLIGHT {
            assert_eq!(
                ready_now(outbox.room_for_a_request(&mut told, &no_notices)),
                Some(true)
            );
            let n = i64::try_from(n).unwrap();
            assert_eq!(ready_now(outbox.expect_answer(&id(n))), Some(true));
        }
        assert_eq!(
            ready_now(outbox.room_for_a_request(&mut told, &no_notices)),
            None
        );
        outbox.push(b"{}\n".to_vec(), Some(&id(3))).unwrap();
        assert_eq!(
            ready_now(outbox.room_for_a_request(&mut told, &no_notices)),
            Some(true)
        );

        let outbox = Outbox::default();
        let answer = vec![b'x'; MAX_UNREAD_ANSWER_BYTES / 2];
        outbox.push(answer.clone(), None).unwrap();
        outbox.push(answer, None).unwrap();
        let seen = AtomicUsize::new(0);
        let notices = |notice: StdioNotice| {
            assert_eq!(
                notice,
                StdioNotice::AnswersUnread {
                    bytes: MAX_UNREAD_ANSWER_BYTES
                }
            );
            seen.fetch_add(1, Ordering::Relaxed);
        };
        for _ in 0..2 {
            assert_eq!(
                ready_now(outbox.room_for_a_request(&mut told, &notices)),
                None
            );
        }
        assert_eq!(seen.load(Ordering::Relaxed), 1);
        // The writer writes what is queued: room again.
        outbox.close();
        let mut written = Vec::new();
        write_answers(&outbox, &mut written);
        assert_eq!(written.len(), MAX_UNREAD_ANSWER_BYTES);
        assert_eq!(
            ready_now(outbox.room_for_a_request(&mut told, &notices)),
            Some(true)
        );
    }

    /// A request whose id an unanswered one holds waits for that answer
    /// (the SDK keeps one request per id); a cancelled request no longer
    /// counts (the SDK drops its answer).
    #[test]
    fn ids_wait_for_their_namesake_and_cancelled_requests_stop_counting() {
        let outbox = Outbox::default();
        assert_eq!(ready_now(outbox.expect_answer(&id(1))), Some(true));
        assert_eq!(ready_now(outbox.expect_answer(&id(1))), None);
        assert_eq!(ready_now(outbox.all_answered()), None);
        outbox.push(b"{}\n".to_vec(), Some(&id(1))).unwrap();
        assert_eq!(ready_now(outbox.all_answered()), Some(()));
        assert_eq!(ready_now(outbox.expect_answer(&id(1))), Some(true));
        outbox.forget(&id(1));
        assert_eq!(ready_now(outbox.all_answered()), Some(()));
    }

    /// Once stdout cannot be written, nothing more is queued or read.
    #[test]
    fn a_closed_stdout_ends_reading() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let outbox = Outbox::default();
        assert_eq!(ready_now(outbox.expect_answer(&id(1))), Some(true));
        outbox.push(b"{}\n".to_vec(), None).unwrap();
        write_answers(&outbox, &mut Closed);
        assert!(outbox.push(b"{}\n".to_vec(), None).is_err());
        let mut told = false;
        assert_eq!(
            ready_now(outbox.room_for_a_request(&mut told, &no_notices)),
            Some(false)
        );
        assert_eq!(ready_now(outbox.all_answered()), Some(()));
    }
}
