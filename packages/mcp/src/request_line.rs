//! One request line from the client, taken once: a scan that builds
//! nothing (it counts the line's JSON values, so a line that would cost far
//! more parsed than its bytes is refused, and notes what the answers below
//! need), then the one parse into the SDK's message. What the SDK would
//! drop without a word, or answer wrongly, is answered here: a line that is
//! not JSON (`-32700`), one with too many values or that is no JSON-RPC
//! request (`-32600`), a `skills/get` without a string `uri`, a
//! `tools/call` without a string `name` or with `arguments` that are no
//! object, which the SDK would call an unknown method, and an `initialize`
//! without what its schema requires, which the SDK would take for a
//! request of 2026-07-28 without its `_meta` (`-32602`, invalid params,
//! naming what is missing, as MCP answers a request that does not fit its
//! schema). A notification is never answered, even when it cannot be read.

use std::fmt;

use rmcp::model::ClientJsonRpcMessage;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// The most JSON values (every scalar, array, object and key counts one)
/// a request line may hold. Parsed, a value costs tens of bytes, and the
/// SDK's message types buffer a line's values more than once; a hundred
/// thousand is far beyond any request this server answers, whose largest
/// (`initialize`) holds a few dozen.
pub const MAX_REQUEST_VALUES: usize = 100_000;

/// The most bytes of string text written with escapes (`\n`, `\u00e9`) a
/// request line may hold. Such text is copied to be decoded, and the SDK's
/// message types copy a string they buffer again, several times over;
/// text without escapes is borrowed from the line.
pub const MAX_REQUEST_ESCAPED_BYTES: usize = 1024 * 1024;

/// What became of one line.
#[derive(Debug)]
pub(crate) enum Taken {
    /// A message for the SDK.
    Message(Box<ClientJsonRpcMessage>),
    /// Answered here: the answer's line.
    Answered(Vec<u8>),
    /// Nothing to do: a blank line, or a notification that cannot be read.
    Ignored,
}

/// Takes one line (without its end): scanned, then parsed once.
pub(crate) fn take(line: &[u8]) -> Taken {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Taken::Ignored;
    }
    let census = match scan(line) {
        Ok(census) => census,
        Err(answer) => return Taken::Answered(answer),
    };
    match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(message) => Taken::Message(Box::new(message)),
        Err(_) if census.method != Method::Absent && !census.has_id => Taken::Ignored,
        // The SDK's own words for a line that is JSON but no message.
        Err(_) => Taken::Answered(answer_line(&census.id, -32600, "Invalid request")),
    }
}

/// What [`check`] found of a message the SDK may parse.
#[cfg(feature = "http")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Checked {
    /// A `subscriptions/listen` request: its answer is a stream that stays
    /// open.
    Stream,
    /// Anything else.
    Plain,
}

/// The same scan as [`take`] without the parse, for a transport whose SDK
/// service parses the message itself (an HTTP body): the answer line when
/// it is refused here.
#[cfg(feature = "http")]
pub(crate) fn check(body: &[u8]) -> Result<Checked, Vec<u8>> {
    let census = scan(body)?;
    Ok(if census.method == Method::SubscriptionsListen {
        Checked::Stream
    } else {
        Checked::Plain
    })
}

/// The scan of `line`, or the answer refusing it.
fn scan(line: &[u8]) -> Result<Census, Vec<u8>> {
    let census = match Census::of(line) {
        Ok(census) => census,
        Err(err) => return Err(error_line(-32700, &format!("parse error: {err}"))),
    };
    if census.values > MAX_REQUEST_VALUES {
        let message = format!("the request holds more than {MAX_REQUEST_VALUES} JSON values");
        return Err(answer_line(&census.id, -32600, &message));
    }
    if census.escaped_bytes > MAX_REQUEST_ESCAPED_BYTES {
        let message = format!(
            "the request's strings hold more than {MAX_REQUEST_ESCAPED_BYTES} bytes written with escapes"
        );
        return Err(answer_line(&census.id, -32600, &message));
    }
    if census.method == Method::SkillsGet && census.has_id && !census.uri_is_string {
        let message = "skills/get needs params.uri, the skill's SKILL.md URI";
        return Err(answer_line(&census.id, -32602, message));
    }
    if census.method == Method::Initialize && census.has_id {
        let missing = census.initialize.missing();
        if !missing.is_empty() {
            let message = format!("initialize is missing {}", missing.join(", "));
            return Err(answer_line(&census.id, -32602, &message));
        }
    }
    if census.method == Method::ToolsCall
        && census.has_id
        && !(census.name_is_string && census.arguments.fits())
    {
        let message = "tools/call needs params.name, the tool's name, and params.arguments, when given, an object";
        return Err(answer_line(&census.id, -32602, message));
    }
    Ok(census)
}

/// A JSON-RPC error answer with no id (the request's could not be read).
pub(crate) fn error_line(code: i64, message: &str) -> Vec<u8> {
    answer_line(&Value::Null, code, message)
}

/// A JSON-RPC error answer to the request with `id`.
pub(crate) fn answer_line(id: &Value, code: i64, message: &str) -> Vec<u8> {
    let mut line = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    })
    .to_string()
    .into_bytes();
    line.push(b'\n');
    line
}

/// The top-level `method`, as far as the answers here need it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Method {
    #[default]
    Absent,
    Initialize,
    SkillsGet,
    SubscriptionsListen,
    ToolsCall,
    Other,
}

/// What `initialize`'s params hold of what its schema requires.
#[derive(Clone, Copy, Debug, Default)]
struct InitializeParams {
    protocol_version: bool,
    capabilities: bool,
    client_info: bool,
    client_name: bool,
    client_version: bool,
}

impl InitializeParams {
    /// What is missing (or of the wrong type), as the answer names it.
    fn missing(self) -> Vec<&'static str> {
        let mut missing = Vec::new();
        if !self.protocol_version {
            missing.push("params.protocolVersion (a string)");
        }
        if !self.capabilities {
            missing.push("params.capabilities (an object)");
        }
        if !self.client_info {
            missing.push("params.clientInfo (an object)");
        } else {
            if !self.client_name {
                missing.push("params.clientInfo.name (a string)");
            }
            if !self.client_version {
                missing.push("params.clientInfo.version (a string)");
            }
        }
        missing
    }
}

/// What `params.arguments` is, as far as a `tools/call` needs it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Arguments {
    #[default]
    Absent,
    Null,
    Object,
    Other,
}

impl Arguments {
    /// Whether the SDK reads it as a tool's arguments (`null` is none).
    fn fits(self) -> bool {
        self != Arguments::Other
    }
}

/// What the scan of a line found.
#[derive(Debug, Default)]
struct Census {
    /// Every value seen, keys included.
    values: usize,
    /// The bytes of every string (key or value) decoded from escapes.
    escaped_bytes: usize,
    /// Whether the top-level object has an `id`.
    has_id: bool,
    /// That `id` when it is a string or a number (an answer carries it),
    /// else null.
    id: Value,
    method: Method,
    /// Whether `params.uri` is a string.
    uri_is_string: bool,
    /// Whether `params.name` is a string.
    name_is_string: bool,
    /// What `params.arguments` is.
    arguments: Arguments,
    /// What an `initialize` needs of `params`.
    initialize: InitializeParams,
}

impl Census {
    /// Scans `line`, which must be one JSON value; nothing is built but the
    /// `id` (serde_json keeps only a scratch buffer for escaped strings).
    fn of(line: &[u8]) -> Result<Census, serde_json::Error> {
        let mut census = Census::default();
        let mut scanner = serde_json::Deserializer::from_slice(line);
        Scan(&mut census, Place::Top).deserialize(&mut scanner)?;
        scanner.end()?;
        Ok(census)
    }

    fn count(&mut self) {
        self.values = self.values.saturating_add(1);
    }

    /// Counts a string; `escaped` when it was decoded from escapes (a
    /// string without any is handed over borrowed from the line).
    fn count_string(&mut self, text: &str, escaped: bool) {
        self.count();
        if escaped {
            self.escaped_bytes = self.escaped_bytes.saturating_add(text.len());
        }
    }
}

/// Where a value stands in the line, which says what the census keeps of it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// The line itself: an object's `id`, `method` and `params` are looked at.
    Top,
    /// `params`: an object's `uri`, `name` and `arguments` are looked at.
    Params,
    Id,
    Method,
    Uri,
    Name,
    Arguments,
    ProtocolVersion,
    Capabilities,
    /// `params.clientInfo`: its `name` and `version` are looked at.
    ClientInfo,
    ClientName,
    ClientVersion,
    /// Anywhere else: only counted.
    Inside,
}

/// Scans one value at `place`, counting it and everything in it.
struct Scan<'a>(&'a mut Census, Place);

impl<'de> DeserializeSeed<'de> for Scan<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl Scan<'_> {
    /// Counts a string (`escaped`: decoded from escapes), keeping what the
    /// census needs of it.
    fn string(self, text: &str, escaped: bool) {
        let Scan(census, place) = self;
        census.count_string(text, escaped);
        match place {
            Place::Id => census.id = Value::String(text.to_owned()),
            Place::Method if text == "initialize" => census.method = Method::Initialize,
            Place::Method if text == "skills/get" => census.method = Method::SkillsGet,
            Place::Method if text == "subscriptions/listen" => {
                census.method = Method::SubscriptionsListen;
            }
            Place::Method if text == "tools/call" => census.method = Method::ToolsCall,
            Place::Method => census.method = Method::Other,
            Place::Uri => census.uri_is_string = true,
            Place::Name => census.name_is_string = true,
            Place::Arguments => census.arguments = Arguments::Other,
            Place::ProtocolVersion => census.initialize.protocol_version = true,
            Place::ClientName => census.initialize.client_name = true,
            Place::ClientVersion => census.initialize.client_version = true,
            Place::Top
            | Place::Params
            | Place::Capabilities
            | Place::ClientInfo
            | Place::Inside => {}
        }
    }

    /// Counts a scalar; an `id` that is a number is kept.
    fn scalar<E: de::Error>(self, number: Option<Value>) -> Result<(), E> {
        let Scan(census, place) = self;
        census.count();
        if let (Place::Id, Some(number)) = (place, number) {
            census.id = number;
        }
        if place == Place::Arguments {
            census.arguments = Arguments::Other;
        }
        Ok(())
    }
}

impl<'de> Visitor<'de> for Scan<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Scan(census, place) = self;
        census.count();
        match place {
            Place::Arguments => census.arguments = Arguments::Object,
            Place::Capabilities => census.initialize.capabilities = true,
            Place::ClientInfo => census.initialize.client_info = true,
            _ => {}
        }
        while let Some(key) = map.next_key_seed(KeySeed(census))? {
            let inner = match (place, key) {
                (Place::Top, Key::Id) => {
                    census.has_id = true;
                    Place::Id
                }
                (Place::Top, Key::Method) => Place::Method,
                (Place::Top, Key::Params) => Place::Params,
                (Place::Params, Key::Uri) => Place::Uri,
                (Place::Params, Key::Name) => Place::Name,
                (Place::Params, Key::Arguments) => Place::Arguments,
                (Place::Params, Key::ProtocolVersion) => Place::ProtocolVersion,
                (Place::Params, Key::Capabilities) => Place::Capabilities,
                (Place::Params, Key::ClientInfo) => Place::ClientInfo,
                (Place::ClientInfo, Key::Name) => Place::ClientName,
                (Place::ClientInfo, Key::Version) => Place::ClientVersion,
                _ => Place::Inside,
            };
            map.next_value_seed(Scan(census, inner))?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Scan(census, place) = self;
        census.count();
        if place == Place::Arguments {
            census.arguments = Arguments::Other;
        }
        while seq
            .next_element_seed(Scan(census, Place::Inside))?
            .is_some()
        {}
        Ok(())
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<(), E> {
        self.string(text, false);
        Ok(())
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        self.string(text, true);
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, number: i64) -> Result<(), E> {
        self.scalar(Some(Value::from(number)))
    }

    fn visit_u64<E: de::Error>(self, number: u64) -> Result<(), E> {
        self.scalar(Some(Value::from(number)))
    }

    fn visit_f64<E: de::Error>(self, number: f64) -> Result<(), E> {
        self.scalar(Some(Value::from(number)))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.scalar(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        let arguments = self.1 == Place::Arguments;
        let census = &mut *self.0;
        census.count();
        if arguments {
            census.arguments = Arguments::Null;
        }
        Ok(())
    }
}

/// The keys the scan looks for.
enum Key {
    Id,
    Method,
    Params,
    Uri,
    Name,
    Arguments,
    ProtocolVersion,
    Capabilities,
    ClientInfo,
    Version,
    Other,
}

/// Reads (and counts) an object key as one of [`Key`], copying nothing.
struct KeySeed<'a>(&'a mut Census);

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Key;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Key, E> {
        self.0.count_string(key, false);
        Ok(Key::of(key))
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
        self.0.count_string(key, true);
        Ok(Key::of(key))
    }
}

impl Key {
    fn of(key: &str) -> Key {
        match key {
            "id" => Key::Id,
            "method" => Key::Method,
            "params" => Key::Params,
            "uri" => Key::Uri,
            "name" => Key::Name,
            "arguments" => Key::Arguments,
            "protocolVersion" => Key::ProtocolVersion,
            "capabilities" => Key::Capabilities,
            "clientInfo" => Key::ClientInfo,
            "version" => Key::Version,
            _ => Key::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;

    /// The answer given here to `line`, as JSON; `None` when it goes to
    /// the SDK or is ignored.
    fn answer(line: &[u8]) -> Option<Value> {
        match take(line) {
            Taken::Answered(answer) => Some(serde_json::from_slice(&answer).unwrap()),
            Taken::Message(_) | Taken::Ignored => None,
        }
    }

    fn error(id: Value, code: i64, message: &str) -> Option<Value> {
        Some(
            serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        )
    }

    #[test]
    fn requests_the_sdk_reads_go_to_it_parsed() {
        let Taken::Message(message) =
            take(br#"{"jsonrpc":"2.0","id":"a","method":"resources/read","params":{"uri":"skill://x/SKILL.md"}}"#)
        else {
            panic!("not handed to the SDK");
        };
        assert_eq!(
            serde_json::to_value(message).unwrap(),
            serde_json::json!({"jsonrpc": "2.0", "id": "a", "method": "resources/read", "params": {"uri": "skill://x/SKILL.md"}})
        );
        assert!(matches!(
            take(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Taken::Message(_)
        ));
    }

    #[test]
    fn what_the_sdk_would_drop_or_misname_is_answered_here() {
        assert!(matches!(take(b" \t\r"), Taken::Ignored));
        assert_eq!(
            answer(b"not json"),
            error(
                Value::Null,
                -32700,
                "parse error: expected ident at line 1 column 2"
            )
        );
        assert_eq!(
            answer(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\xff\"}"),
            error(
                Value::Null,
                -32700,
                "parse error: invalid unicode code point at line 1 column 39"
            )
        );
        assert_eq!(
            answer(br#"{"jsonrpc":"2.0","id":3,"method":"skills/get","params":{"uri":7}}"#),
            error(
                3.into(),
                -32602,
                "skills/get needs params.uri, the skill's SKILL.md URI"
            )
        );
        assert_eq!(
            answer(br#"{"jsonrpc":"2.0","id":"q","method":"skills/get"}"#),
            error(
                "q".into(),
                -32602,
                "skills/get needs params.uri, the skill's SKILL.md URI"
            )
        );
        // A `tools/call` the SDK would call an unknown method.
        let tools_call = |id: i64| {
            error(
                id.into(),
                -32602,
                "tools/call needs params.name, the tool's name, and params.arguments, when given, an object",
            )
        };
        for (id, line) in [
            (5, &br#"{"jsonrpc":"2.0","id":5,"method":"tools/call"}"#[..]),
            (6, br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"arguments":{}}}"#),
            (7, br#"{"jsonrpc":"2.0","id":7,"params":{"name":["x"]},"method":"tools/call"}"#),
            (8, br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x","arguments":"q"}}"#),
            (9, br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x","arguments":[{}]}}"#),
            (10, br#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"x","arguments":3}}"#),
        ] {
            assert_eq!(answer(line), tools_call(id), "{}", String::from_utf8_lossy(line));
        }
        for line in [
            &br#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"x"}}"#[..],
            br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"x","arguments":null}}"#,
            br#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"arguments":{"name":7,"arguments":1},"name":"x"}}"#,
        ] {
            assert!(
                matches!(take(line), Taken::Message(_)),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        // Issue 40, item 6: an `initialize` without what its schema
        // requires is answered naming what is missing.
        assert_eq!(
            answer(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#),
            error(
                1.into(),
                -32602,
                "initialize is missing params.capabilities (an object), params.clientInfo (an object)"
            )
        );
        assert_eq!(
            answer(br#"{"jsonrpc":"2.0","id":2,"method":"initialize"}"#),
            error(
                2.into(),
                -32602,
                "initialize is missing params.protocolVersion (a string), params.capabilities (an object), params.clientInfo (an object)"
            )
        );
        assert_eq!(
            answer(br#"{"jsonrpc":"2.0","id":3,"params":{"clientInfo":{"name":"x","version":1},"capabilities":[],"protocolVersion":"2025-11-25"},"method":"initialize"}"#),
            error(
                3.into(),
                -32602,
                "initialize is missing params.capabilities (an object), params.clientInfo.version (a string)"
            )
        );
        assert!(matches!(
            take(br#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"x":{"name":1}},"clientInfo":{"name":"x","version":"1"}}}"#),
            Taken::Message(_)
        ));
        // JSON, but no request: answered with its id when it has one.
        assert_eq!(
            answer(br#"{"jsonrpc":"1.0","id":4,"method":"ping"}"#),
            error(4.into(), -32600, "Invalid request")
        );
        assert_eq!(
            answer(b"[1,2]"),
            error(Value::Null, -32600, "Invalid request")
        );
        // A notification is never answered, even one that cannot be read.
        assert!(matches!(
            take(br#"{"jsonrpc":"1.0","method":"notifications/initialized"}"#),
            Taken::Ignored
        ));
    }

    /// Issue 38, item 7: a line is refused by what parsing it would cost,
    /// found by a scan that builds nothing; its id is found wherever it
    /// stands.
    #[test]
    fn lines_that_would_cost_far_more_than_their_bytes_are_refused() {
        let mut many = br#"{"jsonrpc":"2.0","method":"ping","params":["#.to_vec();
        many.extend(b"0,".repeat(MAX_REQUEST_VALUES));
        many.extend(br#"0],"id":"late"}"#);
        assert_eq!(
            answer(&many),
            error(
                "late".into(),
                -32600,
                "the request holds more than 100000 JSON values"
            )
        );
        let mut escaped = br#"{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":""#.to_vec();
        escaped.extend(b"\\n".repeat(MAX_REQUEST_ESCAPED_BYTES + 1));
        escaped.extend(br#""}}"#);
        assert_eq!(
            answer(&escaped),
            error(
                9.into(),
                -32600,
                "the request's strings hold more than 1048576 bytes written with escapes"
            )
        );
        // Text without escapes is borrowed, not copied: not counted.
        let mut plain = br#"{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":""#.to_vec();
        plain.extend(b"n".repeat(2 * MAX_REQUEST_ESCAPED_BYTES));
        plain.extend(br#""}}"#);
        assert!(matches!(take(&plain), Taken::Message(_)));
        // Just within both bounds.
        let mut within = br#"{"jsonrpc":"2.0","id":9,"method":"x/y","params":{"x":["#.to_vec();
        within.extend(b"0,".repeat(MAX_REQUEST_VALUES - 20));
        within.extend(br#""\n"]}}"#);
        assert!(matches!(take(&within), Taken::Message(_)));
    }
}
