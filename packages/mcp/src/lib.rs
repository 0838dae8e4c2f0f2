//! Skills over MCP: the MCP Skills Extension (SEP-2640,
//! `io.modelcontextprotocol/skills`) on the official Rust SDK.
//!
//! [`SkillServer`] serves a [`bcode_skill::SkillRegistry`]: every skill the
//! catalog could show, at `skill://<id>/SKILL.md`, with its front matter as
//! written and every file of its folder with a `sha256:` digest. Nothing
//! outside a served skill's folder is ever read: request URIs are decoded
//! and refused when a segment could climb, only files the skill's entry
//! lists are read, and they are opened below the skill's folder.
//! [`serve_stdio`] runs it on standard input and output (and, with the
//! `http` feature, [`serve_http`] over Streamable HTTP), swapping in each
//! registry a refresh returns and telling the client the list changed; it
//! parses each request line once, within bounds, reads no further while
//! answers wait unread, and answers every request read before it stops.
//! Its one tool, `search_skills`, ranks the served skills for a task and
//! answers with their `skill://` URIs, so any MCP-capable agent can route
//! through the registry.
//!
//! With the `client` feature, [`McpProvider`] consumes the other way: a
//! `bcode.skill/v1` provider relaying the skills one MCP server publishes,
//! a program it starts or a server it reaches over Streamable HTTP (with
//! TLS for an `https` URL, the server's certificate always verified).

#[cfg(feature = "client")]
mod client;
#[cfg(feature = "client")]
mod client_cache;
#[cfg(feature = "client")]
mod client_http;
#[cfg(feature = "client")]
mod client_listing;
#[cfg(feature = "client")]
mod client_tap;
#[cfg(feature = "client")]
mod client_tls;
mod digests;
mod entry;
mod follow;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod http_listing;
mod request_line;
mod serve_error;
mod server;
mod service;
mod stdio;
mod tool;
mod uri;

#[cfg(feature = "client")]
pub use client::{
    MAX_LISTED_SKILLS, MAX_LISTING_BYTES, MAX_PAGES, McpEndpoint, McpProvider, McpServerSpec,
    NEUTRAL_DIR,
};
#[cfg(feature = "client")]
pub use client_listing::{MAX_SKILL_BYTES, MAX_SKILL_FILES};
pub use digests::DigestCache;
pub use entry::{MAX_BYTES, MAX_FILES, NotServed, ServedEntry, ServedFile, Unreadable, digest};
#[cfg(feature = "http")]
pub use http::{
    HttpNotice, HttpOptions, MAX_HTTP_BODY_BYTES, MAX_HTTP_CONNECTIONS,
    MAX_HTTP_REQUESTS_IN_FLIGHT, MAX_HTTP_STREAMS, MCP_PATH, run_http, serve_http,
};
pub use request_line::{MAX_REQUEST_ESCAPED_BYTES, MAX_REQUEST_VALUES};
#[cfg(feature = "http")]
pub use serve_error::HttpRefusal;
pub use serve_error::ServeError;
pub use server::{RESOURCES_PAGE, SKILLS_PAGE, SkillServer};
pub use service::SkillService;
pub use stdio::{
    MAX_REQUEST_BYTES, MAX_REQUESTS_IN_FLIGHT, MAX_UNREAD_ANSWER_BYTES, StdioNotice, run_stdio,
    serve_stdio,
};
pub use tool::{DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_BYTES, SEARCH_TOOL};
pub use uri::{SCHEME, file_uri, skill_uri};
