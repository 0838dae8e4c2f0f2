//! The SDK service `bcode-prompt mcp` runs: the SDK's own dispatch for a
//! [`SkillServer`] (its `ServerHandler`), except one step. A `skills/list`
//! page is answered without the SDK checking every entry of the page
//! again: each entry was checked with the SDK's own `Skill::validate` once,
//! when its files were read (a skill that fails is left out, and
//! `skills/get` names the reason), and a snapshot holds each id once, so no
//! URI can come twice. Repeated at every listing, that check (three NFKC
//! passes over each name) was a fifth of what a page cost at 10,000 skills.
//! The SDK's other check there, that the server declares the skills
//! extension and `resources`, always holds: the server's `get_info`
//! declares both. This holds in a session opened with `initialize`, and for
//! a request of 2026-07-28 carrying its own protocol version (a session
//! opened with `server/discover`, as this crate's consumer opens one): the
//! SDK's checks of that request's `_meta` (a version the server speaks,
//! every key the version requires) are made here first, and the result is
//! finished as the SDK finishes it. Every other request, and a
//! `skills/list` that fits neither, goes through the SDK unchanged.

use std::borrow::Cow;

use rmcp::model::{
    ClientNotification, ClientRequest, ErrorCode, ProtocolVersion, ServerConfig, ServerResult,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, Service};

use crate::server::SkillServer;

/// A [`SkillServer`] as the SDK service it runs as (see the module
/// documentation): hand it to `rmcp::ServiceExt::serve` with any transport.
#[derive(Clone, Debug)]
pub struct SkillService {
    server: SkillServer,
}

impl SkillService {
    /// The service of `server`.
    pub fn new(server: SkillServer) -> SkillService {
        SkillService { server }
    }

    /// The server it answers for.
    pub fn server(&self) -> &SkillServer {
        &self.server
    }
}

/// Whether the request comes in a session opened with `initialize` and
/// carries no protocol version of its own: then the SDK's dispatch checks
/// nothing before the handler, and after it only drops `resultType`.
fn initialized_session(context: &RequestContext<RoleServer>) -> bool {
    context.meta.protocol_version().is_none()
        && context
            .peer
            .peer_info()
            .is_some_and(|info| info.protocol_version.has_initialize())
}

/// Whether the request names protocol 2026-07-28 or later in its own
/// `_meta`, one the server speaks, with every key that version requires:
/// then the SDK's dispatch checks nothing more before the handler, and
/// after it fills the caching hints.
fn self_contained_request(
    context: &RequestContext<RoleServer>,
    supported: &[ProtocolVersion],
) -> bool {
    context.meta.protocol_version().is_some_and(|version| {
        version.as_str() >= ProtocolVersion::V_2026_07_28.as_str()
            && supported.contains(&version)
            && context
                .meta
                .missing_required_keys(&ProtocolVersion::V_2026_07_28)
                .is_empty()
    })
}

impl Service<RoleServer> for SkillService {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, McpError> {
        match request {
            ClientRequest::ListSkillsRequest(request) if initialized_session(&context) => {
                let page = self.server.list_skills(request.params, context).await?;
                let mut result = ServerResult::ListSkillsResult(page);
                // What the SDK does to every result for a peer that opened
                // with `initialize`.
                result.strip_result_type_for_legacy_peer();
                result.strip_non_object_output_for_legacy_peer();
                Ok(result)
            }
            ClientRequest::ListSkillsRequest(request)
                if self_contained_request(
                    &context,
                    &ServerHandler::supported_protocol_versions(&self.server),
                ) =>
            {
                // What the SDK does to every result, and error, of a
                // request of 2026-07-28.
                match self.server.list_skills(request.params, context).await {
                    Ok(page) => {
                        let mut result = ServerResult::ListSkillsResult(page);
                        result.fill_missing_cache_hints();
                        Ok(result)
                    }
                    Err(mut error) => {
                        if error.code == ErrorCode::RESOURCE_NOT_FOUND {
                            error.code = ErrorCode::INVALID_PARAMS;
                        }
                        Err(error)
                    }
                }
            }
            request => Service::handle_request(&self.server, request, context).await,
        }
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), McpError> {
        Service::handle_notification(&self.server, notification, context).await
    }

    fn get_info(&self) -> ServerConfig {
        ServerHandler::get_info(&self.server)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        ServerHandler::supported_protocol_versions(&self.server)
    }
}
