//! The small request-only sections about where and how Bcode runs:
//! `execution_environment`, `hosting_environment`, `locale`, `runtime_mode`
//! and `config_profile`, plus the pure rules that turn an injected
//! environment snapshot into the few facts they may show.
//!
//! Privacy rule (spec, "System prompt configuration"): these sections carry
//! no usernames, hostnames, addresses, home paths or environment values,
//! except the locale and the shell's executable name, and both pass an
//! allowlist of characters first. Hosting signals are presence checks only:
//! the value of `SSH_CONNECTION` is never read into a fact.

use std::collections::BTreeMap;
use std::path::Path;

/// Operating system and architecture, as probed (or faked in tests).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OsFacts {
    /// e.g. `linux`, `macos`, `windows` (`std::env::consts::OS`).
    pub family: String,
    /// e.g. `Linux (Ubuntu 24.04)`; `None` when the OS would not say.
    pub version: Option<String>,
    /// e.g. `x86_64`, `aarch64`.
    pub arch: String,
}

/// What `execution_environment` shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutionFacts {
    /// OS family, version and architecture from the [`crate::probe::Machine`].
    pub os: OsFacts,
    /// The basename of `$SHELL`, when it looks like an executable name.
    pub shell: Option<String>,
}

/// Coarse hosting signals: presence only, never values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostingSignals {
    /// One of [`CI_VARIABLES`] is set to something other than empty,
    /// `false` or `0`.
    pub ci: bool,
    /// A container marker file exists or one of [`CONTAINER_VARIABLES`] is
    /// set.
    pub container: bool,
    /// One of [`SSH_VARIABLES`] is set.
    pub ssh: bool,
}

/// Where the locale came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LocaleSource {
    /// The `LC_ALL` variable, which overrides every other source.
    LcAll,
    /// The `LC_MESSAGES` variable.
    LcMessages,
    /// The `LANG` variable.
    Lang,
    /// The operating system's setting (sys-locale), used when no variable
    /// holds a usable value.
    System,
    /// Pinned in advance (`[facts] locale`), not read from this machine.
    Pinned,
}

/// What `locale` shows; `None` when nothing usable was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocaleFacts {
    /// The allowlisted locale name (e.g. `en_US.UTF-8`) and where it came
    /// from.
    pub locale: Option<(String, LocaleSource)>,
}

/// How Bcode is running this request. The default is an interactive
/// session, the way Bcode normally runs; `render` should pass `Render`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuntimeMode {
    /// A person is in the loop and reads replies as they come.
    #[default]
    Interactive,
    /// A session driven by piped commands or a script.
    Scripted,
    /// A one-shot `render`: the prompt is assembled and printed, not sent.
    Render,
}

impl RuntimeMode {
    pub(crate) fn key(self) -> &'static str {
        match self {
            RuntimeMode::Interactive => "interactive",
            RuntimeMode::Scripted => "scripted",
            RuntimeMode::Render => "render",
        }
    }
}

/// The active configuration profile, if any (`config_profile`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigProfile(pub Option<String>);

/// Variables whose presence means "running in CI".
pub const CI_VARIABLES: &[&str] = &[
    "CI",
    "GITHUB_ACTIONS",
    "GITLAB_CI",
    "BUILDKITE",
    "CIRCLECI",
    "TRAVIS",
    "JENKINS_URL",
    "TF_BUILD",
    "TEAMCITY_VERSION",
    "BITBUCKET_BUILD_NUMBER",
    "APPVEYOR",
    "CODEBUILD_BUILD_ID",
    "DRONE",
];

/// Variables whose presence means "inside a container" (systemd/podman set
/// `container`; Kubernetes sets the service host in every pod).
pub const CONTAINER_VARIABLES: &[&str] = &["container", "KUBERNETES_SERVICE_HOST"];

/// Variables whose presence means "over SSH".
pub const SSH_VARIABLES: &[&str] = &["SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY"];

fn present(env: &BTreeMap<String, String>, names: &[&str]) -> bool {
    names.iter().any(|name| {
        env.get(*name).is_some_and(|value| {
            // `CI=false` is how some tools say "not CI"; the value is only
            // compared here, never kept.
            let value = value.trim();
            !value.is_empty() && value != "false" && value != "0"
        })
    })
}

/// The hosting signals of `env`; `container_marker` says whether a container
/// marker file (`/.dockerenv`, `/run/.containerenv`) exists.
pub fn hosting_signals(env: &BTreeMap<String, String>, container_marker: bool) -> HostingSignals {
    HostingSignals {
        ci: present(env, CI_VARIABLES),
        container: container_marker || present(env, CONTAINER_VARIABLES),
        ssh: present(env, SSH_VARIABLES),
    }
}

/// Keeps `value` only if it is short and made of `allowed` characters, so a
/// surprising value can never carry a path, an address or a secret.
fn allowlisted(value: &str, max: usize, allowed: fn(char) -> bool) -> Option<String> {
    let ok = !value.is_empty() && value.chars().count() <= max && value.chars().all(allowed);
    ok.then(|| value.to_owned())
}

/// The executable name of `$SHELL` (its basename), never the path.
pub fn shell_name(env: &BTreeMap<String, String>) -> Option<String> {
    let shell = env.get("SHELL")?;
    let name = Path::new(shell.trim()).file_name()?.to_str()?;
    allowlisted(name, 32, |c| {
        c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+')
    })
}

fn locale_value(value: &str) -> Option<String> {
    allowlisted(value.trim(), 64, |c| {
        c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '@')
    })
}

/// The locale from `LC_ALL`, else `LC_MESSAGES`, else `LANG`, else `system`
/// (sys-locale), following POSIX precedence for messages.
pub fn locale(
    env: &BTreeMap<String, String>,
    system: impl FnOnce() -> Option<String>,
) -> LocaleFacts {
    let from_env = [
        ("LC_ALL", LocaleSource::LcAll),
        ("LC_MESSAGES", LocaleSource::LcMessages),
        ("LANG", LocaleSource::Lang),
    ]
    .into_iter()
    .find_map(|(name, source)| {
        env.get(name)
            .and_then(|v| locale_value(v))
            .map(|v| (v, source))
    });
    let locale = from_env.or_else(|| {
        system()
            .as_deref()
            .and_then(locale_value)
            .map(|v| (v, LocaleSource::System))
    });
    LocaleFacts { locale }
}

#[cfg(test)]
mod tests {
    use super::*;

    use bcode_test_support::env_map as env;

    #[test]
    fn hosting_is_presence_only() {
        assert_eq!(hosting_signals(&env(&[]), false), HostingSignals::default());
        assert_eq!(
            hosting_signals(
                &env(&[("GITHUB_ACTIONS", "true"), ("SSH_TTY", "/dev/pts/1")]),
                true
            ),
            HostingSignals {
                ci: true,
                container: true,
                ssh: true
            }
        );
        assert_eq!(
            hosting_signals(&env(&[("CI", "false"), ("container", "podman")]), false),
            HostingSignals {
                ci: false,
                container: true,
                ssh: false
            }
        );
    }

    #[test]
    fn shell_is_basename_only() {
        assert_eq!(
            shell_name(&env(&[("SHELL", "/home/alice/bin/zsh")])),
            Some("zsh".to_owned())
        );
        assert_eq!(shell_name(&env(&[("SHELL", "/bin/my shell")])), None);
        assert_eq!(shell_name(&env(&[])), None);
    }

    #[test]
    fn locale_precedence_and_allowlist() {
        let sys = || Some("fr_FR".to_owned());
        let facts = |pairs: &[(&str, &str)]| locale(&env(pairs), sys).locale;
        assert_eq!(
            facts(&[("LANG", "en_US.UTF-8"), ("LC_ALL", "de_DE.UTF-8")]),
            Some(("de_DE.UTF-8".to_owned(), LocaleSource::LcAll))
        );
        assert_eq!(
            facts(&[("LANG", "en_US.UTF-8"), ("LC_MESSAGES", "C")]),
            Some(("C".to_owned(), LocaleSource::LcMessages))
        );
        assert_eq!(
            facts(&[("LANG", "/etc/evil path")]),
            Some(("fr_FR".to_owned(), LocaleSource::System))
        );
        assert_eq!(locale(&env(&[]), || None).locale, None);
    }
}
