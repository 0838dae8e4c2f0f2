//! A few lines of HTTP/1.1 over a socket, for the tests that drive MCP's
//! Streamable HTTP transport (the MCP crate's server tests and the CLI's
//! `mcp --http` tests) without an HTTP client library.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};

use serde_json::{Value, json};

/// The `_meta` a 2026-07-28 request carries.
pub fn meta_2026() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// The headers a 2026-07-28 request carries for `method`.
pub fn headers_2026(method: &str) -> Vec<(&'static str, String)> {
    vec![
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", method.to_owned()),
    ]
}

/// Writes one HTTP/1.1 POST of `body` to `path` (closing after it when
/// `close`).
pub fn send_post<H: AsRef<str>>(
    stream: &mut TcpStream,
    addr: SocketAddr,
    path: &str,
    headers: &[(&str, H)],
    body: &[u8],
    close: bool,
) {
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    if close {
        head.push_str("Connection: close\r\n");
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {}\r\n", value.as_ref()));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    stream.flush().unwrap();
}

/// An HTTP answer read whole.
#[derive(Debug)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body as sent.
    pub body: Vec<u8>,
}

impl Answer {
    /// Reads an answer's head and body.
    pub fn parse(bytes: &[u8]) -> Answer {
        let at = bytes
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("no head in {:?}", String::from_utf8_lossy(bytes)));
        let head = std::str::from_utf8(&bytes[..at]).unwrap();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers = lines
            .map(|line| {
                let (name, value) = line.split_once(':').unwrap();
                (name.to_ascii_lowercase(), value.trim().to_owned())
            })
            .collect();
        Answer {
            status,
            headers,
            body: bytes[at + 4..].to_vec(),
        }
    }

    /// The first value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as text, lossily.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|_| panic!("not JSON: {}", self.text()))
    }
}
