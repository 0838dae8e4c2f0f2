//! The `current_datetime` stage: the clock reading of the turn in its zone
//! (request-only; it changes every request).

use minijinja::context;

use bcode_prompt_pipeline::{Section, SectionKind, Stage, StageContext, StageError, StageSpec};

use crate::datetime::DATETIME_TEMPLATE;
use crate::gathered::{Gathered, need};
use crate::stages::environment::small_section;

/// `current_datetime`: changes every request, so it is request-only context.
#[derive(Clone, Copy, Debug, Default)]
pub struct DateTimeStage;

impl Stage<Gathered> for DateTimeStage {
    fn spec(&self) -> StageSpec {
        SectionKind::CurrentDatetime.spec()
    }

    fn render(&self, cx: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
        let input = need(&cx.inputs.datetime, "the clock reading")?;
        let local = input.now.with_timezone(&input.zone);
        let ctx = context! {
            date => local.format("%Y-%m-%d").to_string(),
            time => local.format("%H:%M:%S").to_string(),
            weekday => local.format("%A").to_string(),
            abbreviation => local.format("%Z").to_string(),
            offset => local.format("%:z").to_string(),
            zone => input.zone.name(),
        };
        let section = small_section(cx, SectionKind::CurrentDatetime, DATETIME_TEMPLATE, ctx)?
            .with_note(input.zone_source.describe());
        Ok(vec![section])
    }
}
