//! The raw text of the skills answers a server sends, kept beside the SDK's
//! decoding: the SDK decodes a whole `skills/list` page into one typed
//! value, so one entry it cannot decode (no `size`, say) would lose the
//! page and leave only "Unexpected response type"; the consumer decodes
//! each entry itself from the text this tap keeps, so one bad entry costs
//! one entry and what was wrong can be said.
//!
//! [`Tap`] sits between the server's standard output and the SDK's line
//! reader. It copies each line (at most [`MAX_LINE`] bytes, the SDK's own
//! bound) that holds a `"skills"` or `"skill"` key and, when the line is a
//! JSON-RPC answer, keeps its `result` by request id in [`RawResults`] until
//! the consumer takes it. The SDK reads the same bytes, so the kept text is
//! there before the SDK hands the answer on.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, ReadBuf};

/// The longest line the tap copies: the SDK's stdio transport drops longer
/// ones unread, so nothing longer can be an answer.
pub(crate) const MAX_LINE: usize = 16 * 1024 * 1024;

/// Answers kept at most; older ones are dropped first. The consumer takes
/// each answer as it arrives, so this only bounds a server that answers
/// requests nobody sent.
const MAX_KEPT: usize = 8;

/// The `result` texts of skills answers, by request id (as JSON text).
#[derive(Clone, Debug, Default)]
pub(crate) struct RawResults {
    kept: Arc<Mutex<BTreeMap<String, Box<RawValue>>>>,
}

impl RawResults {
    /// The kept result of the answer to `id` (the id as JSON text), taken.
    pub(crate) fn take(&self, id: &str) -> Option<Box<RawValue>> {
        self.lock().remove(id)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Box<RawValue>>> {
        match self.kept.lock() {
            Ok(kept) => kept,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Keeps the result of `message` (one JSON-RPC message, as an HTTP
    /// answer carries it) when it may be a skills answer.
    pub(crate) fn observe_message(&self, message: &[u8]) {
        if mentions_skills(message) {
            self.observe(message);
        }
    }

    /// Keeps the result of `line` when it is an answer.
    fn observe(&self, line: &[u8]) {
        #[derive(Deserialize)]
        struct Answer<'a> {
            id: Option<&'a RawValue>,
            #[serde(borrow)]
            result: Option<&'a RawValue>,
        }
        let Ok(answer) = serde_json::from_slice::<Answer<'_>>(line) else {
            return;
        };
        let (Some(id), Some(result)) = (answer.id, answer.result) else {
            return;
        };
        let mut kept = self.lock();
        while kept.len() >= MAX_KEPT {
            kept.pop_first();
        }
        kept.insert(id.get().to_owned(), result.to_owned());
    }
}

/// The server's output as the SDK reads it, each skills answer kept on the
/// way.
pub(crate) struct Tap<R> {
    inner: R,
    lines: Lines,
}

impl<R> Tap<R> {
    pub(crate) fn new(inner: R, raw: RawResults) -> Tap<R> {
        Tap {
            inner,
            lines: Lines {
                raw,
                line: Vec::new(),
                overlong: false,
            },
        }
    }
}

/// The line being read, and where finished ones go.
struct Lines {
    raw: RawResults,
    line: Vec<u8>,
    /// The current line grew past [`MAX_LINE`]: not copied to its end.
    overlong: bool,
}

impl Lines {
    fn see(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let (part, ended) = match bytes.iter().position(|&b| b == b'\n') {
                Some(at) => (&bytes[..at], Some(at + 1)),
                None => (bytes, None),
            };
            if !self.overlong {
                if self.line.len() + part.len() > MAX_LINE {
                    self.overlong = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(part);
                }
            }
            match ended {
                Some(next) => {
                    if !self.overlong && mentions_skills(&self.line) {
                        self.raw.observe(&self.line);
                    }
                    self.line.clear();
                    self.overlong = false;
                    bytes = &bytes[next..];
                }
                None => bytes = &[],
            }
        }
    }
}

/// Whether a line may be a skills answer: cheaper than parsing every line.
fn mentions_skills(line: &[u8]) -> bool {
    line.windows(7)
        .any(|window| window == b"\"skills" || window == b"\"skill\"")
}

impl<R: AsyncRead + Unpin> AsyncRead for Tap<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            this.lines.see(&buf.filled()[before..]);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tapped(chunks: &[&[u8]]) -> RawResults {
        let raw = RawResults::default();
        let mut tap = Tap::new(tokio::io::empty(), raw.clone());
        for chunk in chunks {
            tap.lines.see(chunk);
        }
        raw
    }

    #[test]
    fn a_skills_answer_is_kept_by_its_id_across_chunks() {
        let raw = tapped(&[
            b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"res",
            b"ult\":{\"skills\":[{\"uri\":1}]}}\n{\"id\":4,\"result\":{}}\n",
        ]);
        assert_eq!(
            raw.take("3").map(|r| r.get().to_owned()),
            Some("{\"skills\":[{\"uri\":1}]}".to_owned())
        );
        assert_eq!(raw.take("3").map(|r| r.get().to_owned()), None);
        // An answer that names no skills is not copied.
        assert_eq!(raw.take("4").map(|r| r.get().to_owned()), None);
    }

    #[test]
    fn an_overlong_line_is_not_kept_and_the_next_one_is() {
        let mut long = b"{\"id\":1,\"result\":{\"skills\":\"".to_vec();
        long.resize(MAX_LINE + 10, b'a');
        let raw = tapped(&[&long, b"\"}}\n{\"id\":2,\"result\":{\"skill\":{}}}\n"]);
        assert_eq!(raw.take("1").map(|r| r.get().to_owned()), None);
        assert_eq!(
            raw.take("2").map(|r| r.get().to_owned()),
            Some("{\"skill\":{}}".to_owned())
        );
    }
}
