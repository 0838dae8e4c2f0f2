//! The prompt as one text, the layout `bcode-prompt render` prints and
//! golden files hold: the system text, then the divider and the
//! request-only context.

use bcode_prompt_pipeline::assembled::AssembledPrompt;

/// The line between the cacheable system text and the request-only context
/// in [`prompt_text`] (and in `bcode-prompt render`'s output).
pub const DIVIDER: &str = "===== request-only context (sent with this request, not part of the cached system prompt) =====";

/// The prompt as one text: the system text, then, when there is one, the
/// divider and the request-only context; every part ends with a newline.
pub fn prompt_text(prompt: &AssembledPrompt) -> String {
    prompt_parts(&prompt.system, &prompt.request_context).collect()
}

/// [`prompt_text`] written to `out` part by part, without a copy of the
/// prompt (whose skill catalog alone can be tens of megabytes).
pub fn write_prompt_text(
    out: &mut dyn std::io::Write,
    prompt: &AssembledPrompt,
) -> std::io::Result<()> {
    prompt_parts(&prompt.system, &prompt.request_context)
        .try_for_each(|part| out.write_all(part.as_bytes()))
}

/// The pieces of [`prompt_text`], in order.
fn prompt_parts<'a>(system: &'a str, request: &'a str) -> impl Iterator<Item = &'a str> {
    let newline = |text: &str| if text.ends_with('\n') { "" } else { "\n" };
    let system = [system, newline(system)];
    let request = (!request.is_empty()).then(|| ["\n", DIVIDER, "\n\n", request, newline(request)]);
    system.into_iter().chain(request.into_iter().flatten())
}
