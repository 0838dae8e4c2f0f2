//! The prompt as one text, the layout `bcode-prompt render` prints and
//! golden files hold: the system text, then the divider and the
//! request-only context.

use bcode_prompt_pipeline::AssembledPrompt;

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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn every_part_ends_with_a_newline_and_the_divider_comes_only_with_a_request() {
        for (system, request, expected) in [
            ("system", "", "system\n".to_owned()),
            ("system\n", "", "system\n".to_owned()),
            (
                "system",
                "request",
                format!("system\n\n{DIVIDER}\n\nrequest\n"),
            ),
            (
                "system\n",
                "request\n",
                format!("system\n\n{DIVIDER}\n\nrequest\n"),
            ),
            ("", "", "\n".to_owned()),
        ] {
            let text: String = prompt_parts(system, request).collect();
            assert_eq!(text, expected, "{system:?} {request:?}");
        }
    }
}
