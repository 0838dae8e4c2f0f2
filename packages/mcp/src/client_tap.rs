//! The raw text of the skills answers a server sends, kept beside the SDK's
//! decoding: the SDK decodes a whole `skills/list` page into one typed
//! value, so one entry it cannot decode (no `size`, say) would lose the
//! page and leave only "Unexpected response type"; the consumer decodes
//! each entry itself from the text this tap keeps, so one bad entry costs
//! one entry and what was wrong can be said.
//!
//! [`Tap`] sits between the server's standard output and the SDK's line
//! reader. It hands on whole lines. A line (at most [`MAX_LINE`] bytes,
//! the SDK's own bound) that is a JSON-RPC answer whose `result` holds a
//! `skills` or `skill` key has its `result` kept by request id in
//! [`RawResults`] until the consumer takes it, and reaches the SDK with an
//! empty `result` in its place: the consumer reads that answer from the
//! kept text alone, and the SDK's decoding of a page (an untagged union of
//! every result type, each tried in turn) was most of what the consumer
//! spent on a listing beside the server's own time.

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
    /// answer carries it) when it is a skills answer, and returns the
    /// message the SDK is given in its place (see [`RawResults::observe`]).
    pub(crate) fn observe_message(&self, message: &[u8]) -> Option<String> {
        if mentions_skills(message) {
            self.observe(message)
        } else {
            None
        }
    }

    /// Keeps the result of `line` when it is an answer whose result holds
    /// `skills` or `skill`, and returns the answer with an empty result,
    /// which is what the SDK is given (every caller that asks for skills
    /// reads the kept text). Any other line is left alone: a
    /// `resources/read` whose text names a skill reaches the SDK whole.
    fn observe(&self, line: &[u8]) -> Option<String> {
        #[derive(Deserialize)]
        struct Answer<'a> {
            id: Option<&'a RawValue>,
            #[serde(borrow)]
            result: Option<&'a RawValue>,
        }
        #[derive(Deserialize)]
        struct Skills {
            skills: Option<serde::de::IgnoredAny>,
            skill: Option<serde::de::IgnoredAny>,
        }
        let answer = serde_json::from_slice::<Answer<'_>>(line).ok()?;
        let (Some(id), Some(result)) = (answer.id, answer.result) else {
            return None;
        };
        let shape = serde_json::from_str::<Skills>(result.get()).ok()?;
        if shape.skills.is_none() && shape.skill.is_none() {
            return None;
        }
        let stub = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, id.get());
        let mut kept = self.lock();
        while kept.len() >= MAX_KEPT {
            kept.pop_first();
        }
        kept.insert(id.get().to_owned(), result.to_owned());
        Some(stub)
    }
}

/// The server's output as the SDK reads it: whole lines, each skills
/// answer kept on the way and handed on with an empty result.
pub(crate) struct Tap<R> {
    inner: R,
    lines: Lines,
    /// Bytes ready for the reader.
    out: Vec<u8>,
    /// How much of `out` the reader has taken.
    taken: usize,
    /// Where the server's bytes are read into before they are seen.
    scratch: Box<[u8]>,
    /// The server's output has ended.
    ended: bool,
}

/// How much of the server's output is read at a time.
const SCRATCH: usize = 64 * 1024;

impl<R> Tap<R> {
    pub(crate) fn new(inner: R, raw: RawResults) -> Tap<R> {
        Tap {
            inner,
            lines: Lines {
                raw,
                line: Vec::new(),
                overlong: false,
            },
            out: Vec::new(),
            taken: 0,
            scratch: vec![0; SCRATCH].into_boxed_slice(),
            ended: false,
        }
    }
}

/// The line being read, and where finished ones go.
struct Lines {
    raw: RawResults,
    line: Vec<u8>,
    /// The current line grew past [`MAX_LINE`]: handed on as it comes,
    /// not kept (the SDK drops it unread).
    overlong: bool,
}

impl Lines {
    /// Sees `bytes` of the server's output, adding to `out` what the
    /// reader is given: each finished line, as sent or with its skills
    /// result emptied.
    fn see(&mut self, mut bytes: &[u8], out: &mut Vec<u8>) {
        while !bytes.is_empty() {
            let (part, ended) = match bytes.iter().position(|&b| b == b'\n') {
                Some(at) => (&bytes[..at], Some(at + 1)),
                None => (bytes, None),
            };
            if self.overlong {
                out.extend_from_slice(part);
            } else if self.line.len() + part.len() > MAX_LINE {
                self.overlong = true;
                out.append(&mut self.line);
                out.extend_from_slice(part);
            } else {
                self.line.extend_from_slice(part);
            }
            match ended {
                Some(next) => {
                    if !self.overlong {
                        let stub = mentions_skills(&self.line)
                            .then(|| self.raw.observe(&self.line))
                            .flatten();
                        match stub {
                            Some(stub) => out.extend_from_slice(stub.as_bytes()),
                            None => out.extend_from_slice(&self.line),
                        }
                    }
                    out.push(b'\n');
                    self.line.clear();
                    self.overlong = false;
                    bytes = &bytes[next..];
                }
                None => bytes = &[],
            }
        }
    }

    /// The server's output ended: an unfinished line is handed on as it is.
    fn finish(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.line);
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
        loop {
            if this.taken < this.out.len() || buf.remaining() == 0 {
                let n = (this.out.len() - this.taken).min(buf.remaining());
                buf.put_slice(&this.out[this.taken..this.taken + n]);
                this.taken += n;
                if this.taken == this.out.len() {
                    this.out.clear();
                    this.taken = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            let mut scratch = ReadBuf::new(&mut this.scratch);
            match Pin::new(&mut this.inner).poll_read(cx, &mut scratch) {
                Poll::Ready(Ok(())) if scratch.filled().is_empty() => {
                    this.lines.finish(&mut this.out);
                    this.ended = true;
                }
                Poll::Ready(Ok(())) => this.lines.see(scratch.filled(), &mut this.out),
                other => return other,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the reader is given of `chunks`, and what was kept.
    fn tapped(chunks: &[&[u8]]) -> (Vec<u8>, RawResults) {
        let raw = RawResults::default();
        let mut tap = Tap::new(tokio::io::empty(), raw.clone());
        let mut out = Vec::new();
        for chunk in chunks {
            tap.lines.see(chunk, &mut out);
        }
        tap.lines.finish(&mut out);
        (out, raw)
    }

    #[test]
    fn a_skills_answer_is_kept_by_its_id_across_chunks_and_handed_on_empty() {
        let (out, raw) = tapped(&[
            b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"res",
            b"ult\":{\"skills\":[{\"uri\":1}]}}\n{\"id\":4,\"result\":{}}\n",
            b"{\"id\":5,\"result\":{\"contents\":[{\"text\":\"a \\\"skills\\\" list\"}]}}\nrest",
        ]);
        assert_eq!(
            raw.take("3").map(|r| r.get().to_owned()),
            Some("{\"skills\":[{\"uri\":1}]}".to_owned())
        );
        assert_eq!(raw.take("3").map(|r| r.get().to_owned()), None);
        // An answer that names no skills is not copied, nor one whose
        // result only mentions them in its text.
        assert_eq!(raw.take("4").map(|r| r.get().to_owned()), None);
        assert_eq!(raw.take("5").map(|r| r.get().to_owned()), None);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n\
             {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\
             {\"id\":4,\"result\":{}}\n\
             {\"id\":5,\"result\":{\"contents\":[{\"text\":\"a \\\"skills\\\" list\"}]}}\n\
             rest"
        );
    }

    #[test]
    fn an_overlong_line_is_handed_on_whole_not_kept_and_the_next_one_is() {
        let mut long = b"{\"id\":1,\"result\":{\"skills\":\"".to_vec();
        long.resize(MAX_LINE + 10, b'a');
        let (out, raw) = tapped(&[&long, b"\"}}\n{\"id\":2,\"result\":{\"skill\":{}}}\n"]);
        assert_eq!(raw.take("1").map(|r| r.get().to_owned()), None);
        assert_eq!(
            raw.take("2").map(|r| r.get().to_owned()),
            Some("{\"skill\":{}}".to_owned())
        );
        let mut expected = long.clone();
        expected.extend_from_slice(b"\"}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n");
        assert!(out == expected, "the overlong line changed");
    }

    /// Read through `AsyncRead` in small steps, the tap hands on the same
    /// bytes as `see` makes.
    #[test]
    fn the_reader_gets_every_byte_in_order() {
        use tokio::io::AsyncReadExt;
        let input = b"{\"id\":1,\"result\":{\"skills\":[]}}\n{\"method\":\"x\"}\nend".to_vec();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let out = runtime.block_on(async {
            let mut tap = Tap::new(&input[..], RawResults::default());
            let mut out = Vec::new();
            let mut small = [0_u8; 5];
            loop {
                let n = tap.read(&mut small).await.unwrap();
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&small[..n]);
            }
            out
        });
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"method\":\"x\"}\nend"
        );
    }
}
