//! `McpProvider` over a session the host already holds (a server in the
//! same process, on the host's own runtime): its skills join a registry as
//! `host:<name>` from `mcp:host`, the body is read on activation only, and
//! a server whose file contradicts its listing's front matter is refused
//! with a message naming the field; a listing is bounded in entries and
//! bytes over all its pages.

#![cfg(feature = "client")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bcode_skill::{Discovery, DiscoveryOptions, SkillProvider};
use bcode_skill_mcp::{MAX_LISTED_SKILLS, McpProvider};
use bcode_skill_models::{SkillError, SkillsConfig};
use rmcp::model::{
    ListSkillsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ResourceContents, ServerCapabilities, ServerConfig, Skill,
    SkillFrontmatter, SkillResource, SkillResources,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

const BODY: &str = "---\nname: pdf\ndescription: Reads PDFs.\n---\nThe PDF body.\n";

/// A server of one skill whose listing says `description`, serving
/// [`BODY`]; it counts the files read.
#[derive(Clone)]
struct OneSkill {
    description: String,
    reads: Arc<AtomicUsize>,
}

impl ServerHandler for OneSkill {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_resources()
                .enable_skills()
                .build(),
        )
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let uri = "skill://pdf/SKILL.md";
        Ok(ListSkillsResult::with_all_items(vec![Skill::new(
            uri,
            SkillFrontmatter::new("pdf", self.description.clone()),
            SkillResources::Files(vec![SkillResource::from_bytes(uri, BODY.as_bytes())]),
        )]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        Ok(ReadResourceResult::new(vec![ResourceContents::text(BODY, request.uri)]).into())
    }
}

/// A host runtime with `server` connected to a client session; the
/// provider made from the session's peer. The runtime and the sessions
/// are kept alive in the returned box.
fn hosted<S: ServerHandler>(server: S) -> (McpProvider, Box<dyn std::any::Any>) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let held = Arc::new(Mutex::new(Vec::<Box<dyn std::any::Any + Send>>::new()));
    let peer = runtime.block_on(async {
        let served = tokio::spawn(async move { server.serve(server_io).await.unwrap() });
        let client = ().serve(client_io).await.unwrap();
        let peer = client.peer().clone();
        let server = served.await.unwrap();
        held.lock().unwrap().push(Box::new(client));
        held.lock().unwrap().push(Box::new(server));
        peer
    });
    let provider = McpProvider::from_peer("host", peer, Duration::from_secs(120), None);
    (provider, Box::new((held, runtime)))
}

fn server(description: &str) -> (OneSkill, Arc<AtomicUsize>) {
    let reads = Arc::new(AtomicUsize::new(0));
    let server = OneSkill {
        description: description.to_owned(),
        reads: Arc::clone(&reads),
    };
    (server, reads)
}

#[test]
fn a_hosts_session_serves_skills_under_its_name_read_on_activation_only() {
    let (one, reads) = server("Reads PDFs.");
    let (provider, _kept) = hosted(one);
    let providers: Vec<Arc<dyn SkillProvider>> = vec![Arc::new(provider)];
    let registry = Discovery::new(DiscoveryOptions::from_config(&SkillsConfig::default()))
        .build_with_providers(&[], &providers);
    assert_eq!(registry.diagnostics(), []);
    let listed: Vec<(String, String, String, String)> = registry
        .skills()
        .map(|s| {
            (
                s.manifest.id.to_string(),
                s.manifest.name.clone(),
                s.manifest.description.clone(),
                s.source.label.clone(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [(
            "host:pdf".to_owned(),
            "pdf".to_owned(),
            "Reads PDFs.".to_owned(),
            "mcp:host".to_owned()
        )]
    );
    // Listing fetched no file.
    assert_eq!(reads.load(Ordering::SeqCst), 0);
    let skill = registry.get("host:pdf").unwrap();
    assert_eq!(registry.body(skill).unwrap(), "The PDF body.");
    assert_eq!(reads.load(Ordering::SeqCst), 1);
}

#[test]
fn a_file_that_contradicts_its_listing_is_refused() {
    let (one, _) = server("Reads every PDF.");
    let (provider, _kept) = hosted(one);
    let providers: Vec<Arc<dyn SkillProvider>> = vec![Arc::new(provider)];
    let registry = Discovery::new(DiscoveryOptions::from_config(&SkillsConfig::default()))
        .build_with_providers(&[], &providers);
    let skill = registry.get("host:pdf").unwrap();
    assert_eq!(
        registry.body(skill),
        Err(SkillError::Provider {
            provider: "host".to_owned(),
            reason: "MCP server `host`: the front matter of `skill://pdf/SKILL.md` differs from its listing in `description`; the skill is not loaded".to_owned(),
        })
    );
}

/// A server whose `skills/list` hands out `pages` pages of `per_page`
/// entries, counting the pages asked for.
#[derive(Clone)]
struct Pages {
    pages: usize,
    per_page: usize,
    served: Arc<AtomicUsize>,
}

impl ServerHandler for Pages {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_resources()
                .enable_skills()
                .build(),
        )
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let page = self.served.fetch_add(1, Ordering::SeqCst);
        let skills = (0..self.per_page)
            .map(|index| {
                let name = format!("s{page}-{index}");
                let uri = format!("skill://{name}/SKILL.md");
                Skill::new(
                    uri.clone(),
                    SkillFrontmatter::new(name, "A listed skill."),
                    SkillResources::Files(vec![SkillResource::from_bytes(uri, b"x")]),
                )
            })
            .collect();
        let mut result = ListSkillsResult::with_all_items(skills);
        if page + 1 < self.pages {
            result.next_cursor = Some(format!("after-{page}"));
        }
        Ok(result)
    }
}

/// The outcome of listing `server`'s skills, and how many pages it served.
fn list_pages(server: Pages) -> (Result<usize, SkillError>, usize) {
    let served = Arc::clone(&server.served);
    let (provider, _kept) = hosted(server);
    let listed = provider.list().map(|skills| skills.len());
    (listed, served.load(Ordering::SeqCst))
}

fn pages(pages: usize, per_page: usize) -> Pages {
    Pages {
        pages,
        per_page,
        served: Arc::new(AtomicUsize::new(0)),
    }
}

/// Issue 38, item 9: 150 pages of 1,000 small entries pass
/// `MAX_LISTED_SKILLS` (100,000) on page 101; the listing is refused there,
/// with an error naming the bound, and no page after it is asked for (the
/// byte bound is held by `a_listing_past_its_byte_bound_is_refused_within_bounded_memory`
/// in `cli/tests/cli_mcp_consume.rs`, through a real server process).
#[test]
fn a_listing_past_its_entry_bound_is_refused_where_it_passes_it() {
    assert_eq!(MAX_LISTED_SKILLS, 100_000);
    assert_eq!(
        list_pages(pages(150, 1000)),
        (
            Err(SkillError::Provider {
                provider: "host".to_owned(),
                reason: "MCP server `host`: skills/list lists more than 100000 skills, the bound on one listing; none of them are used".to_owned(),
            }),
            101
        )
    );
}
