//! Parsing the skill slash commands: `/skills [query]`, `/skill <id> [args...]`,
//! `/skill active`, `/skill off <id>`. Pure text in, a command or an error
//! with a hint out; whether an id exists is the session's business.

use bcode_text::closest;

/// A parsed skill command.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SlashCommand {
    /// `/skills`: list available skills.
    List,
    /// `/skills <query>`: the skills that best fit the query, best first.
    Search {
        /// The words after `/skills`, trimmed.
        query: String,
    },
    /// `/skill <id> [args...]`: activate a skill with arguments.
    Activate {
        /// The id as typed; not yet checked against the registry.
        id: String,
        /// The words after the id, split as a shell splits them
        /// ([`crate::context::split_arguments`]; an unclosed quote splits on
        /// whitespace alone).
        arguments: Vec<String>,
        /// The text after the id as typed, trimmed: what `$ARGUMENTS`
        /// stands for. `None` means the words joined by spaces.
        raw_arguments: Option<String>,
    },
    /// `/skill active`: list active skills.
    Active,
    /// `/skill off <id>`: deactivate a skill.
    Off {
        /// The id as typed; not yet checked against the active skills.
        id: String,
    },
}

/// A line that looks like a command but is not a valid one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}{}", hint.as_ref().map(|h| format!(" ({h})")).unwrap_or_default())]
pub struct CommandError {
    /// What is wrong with the line (for example "`/skill` needs a skill id").
    pub message: String,
    /// How to write it instead: the usage line or a "did you mean".
    pub hint: Option<String>,
}

impl CommandError {
    fn new(message: impl Into<String>, hint: impl Into<String>) -> Self {
        CommandError {
            message: message.into(),
            hint: Some(hint.into()),
        }
    }
}

const USAGE: &str = "usage: /skills | /skill <id> [args...] | /skill active | /skill off <id>";

/// Parses `line`. `Ok(None)` when it is not a skill command: ordinary prompt
/// text, or another slash command listed in `other_commands` (which the
/// caller handles). Unknown slash commands are errors with a near-miss hint
/// drawn from the skill commands and `other_commands`.
pub fn parse_command(
    line: &str,
    other_commands: &[&str],
) -> Result<Option<SlashCommand>, CommandError> {
    let line = line.trim();
    let Some(rest) = line.strip_prefix('/') else {
        return Ok(None);
    };
    // The command and its subcommand are plain words; only the arguments
    // of `/skill <id>` are split with quotes, from the text as typed.
    let (head, tail) = first_word(rest);
    // The whole usage, the caller's commands included, for the two errors
    // that say nothing about which command was meant.
    let usage = if other_commands.is_empty() {
        USAGE.to_owned()
    } else {
        format!("{USAGE} | {}", other_commands.join(" | "))
    };
    match head {
        "" => Err(CommandError::new("empty command", usage)),
        "skills" if tail.is_empty() => Ok(Some(SlashCommand::List)),
        "skills" => Ok(Some(SlashCommand::Search {
            query: tail.to_owned(),
        })),
        "skill" => parse_skill(tail).map(Some),
        other if other_commands.contains(&format!("/{other}").as_str()) => Ok(None),
        other => {
            let known: Vec<String> = ["/skills", "/skill"]
                .iter()
                .map(|s| (*s).to_owned())
                .chain(other_commands.iter().map(|s| (*s).to_owned()))
                .collect();
            let typed = format!("/{other}");
            let hint = match closest(&typed, known.iter().map(String::as_str)) {
                Some(near) => format!("did you mean `{near}`? {usage}"),
                None => usage,
            };
            Err(CommandError::new(
                format!("unknown command `{typed}`"),
                hint,
            ))
        }
    }
}

fn parse_skill(text: &str) -> Result<SlashCommand, CommandError> {
    let (first, rest) = first_word(text);
    let (second, more) = first_word(rest);
    match (first, second, more) {
        ("", ..) => Err(CommandError::new("`/skill` needs a skill id", USAGE)),
        ("active", "", _) => Ok(SlashCommand::Active),
        ("active", ..) => Err(CommandError::new(
            "`/skill active` takes no arguments",
            USAGE,
        )),
        ("off", "", _) => Err(CommandError::new(
            "`/skill off` needs the id of an active skill",
            "see /skill active",
        )),
        ("off", id, "") => Ok(SlashCommand::Off { id: id.to_owned() }),
        ("off", ..) => Err(CommandError::new(
            "`/skill off` takes one skill id",
            "deactivate skills one at a time",
        )),
        (id, ..) => Ok(SlashCommand::Activate {
            id: id.to_owned(),
            arguments: crate::context::arguments::split_arguments(rest).words,
            raw_arguments: (!rest.is_empty()).then(|| rest.to_owned()),
        }),
    }
}

/// The first whitespace-separated word of `text` and the rest, both
/// trimmed.
fn first_word(text: &str) -> (&str, &str) {
    let text = text.trim();
    match text.split_once(char::is_whitespace) {
        Some((word, rest)) => (word, rest.trim()),
        None => (text, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(line: &str, expected: Result<Option<SlashCommand>, &str>) {
        let got = parse_command(line, &["/render", "/quit"]).map_err(|e| e.to_string());
        assert_eq!(got, expected.map_err(str::to_owned), "{line:?}");
    }

    #[test]
    fn commands_and_errors() {
        use SlashCommand::*;
        check("fix the bug", Ok(None));
        check("  /skills  ", Ok(Some(List)));
        check(
            "/skill rust-debugging",
            Ok(Some(Activate {
                id: "rust-debugging".into(),
                arguments: vec![],
                raw_arguments: None,
            })),
        );
        check(
            "/skill rust-debugging diagnose \"cargo test\" failure",
            Ok(Some(Activate {
                id: "rust-debugging".into(),
                arguments: vec!["diagnose".into(), "cargo test".into(), "failure".into()],
                raw_arguments: Some("diagnose \"cargo test\" failure".into()),
            })),
        );
        check("/skill active", Ok(Some(Active)));
        check(
            "/skill off rust-debugging",
            Ok(Some(Off {
                id: "rust-debugging".into(),
            })),
        );
        check("/render", Ok(None));
        check(
            "/skill",
            Err(
                "`/skill` needs a skill id (usage: /skills | /skill <id> [args...] | /skill active | /skill off <id>)",
            ),
        );
        check(
            "/skill off",
            Err("`/skill off` needs the id of an active skill (see /skill active)"),
        );
        check(
            "/skill off a b",
            Err("`/skill off` takes one skill id (deactivate skills one at a time)"),
        );
        check(
            "/skill active now",
            Err(
                "`/skill active` takes no arguments (usage: /skills | /skill <id> [args...] | /skill active | /skill off <id>)",
            ),
        );
        check(
            "/skills  fix the rust build ",
            Ok(Some(Search {
                query: "fix the rust build".into(),
            })),
        );
        check(
            "/skil rust",
            Err(
                "unknown command `/skil` (did you mean `/skill`? usage: /skills | /skill <id> [args...] | /skill active | /skill off <id> | /render | /quit)",
            ),
        );
        check(
            "/rendr",
            Err(
                "unknown command `/rendr` (did you mean `/render`? usage: /skills | /skill <id> [args...] | /skill active | /skill off <id> | /render | /quit)",
            ),
        );
        check(
            "/",
            Err(
                "empty command (usage: /skills | /skill <id> [args...] | /skill active | /skill off <id> | /render | /quit)",
            ),
        );
        // Without the caller's commands, the skill commands alone.
        assert_eq!(
            parse_command("/bogus", &[]).map_err(|e| e.to_string()),
            Err(
                "unknown command `/bogus` (usage: /skills | /skill <id> [args...] | /skill active | /skill off <id>)"
                    .to_owned()
            )
        );
        // An unclosed quote is text, not an error: the words are split on
        // whitespace alone and `$ARGUMENTS` is the text as typed.
        check(
            "/skill x say \"open  it's",
            Ok(Some(Activate {
                id: "x".into(),
                arguments: vec!["say".into(), "\"open".into(), "it's".into()],
                raw_arguments: Some("say \"open  it's".into()),
            })),
        );
    }
}
