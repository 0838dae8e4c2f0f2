//! `skills/list` over Streamable HTTP answered in front of the SDK's
//! service, as stdio answers it (`service.rs`): the SDK's stateless service
//! would build a service, a task and a one-shot transport for the request,
//! then check every entry of the page again (three NFKC passes a name),
//! which made a page over HTTP cost 1.3 times the same page over stdio.
//!
//! Only a request the SDK would answer with the page is taken here, and
//! only when every check the SDK makes of it is known to pass: the `Host`
//! the SDK allows, no `Origin` (a web page's request goes to the SDK, which
//! refuses it), an `Accept` naming both JSON and event streams without
//! weights, a JSON `Content-Type`, a protocol version (header) of the
//! `initialize` era or none, no protocol version in the request's `_meta`,
//! and a cursor this server gave. Anything else (another method, a request
//! of 2026-07-28, an unusual header, a cursor refused) goes to the SDK
//! unchanged, which answers or refuses it as before. The gate's own checks
//! (path, bearer token, body bound, the request scan, the bound on answers
//! made at once) come first either way. The answer is the SDK's: the same
//! result, finished as the SDK finishes it for such a request, written
//! with the same serializer, as JSON with the SDK's status and type.

use bytes::Bytes;
use http::{HeaderMap, header};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, GetMeta, JsonRpcMessage, ProtocolVersion, RequestId,
    ServerJsonRpcMessage, ServerResult,
};

use crate::server::SkillServer;

/// The header naming the request's protocol version.
const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// A `skills/list` request this module answers: its id and cursor.
#[derive(Debug, PartialEq)]
pub(crate) struct Listing {
    id: RequestId,
    cursor: Option<String>,
}

/// The listing `headers` and `body` ask for, when every check the SDK
/// would make of them is known to pass (see the module documentation);
/// `allowed_hosts` is the SDK's list (empty: any host).
pub(crate) fn listing(
    headers: &HeaderMap,
    body: &[u8],
    allowed_hosts: &[String],
) -> Option<Listing> {
    if headers.contains_key(header::ORIGIN)
        || !host_allowed(headers, allowed_hosts)
        || !accepts_json_and_events(headers)
        || !sends_json(headers)
        || !initialize_era(headers)
    {
        return None;
    }
    let ClientJsonRpcMessage::Request(request) = serde_json::from_slice(body).ok()? else {
        return None;
    };
    if request.request.get_meta().protocol_version().is_some() {
        return None;
    }
    let ClientRequest::ListSkillsRequest(list) = request.request else {
        return None;
    };
    Some(Listing {
        id: request.id,
        cursor: list.params.and_then(|params| params.cursor),
    })
}

/// The answer to `listing`: the bytes of the SDK's JSON-RPC response;
/// `None` when the page cannot be made (an unknown cursor), which the SDK
/// then answers with its own error.
pub(crate) async fn answer(server: &SkillServer, listing: Listing) -> Option<Bytes> {
    let page = server.skills_page(listing.cursor).await.ok()?;
    let mut result = ServerResult::ListSkillsResult(page);
    // What the SDK does to every result of a request of the `initialize` era.
    result.strip_result_type_for_legacy_peer();
    result.strip_non_object_output_for_legacy_peer();
    let message: ServerJsonRpcMessage = JsonRpcMessage::response(result, listing.id);
    serde_json::to_vec(&message).ok().map(Bytes::from)
}

/// Whether `Host` names a host the SDK allows, read as the SDK reads it.
fn host_allowed(headers: &HeaderMap, allowed_hosts: &[String]) -> bool {
    let Some(host) = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| http::uri::Authority::try_from(value).ok())
    else {
        return false;
    };
    if allowed_hosts.is_empty() {
        return true;
    }
    let name = normalized(host.host());
    allowed_hosts.iter().any(|allowed| {
        let allowed = allowed.trim();
        if allowed.is_empty() {
            return false;
        }
        match http::uri::Authority::try_from(allowed) {
            Ok(authority) => {
                normalized(authority.host()) == name
                    && authority
                        .port_u16()
                        .is_none_or(|port| host.port_u16() == Some(port))
            }
            Err(_) => normalized(allowed) == name,
        }
    })
}

fn normalized(host: &str) -> String {
    host.trim_matches('[')
        .trim_matches(']')
        .to_ascii_lowercase()
}

/// Whether `Accept` names both `application/json` and `text/event-stream`,
/// plainly: a weight or a quoted string sends the request to the SDK.
fn accepts_json_and_events(headers: &HeaderMap) -> bool {
    let (mut json, mut events) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        if value.contains('"') {
            return false;
        }
        for range in value.split(',') {
            let mut parts = range.split(';');
            let essence = parts.next().unwrap_or_default().trim();
            if parts.any(|parameter| {
                parameter
                    .split_once('=')
                    .is_some_and(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
            }) {
                return false;
            }
            json |= essence.eq_ignore_ascii_case("application/json");
            events |= essence.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && events
}

/// Whether `Content-Type` is JSON.
fn sends_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .eq_ignore_ascii_case("application/json")
        })
}

/// Whether the protocol version header is absent (the SDK then takes
/// 2025-03-26) or names a version the SDK knows from before 2026-07-28
/// (whose requests carry their own `_meta`, and standard headers the SDK
/// checks).
fn initialize_era(headers: &HeaderMap) -> bool {
    let mut values = headers.get_all(PROTOCOL_VERSION_HEADER).iter();
    let Some(value) = values.next() else {
        return true;
    };
    values.next().is_none()
        && value.to_str().is_ok_and(|version| {
            version < ProtocolVersion::V_2026_07_28.as_str()
                && ProtocolVersion::KNOWN_VERSIONS
                    .iter()
                    .any(|known| known.as_str() == version)
        })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const LIST: &[u8] =
        br#"{"jsonrpc":"2.0","id":7,"method":"skills/list","params":{"cursor":"100"}}"#;

    fn headers(extra: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in [
            ("host", "127.0.0.1:8080"),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2025-11-25"),
        ] {
            if !extra.iter().any(|(given, _)| *given == name) {
                headers.insert(name, value.parse().unwrap());
            }
        }
        for (name, value) in extra {
            if !value.is_empty() {
                headers.append(*name, value.parse().unwrap());
            }
        }
        headers
    }

    fn loopback() -> Vec<String> {
        ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec()
    }

    #[test]
    fn a_plain_listing_is_taken_with_its_id_and_cursor() {
        assert_eq!(
            listing(&headers(&[]), LIST, &loopback()),
            Some(Listing {
                id: RequestId::Number(7),
                cursor: Some("100".into())
            })
        );
        let first = br#"{"jsonrpc":"2.0","id":"a","method":"skills/list"}"#;
        assert_eq!(
            listing(
                &headers(&[("mcp-protocol-version", "")]),
                first,
                &loopback()
            ),
            Some(Listing {
                id: RequestId::String("a".into()),
                cursor: None
            })
        );
        // Any host, when the SDK allows any.
        assert!(listing(&headers(&[("host", "example.org")]), LIST, &[]).is_some());
        assert!(
            listing(
                &headers(&[(
                    "accept",
                    "text/event-stream;charset=utf-8, Application/JSON"
                )]),
                LIST,
                &loopback()
            )
            .is_some()
        );
    }

    /// Everything the SDK might answer otherwise goes to the SDK.
    #[test]
    fn anything_else_goes_to_the_sdk() {
        for extra in [
            [("origin", "http://localhost:3000")],
            [("host", "attacker.example")],
            [("host", "")],
            [("accept", "application/json")],
            [("accept", "application/json;q=0.5, text/event-stream")],
            [("content-type", "text/plain")],
            [("content-type", "")],
            [("mcp-protocol-version", "2026-07-28")],
            [("mcp-protocol-version", "1999-01-01")],
        ] {
            assert_eq!(
                listing(&headers(&extra), LIST, &loopback()),
                None,
                "{extra:?}"
            );
        }
        assert_eq!(
            listing(
                &headers(&[("mcp-protocol-version", "2025-06-18")]),
                LIST,
                &loopback()
            )
            .map(|taken| taken.id),
            Some(RequestId::Number(7))
        );
        for body in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://a/SKILL.md"}}"#[..],
            br#"{"jsonrpc":"2.0","method":"skills/list"}"#,
            br#"[{"jsonrpc":"2.0","id":1,"method":"skills/list"}]"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            b"not json",
        ] {
            assert_eq!(
                listing(&headers(&[]), body, &loopback()),
                None,
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }
}
