//! The skill source roots, highest precedence first: this file and
//! `precedence.rs` are the only places that know the order of sources.

use std::path::{Path, PathBuf};

use bcode_skill_models::{SkillSource, SourceEnv, SourceKind};

use bcode_prompt_config::SkillsConfig;

/// One root to search, with the source its skills belong to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceRoot {
    /// The source every skill found under the root belongs to (its kind,
    /// label and ordinal decide precedence).
    pub source: SkillSource,
    /// The path as computed or configured (canonicalised by discovery).
    pub path: PathBuf,
    /// The repository whose files this root holds, when it is one of the
    /// repository's roots or a configured root inside the repository:
    /// everything found under it must then resolve inside that repository
    /// (trusted or not). `None` for the user's own roots, whose symlinked
    /// skill folders may lead anywhere (a Nix store, a dotfiles checkout)
    /// but `/proc`, `/sys` and `/dev`.
    pub repository: Option<PathBuf>,
    /// For a repository's root in a folder above the working folder: that
    /// folder, and whose it must be. The root is searched only when the
    /// user owns (or trusts) both the folder and the root; otherwise it is a
    /// `foreign_owner` warning. `None`: no such check (the working folder's
    /// own roots, the user's, configured and bundled ones).
    pub owner_check: Option<OwnerCheck>,
}

/// Whose a folder above the working folder, and a root in it, must be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerCheck {
    /// The folder above the working folder that holds the root.
    pub folder: PathBuf,
    /// Who counts as the user, and what the user trusts.
    pub owners: bcode_fs::Ownership,
}

/// An entry of `skills.sources.paths`: as written, and resolved against the
/// directory of the file that set it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfiguredRoot {
    /// The path as written in the config file; the source label is
    /// `config:<written>`.
    pub written: String,
    /// The path to search: `written` resolved against the directory of the
    /// config file that set it.
    pub resolved: PathBuf,
}

/// A bundled root shipped with Bcode or a plugin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundledRoot {
    /// The name in the source label `bundled:<name>`.
    pub name: String,
    /// The directory holding the bundled skills.
    pub path: PathBuf,
}

/// Everything that decides the roots.
#[derive(Clone, Copy, Debug)]
pub struct RootsInput<'a> {
    /// The repository root; the repository's roots are in it and in each
    /// folder from it down to `work`.
    pub repo: &'a Path,
    /// The working folder: the repository root, or a folder inside it
    /// (anything else counts as the root).
    pub work: &'a Path,
    /// `HOME` and the XDG variables that locate the two user roots.
    pub env: &'a SourceEnv,
    /// The `[skills]` table: `enabled` and the `include_*` switches.
    pub config: &'a SkillsConfig,
    /// `skills.sources.paths`, resolved, in the order written.
    pub configured: &'a [ConfiguredRoot],
    /// Roots shipped with Bcode or plugins, weakest of all.
    pub bundled: &'a [BundledRoot],
    /// Whose folders above the working folder count: their roots get an
    /// [`OwnerCheck`]. `None`: no check.
    pub owners: Option<&'a bcode_fs::Ownership>,
}

/// The roots to search, highest precedence first, honouring the
/// `include_*` switches. Empty when `skills.enabled = false`.
pub fn source_roots(input: RootsInput<'_>) -> Vec<SourceRoot> {
    let config = input.config;
    if !config.enabled {
        return Vec::new();
    }
    let mut roots = Vec::new();
    let mut push = |kind: SourceKind,
                    label: String,
                    ordinal: usize,
                    path: PathBuf,
                    owner_check: Option<OwnerCheck>| {
        // Repository roots, and configured ones written into the repository:
        // what the repository holds stays confined to it.
        // (`..` applied first: `.bcode/../../elsewhere` is not inside.)
        let inside = kind.is_repository()
            || bcode_text::lexical(&path).starts_with(bcode_text::lexical(input.repo));
        roots.push(SourceRoot {
            repository: inside.then(|| input.repo.to_path_buf()),
            source: SkillSource {
                kind,
                label,
                ordinal,
                root: None,
                provider: None,
            },
            path,
            owner_check,
        });
    };
    // The repository's kinds in the working folder, then in each folder
    // above it up to the root: a nearer folder shadows a farther one.
    let folders = bcode_text::folders_down_to(input.repo, input.work);
    for (distance, folder) in folders.iter().rev().enumerate() {
        let prefix = match folder.strip_prefix(input.repo) {
            Ok(rest) if !rest.as_os_str().is_empty() => {
                format!("{}/", bcode_text::model_path(rest))
            }
            _ => String::new(),
        };
        let kinds = [
            (
                config.include_repo_skills,
                SourceKind::RepoBcode,
                "repo",
                ".bcode/skills",
            ),
            (
                config.include_agents_skills,
                SourceKind::RepoAgents,
                "repo",
                ".agents/skills",
            ),
            (
                config.include_generic_repo_skills,
                SourceKind::RepoGeneric,
                "repo",
                "skills",
            ),
            (
                config.include_compat_claude_skills,
                SourceKind::RepoCompatClaude,
                "repo-compat",
                ".claude/skills",
            ),
        ];
        // A folder above the working folder counts only when it is the
        // user's (see `bcode_fs::Ownership`); the working folder is theirs.
        let owner_check = input
            .owners
            .filter(|_| distance > 0)
            .map(|owners| OwnerCheck {
                folder: folder.clone(),
                owners: owners.clone(),
            });
        for (on, kind, group, below) in kinds {
            if on {
                push(
                    kind,
                    format!("{group}:{prefix}{below}"),
                    distance,
                    folder.join(below),
                    owner_check.clone(),
                );
            }
        }
    }
    if config.include_user_skills {
        if let Some(dir) = input.env.user_config_dir() {
            push(
                SourceKind::UserConfig,
                "user-config:skills".into(),
                0,
                dir.join("skills"),
                None,
            );
        }
        if let (true, Some(home)) = (config.include_agents_skills, &input.env.home) {
            push(
                SourceKind::UserAgents,
                "user:.agents/skills".into(),
                0,
                home.join(".agents").join("skills"),
                None,
            );
        }
        if let Some(dir) = input.env.state_dir() {
            push(
                SourceKind::UserState,
                "user-state:skills".into(),
                0,
                dir.join("skills"),
                None,
            );
        }
    }
    for (ordinal, root) in input.configured.iter().enumerate() {
        push(
            SourceKind::Config,
            format!("config:{}", root.written),
            ordinal,
            root.resolved.clone(),
            None,
        );
    }
    for (ordinal, root) in input.bundled.iter().enumerate() {
        push(
            SourceKind::Bundled,
            format!("bundled:{}", root.name),
            ordinal,
            root.path.clone(),
            None,
        );
    }
    roots
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels_and_paths(config: &SkillsConfig, env: &SourceEnv) -> Vec<(String, String)> {
        let configured = [ConfiguredRoot {
            written: "../team".into(),
            resolved: "/etc/team".into(),
        }];
        let bundled = [BundledRoot {
            name: "core".into(),
            path: "/opt/bcode/skills".into(),
        }];
        source_roots(RootsInput {
            repo: Path::new("/repo"),
            work: Path::new("/repo"),
            env,
            config,
            configured: &configured,
            bundled: &bundled,
            owners: None,
        })
        .into_iter()
        .map(|r| (r.source.label, r.path.display().to_string()))
        .collect()
    }

    #[test]
    fn nine_sources_in_precedence_order() {
        let env = SourceEnv {
            home: Some("/home/u".into()),
            ..SourceEnv::default()
        };
        let pairs: Vec<(&str, &str)> = vec![
            ("repo:.bcode/skills", "/repo/.bcode/skills"),
            ("repo:.agents/skills", "/repo/.agents/skills"),
            ("repo:skills", "/repo/skills"),
            ("repo-compat:.claude/skills", "/repo/.claude/skills"),
            ("user-config:skills", "/home/u/.config/bcode/skills"),
            ("user:.agents/skills", "/home/u/.agents/skills"),
            ("user-state:skills", "/home/u/.local/state/bcode/skills"),
            ("config:../team", "/etc/team"),
            ("bundled:core", "/opt/bcode/skills"),
        ];
        let expected: Vec<(String, String)> = pairs
            .into_iter()
            .map(|(a, b)| (a.into(), b.into()))
            .collect();
        assert_eq!(labels_and_paths(&SkillsConfig::default(), &env), expected);
    }

    #[test]
    fn xdg_and_state_dir_variables_win_over_home() {
        let env = SourceEnv::from_vars(&|name| match name {
            "HOME" => Some("/home/u".into()),
            "XDG_CONFIG_HOME" => Some("/xdg/config".into()),
            "XDG_STATE_HOME" => Some("relative/ignored".into()),
            "BCODE_STATE_DIR" => Some("/state".into()),
            _ => None,
        });
        let got = labels_and_paths(&SkillsConfig::default(), &env);
        assert_eq!(got[4].1, "/xdg/config/bcode/skills");
        assert_eq!(got[5].1, "/home/u/.agents/skills");
        assert_eq!(got[6].1, "/state/skills");
        let env = SourceEnv::from_vars(&|name| match name {
            "HOME" => Some("/home/u".into()),
            "XDG_STATE_HOME" => Some("/xdg/state".into()),
            "XDG_CONFIG_HOME" => Some(String::new()),
            _ => None,
        });
        let got = labels_and_paths(&SkillsConfig::default(), &env);
        assert_eq!(got[4].1, "/home/u/.config/bcode/skills");
        assert_eq!(got[6].1, "/xdg/state/bcode/skills");
    }

    #[test]
    fn repository_roots_and_configured_roots_inside_it_are_confined_to_it() {
        let env = SourceEnv {
            home: Some("/home/u".into()),
            ..SourceEnv::default()
        };
        let configured = [
            ConfiguredRoot {
                written: "vendor/skills".into(),
                resolved: "/repo/vendor/skills".into(),
            },
            ConfiguredRoot {
                written: "~/team".into(),
                resolved: "/home/u/team".into(),
            },
            // Written in the repository's config, but `..` leads out of it
            // (a trusted repository's reach outside, not a repository root).
            ConfiguredRoot {
                written: "../../elsewhere".into(),
                resolved: "/repo/.bcode/../../elsewhere".into(),
            },
        ];
        let roots = source_roots(RootsInput {
            repo: Path::new("/repo"),
            work: Path::new("/repo"),
            env: &env,
            config: &SkillsConfig::default(),
            configured: &configured,
            bundled: &[],
            owners: None,
        });
        let confined: Vec<(&str, bool)> = roots
            .iter()
            .map(|r| (r.source.label.as_str(), r.repository.is_some()))
            .collect();
        assert_eq!(
            confined,
            [
                ("repo:.bcode/skills", true),
                ("repo:.agents/skills", true),
                ("repo:skills", true),
                ("repo-compat:.claude/skills", true),
                ("user-config:skills", false),
                ("user:.agents/skills", false),
                ("user-state:skills", false),
                ("config:vendor/skills", true),
                ("config:~/team", false),
                ("config:../../elsewhere", false),
            ]
        );
        assert_eq!(roots[0].repository.as_deref(), Some(Path::new("/repo")));
    }

    #[test]
    fn switches_remove_sources() {
        let env = SourceEnv {
            home: Some("/h".into()),
            ..SourceEnv::default()
        };
        let config = SkillsConfig {
            include_repo_skills: false,
            include_generic_repo_skills: false,
            include_compat_claude_skills: false,
            include_agents_skills: false,
            include_user_skills: false,
            ..SkillsConfig::default()
        };
        let labels: Vec<String> = labels_and_paths(&config, &env)
            .into_iter()
            .map(|p| p.0)
            .collect();
        assert_eq!(
            labels,
            vec!["config:../team".to_string(), "bundled:core".to_string()]
        );
        let off = SkillsConfig {
            enabled: false,
            ..SkillsConfig::default()
        };
        assert!(labels_and_paths(&off, &env).is_empty());
    }
}
