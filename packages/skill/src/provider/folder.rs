//! [`FolderProvider`]: a registry served through `bcode.skill/v1`, so a
//! host can offer folder skills on the same path as plugin ones. Above both
//! the registry and the provider interface, which therefore need not know
//! each other.

use bcode_skill_models::{
    Diagnostic, InvokeSkillRequest, InvokeSkillResponse, SkillContextRequest, SkillError, SkillId,
    SkillManifest,
};

use crate::discover::registry::SkillRegistry;
use crate::provider::{ProvidedSkill, SkillHost, SkillProvider};

/// The registry seen through `bcode.skill/v1`, so a host can serve folder
/// skills on the same path as plugin ones. It lists whatever the wrapped
/// registry holds; it is meant to be served to clients, not registered as a
/// provider of another registry (its skills would then rank as bundled).
#[derive(Clone, Debug)]
pub struct FolderProvider {
    registry: SkillRegistry,
}

impl FolderProvider {
    /// Serves the skills of `registry` (already discovered from folders)
    /// through the provider interface.
    pub fn new(registry: SkillRegistry) -> Self {
        FolderProvider { registry }
    }

    /// The wrapped registry, as given to [`FolderProvider::new`].
    pub fn registry(&self) -> &SkillRegistry {
        &self.registry
    }
}

impl SkillProvider for FolderProvider {
    fn name(&self) -> &str {
        "folder"
    }

    fn list(&self) -> Result<Vec<ProvidedSkill>, SkillError> {
        // Folder bodies are sized only when read, and listing must not read them.
        Ok(self
            .registry
            .skills()
            .map(|s| ProvidedSkill {
                manifest: s.manifest.clone(),
                body_bytes: None,
            })
            .collect())
    }

    fn describe(&self, id: &SkillId) -> Result<(SkillManifest, Vec<Diagnostic>), SkillError> {
        self.registry.describe(id.as_str())
    }

    fn context(&self, request: &SkillContextRequest) -> Result<String, SkillError> {
        let skill = self.registry.lookup(request.id.as_str())?;
        self.registry.body(skill)
    }

    fn invoke(
        &self,
        request: &InvokeSkillRequest,
        host: &dyn SkillHost,
    ) -> Result<InvokeSkillResponse, SkillError> {
        self.registry.invoke(request, host)
    }
}
