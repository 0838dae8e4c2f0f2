//! The small request-only stages of the machine facts: execution
//! environment, hosting signals, locale, runtime mode and config profile,
//! each bounded to [`SMALL_SECTION_LIMIT`], and the helper they (and the
//! datetime and git stages) share.

use bcode_text::Limit;
use minijinja::{Value, context};

use bcode_prompt_config::BcodeConfig;
use bcode_prompt_pipeline::{Section, SectionKind, Stage, StageContext, StageError, StageSpec};

use crate::environment::ConfigProfile;
use crate::gathered::{Gathered, need};

/// The bound on each of these small sections. Their templates produce far
/// less; the bound only matters for odd operator overrides or OS strings.
pub const SMALL_SECTION_LIMIT: Limit = Limit::Chars(600);

/// Renders `template`, bounds the result with the shared helper and wraps it
/// in a section with its template and any cut recorded.
pub(crate) fn small_section(
    cx: &StageContext<'_, Gathered>,
    kind: SectionKind,
    template: &str,
    ctx: Value,
) -> Result<Section, StageError> {
    let (text, usage) = cx.render(template, ctx)?;
    let bounded = cx.bound(&text, Some(SMALL_SECTION_LIMIT), None)?;
    Ok(Section::new(kind.name(), bounded.text.clone())
        .with_template(usage)
        .with_bounded(&bounded))
}

/// Declares a unit stage struct with the common request-only shape.
macro_rules! request_stage {
    ($(#[$doc:meta])* $name:ident, $kind:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $name;

        impl Stage<Gathered> for $name {
            fn spec(&self) -> StageSpec {
                $kind.spec()
            }
            fn limit(&self, _config: &BcodeConfig) -> Option<Limit> {
                Some(SMALL_SECTION_LIMIT)
            }
            fn render(&self, cx: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
                Ok(vec![small_section(cx, $kind, $kind.template(), self.context(cx)?)?])
            }
        }
    };
}

request_stage!(
    /// `execution_environment`: OS family and version, architecture, shell name.
    ExecutionEnvironmentStage,
    SectionKind::ExecutionEnvironment
);

impl ExecutionEnvironmentStage {
    fn context(&self, cx: &StageContext<'_, Gathered>) -> Result<Value, StageError> {
        let facts = need(&cx.inputs.execution, "the execution environment")?;
        Ok(context! {
            os_family => &facts.os.family,
            os_version => &facts.os.version,
            arch => &facts.os.arch,
            shell => &facts.shell,
        })
    }
}

request_stage!(
    /// `hosting_environment`: CI, container and SSH presence signals.
    HostingEnvironmentStage,
    SectionKind::HostingEnvironment
);

impl HostingEnvironmentStage {
    fn context(&self, cx: &StageContext<'_, Gathered>) -> Result<Value, StageError> {
        let signals = need(&cx.inputs.hosting, "the hosting signals")?;
        Ok(context! { ci => signals.ci, container => signals.container, ssh => signals.ssh })
    }
}

request_stage!(
    /// `locale`: the locale the user's tools run with.
    LocaleStage,
    SectionKind::Locale
);

impl LocaleStage {
    fn context(&self, cx: &StageContext<'_, Gathered>) -> Result<Value, StageError> {
        let facts = need(&cx.inputs.locale, "the locale")?;
        Ok(context! { locale => facts.locale.as_ref().map(|(v, _)| v.clone()) })
    }
}

request_stage!(
    /// `runtime_mode`: interactive session, scripted session or one-shot render.
    RuntimeModeStage,
    SectionKind::RuntimeMode
);

impl RuntimeModeStage {
    fn context(&self, cx: &StageContext<'_, Gathered>) -> Result<Value, StageError> {
        let mode = need(&cx.inputs.runtime_mode, "the runtime mode")?;
        Ok(context! { mode => mode.key() })
    }
}

request_stage!(
    /// `config_profile`: the active profile, or that none is active.
    ConfigProfileStage,
    SectionKind::ConfigProfile
);

impl ConfigProfileStage {
    fn context(&self, cx: &StageContext<'_, Gathered>) -> Result<Value, StageError> {
        let ConfigProfile(profile) = need(&cx.inputs.config_profile, "the config profile")?;
        Ok(context! { profile => profile })
    }
}
