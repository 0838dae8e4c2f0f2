//! `McpProvider` over a session the host already holds (a server in the
//! same process, on the host's own runtime): its skills join a registry as
//! `host:<name>` from `mcp:host`, the body is read on activation only, and
//! a server whose file contradicts its listing's front matter is refused
//! with a message naming the field.

#![cfg(feature = "client")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bcode_skill::{Discovery, DiscoveryOptions, SkillProvider};
use bcode_skill_mcp::McpProvider;
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
fn hosted(server: OneSkill) -> (McpProvider, Box<dyn std::any::Any>) {
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
    let provider = McpProvider::from_peer("host", peer, Duration::from_secs(10), None);
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
