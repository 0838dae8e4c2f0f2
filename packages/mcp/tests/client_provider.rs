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

use bcode_prompt_config::SkillsConfig;
use bcode_skill::{Discovery, DiscoveryOptions, SkillProvider};
use bcode_skill_mcp::{MAX_LISTED_SKILLS, McpProvider};
use bcode_skill_models::SkillError;
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

const FORM: &str = "Fill the form.\n";

/// A server of `pdf` (listed, with `references/FORM.md`) and `hidden`
/// (served by `skills/get` only), whose listing says `ttl_ms`; it counts
/// the listings and records each URI read.
#[derive(Clone)]
struct Folder {
    ttl_ms: Option<u64>,
    listings: Arc<AtomicUsize>,
    read: Arc<Mutex<Vec<String>>>,
}

fn pdf_entry() -> Skill {
    let uri = "skill://pdf/SKILL.md";
    Skill::new(
        uri,
        SkillFrontmatter::new("pdf", "Reads PDFs."),
        SkillResources::Files(vec![
            SkillResource::from_bytes(uri, BODY.as_bytes()),
            SkillResource::from_bytes("skill://pdf/references/FORM.md", FORM.as_bytes()),
        ]),
    )
}

const HIDDEN: &str = "---\nname: hidden\ndescription: Not listed.\n---\nThe hidden body.\n";

impl ServerHandler for Folder {
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
        self.listings.fetch_add(1, Ordering::SeqCst);
        let mut result = ListSkillsResult::with_all_items(vec![pdf_entry()]);
        result.ttl_ms = self.ttl_ms;
        Ok(result)
    }

    async fn get_skill(
        &self,
        request: rmcp::model::GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetSkillResult, ErrorData> {
        // `loose` lists its files as "dynamic", which no digest vouches for.
        let (uri, name, files) = match request.uri.as_str() {
            uri @ "skill://hidden/SKILL.md" => (
                uri,
                "hidden",
                SkillResources::Files(vec![SkillResource::from_bytes(uri, HIDDEN.as_bytes())]),
            ),
            uri @ "skill://loose/SKILL.md" => (uri, "loose", SkillResources::Dynamic),
            _ => return Err(ErrorData::invalid_params("unknown skill", None)),
        };
        Ok(rmcp::model::GetSkillResult::new(Skill::new(
            uri,
            SkillFrontmatter::new(name, "Not listed."),
            files,
        )))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.read.lock().unwrap().push(request.uri.clone());
        let text = match request.uri.as_str() {
            "skill://pdf/SKILL.md" => BODY,
            "skill://pdf/references/FORM.md" => FORM,
            "skill://hidden/SKILL.md" => HIDDEN,
            _ => return Err(ErrorData::invalid_params("unknown resource", None)),
        };
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri)]).into())
    }
}

fn folder(ttl_ms: Option<u64>) -> Folder {
    Folder {
        ttl_ms,
        listings: Arc::new(AtomicUsize::new(0)),
        read: Arc::new(Mutex::new(Vec::new())),
    }
}

/// Issue 40, item 3: a listing is used again, unasked, while its `ttlMs`
/// says it is fresh; without one (or with 0) each listing asks again.
#[test]
fn a_listing_is_asked_again_only_when_its_ttl_has_passed() {
    for (ttl_ms, asked) in [(Some(3_600_000), 1), (Some(0), 2), (None, 2)] {
        let server = folder(ttl_ms);
        let listings = Arc::clone(&server.listings);
        let (provider, _kept) = hosted(server);
        let first = provider.list().unwrap();
        let second = provider.list().unwrap();
        assert_eq!(first, second);
        assert_eq!(listings.load(Ordering::SeqCst), asked, "{ttl_ms:?}");
    }
}

/// Issue 40, item 5: a supporting file is read through the consumer only
/// when asked for, verified against the entry; a path that could climb or
/// a file the entry does not list is refused without asking the server;
/// a skill the listing does not name loads given only its URI.
#[test]
fn supporting_files_are_read_on_demand_and_a_skill_loads_by_its_uri() {
    let server = folder(None);
    let read = Arc::clone(&server.read);
    let (provider, _kept) = hosted(server);
    provider.list().unwrap();
    let pdf = bcode_skill_models::SkillId::namespaced("host", "pdf").unwrap();
    assert_eq!(
        provider.skill_base(&pdf).unwrap(),
        ("host".to_owned(), "skill://pdf/".to_owned())
    );
    assert_eq!(read.lock().unwrap().len(), 0);
    assert_eq!(
        provider.read_file(&pdf, "references/FORM.md").unwrap(),
        FORM.as_bytes()
    );
    let refused = |path: &str| match provider.read_file(&pdf, path) {
        Err(SkillError::Provider { reason, .. }) => reason,
        other => panic!("{path}: {other:?}"),
    };
    assert_eq!(
        refused("../other/SKILL.md"),
        "MCP server `host`: `../other/SKILL.md` is not a path inside the folder of `host:pdf` (`skill://pdf/`)"
    );
    assert_eq!(
        refused("references/OTHER.md"),
        "MCP server `host`: `skill://pdf/references/OTHER.md` is not among the files its listing names for `host:pdf`, so it is not read"
    );
    assert_eq!(*read.lock().unwrap(), ["skill://pdf/references/FORM.md"]);

    let hidden = provider.load_uri("skill://hidden/SKILL.md").unwrap();
    assert_eq!(hidden.to_string(), "host:hidden");
    let body = provider
        .context(&bcode_skill_models::SkillContextRequest {
            id: hidden,
            arguments: Vec::new(),
            raw_arguments: None,
            substitute_arguments: false,
            max_bytes: None,
            preview_max_chars: 2000,
        })
        .unwrap();
    assert_eq!(body, "The hidden body.\n");
    // The SDK words the server's -32602 itself; the consumer names the
    // request and the URI before it.
    // A skill the provider may not admit is refused in the words of its
    // diagnostic, which name the server once.
    let (strict, _also_kept) = hosted(folder(None));
    match strict
        .allow_dynamic(false)
        .load_uri("skill://loose/SKILL.md")
    {
        Err(SkillError::Provider { reason, .. }) => assert_eq!(
            reason,
            "MCP server `host`: its skill `skill://loose/SKILL.md` is left out: it lists its files as \"dynamic\", which no digest vouches for, and its entry says `allow_dynamic = false`"
        ),
        other => panic!("{other:?}"),
    }
    match provider.load_uri("skill://nowhere/SKILL.md") {
        Err(SkillError::Provider { reason, .. }) => assert!(
            reason.starts_with(
                "MCP server `host`: skills/get of `skill://nowhere/SKILL.md` failed: "
            ),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
}
