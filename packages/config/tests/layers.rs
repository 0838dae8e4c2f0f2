//! The layered configuration end to end: precedence, provenance, located
//! errors, unknown-key warnings and path resolution. Hermetic: every test
//! builds its own home, repo and working directory under a temp dir and
//! passes an explicit environment map; temp paths are redacted to `[ROOT]`.

// Helpers outside `#[test]` functions are test code too; clippy's
// allow-*-in-tests settings only cover `#[test]` items and `cfg(test)`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use bcode_prompt_config::McpServerConfig;
use bcode_prompt_config::{
    BcodeConfig, CatalogMode, ConfigInputs, ConfiguredSkillRoot, LoadedConfig, Origin, load,
};

/// A temp tree with `home/`, `repo/` and `cwd/`, and the inputs to load it.
struct Fixture {
    root: tempfile::TempDir,
    env: BTreeMap<String, String>,
    config_files: Vec<PathBuf>,
    set: Vec<String>,
}

impl Fixture {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        for dir in ["home", "repo", "cwd"] {
            fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        let home = root.path().join("home").display().to_string();
        Fixture {
            env: BTreeMap::from([("HOME".to_owned(), home)]),
            root,
            config_files: Vec::new(),
            set: Vec::new(),
        }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.path().join(relative)
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }

    fn user(self, text: &str) -> Self {
        self.write("home/.config/bcode/bcode.toml", text);
        self
    }

    fn repo(self, text: &str) -> Self {
        self.write("repo/.bcode/bcode.toml", text);
        self
    }

    fn env(mut self, var: &str, value: &str) -> Self {
        self.env.insert(var.to_owned(), value.to_owned());
        self
    }

    /// Writes `cwd/<name>` and passes it to `--config` by its relative name.
    fn config(mut self, name: &str, text: &str) -> Self {
        self.write(&format!("cwd/{name}"), text);
        self.config_files.push(PathBuf::from(name));
        self
    }

    fn set(mut self, arg: &str) -> Self {
        self.set.push(arg.to_owned());
        self
    }

    fn inputs(&self) -> ConfigInputs {
        ConfigInputs {
            repo: self.path("repo"),
            cwd: self.path("cwd"),
            env: self.env.clone(),
            config_files: self.config_files.clone(),
            set: self.set.clone(),
            host_sections: Vec::new(),
            trust_repo: false,
        }
    }

    fn load(&self) -> LoadedConfig {
        match load(&self.inputs()) {
            Ok(loaded) => loaded,
            Err(error) => panic!("unexpected config error:\n{error}"),
        }
    }

    /// The rendered error, with the temp root redacted.
    fn error(&self) -> String {
        match load(&self.inputs()) {
            Ok(loaded) => panic!("expected an error, loaded {:?}", loaded.config),
            Err(error) => self.redact(&error.to_string()),
        }
    }

    fn redact(&self, text: &str) -> String {
        text.replace(&self.root.path().display().to_string(), "[ROOT]")
    }

    /// `key = value  # origin` for every value that is not a default.
    fn explained(&self, loaded: &LoadedConfig) -> Vec<String> {
        loaded
            .explain()
            .into_iter()
            .filter(|line| line.origin != Origin::Default)
            .map(|line| self.redact(&format!("{} = {}  # {}", line.key, line.value, line.origin)))
            .collect()
    }

    fn warnings(&self, loaded: &LoadedConfig) -> Vec<String> {
        loaded
            .warnings
            .iter()
            .map(|w| self.redact(&w.to_string()))
            .collect()
    }
}

#[test]
fn no_files_and_no_variables_give_the_defaults() {
    let fixture = Fixture::new();
    let loaded = fixture.load();
    assert_eq!(loaded.config, BcodeConfig::default());
    assert_eq!(loaded.warnings, vec![]);
    assert_eq!(fixture.explained(&loaded), Vec::<String>::new());
    let explain = loaded.explain();
    assert_eq!(explain.len(), 85);
    let keys: Vec<&str> = explain.iter().map(|line| line.key.as_str()).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    assert_eq!(
        loaded.origin("skills.prompt.catalog"),
        Some(&Origin::Default)
    );
    assert_eq!(loaded.origin("skills.prompt"), None);
}

/// Adds a layer, then the expected value and origin of `skills.prompt.catalog`.
type Step = (fn(Fixture) -> Fixture, CatalogMode, &'static str);

#[test]
fn each_layer_wins_over_the_one_below() {
    // One key set by more and more layers: the value and origin follow the
    // highest layer each time.
    let steps: Vec<Step> = vec![
        (|f| f, CatalogMode::Summary, "default"),
        (
            |f| f.user("[skills.prompt]\ncatalog = \"off\"\n"),
            CatalogMode::Off,
            "user file [ROOT]/home/.config/bcode/bcode.toml",
        ),
        (
            |f| f.repo("skills.prompt.catalog = \"names_only\"\n"),
            CatalogMode::NamesOnly,
            "repo file [ROOT]/repo/.bcode/bcode.toml",
        ),
        (
            |f| f.env("BCODE_SKILLS__PROMPT__CATALOG", "summary"),
            CatalogMode::Summary,
            "env BCODE_SKILLS__PROMPT__CATALOG",
        ),
        (
            |f| f.config("extra.toml", "[skills.prompt]\ncatalog = \"off\"\n"),
            CatalogMode::Off,
            "config file [ROOT]/cwd/extra.toml",
        ),
        (
            |f| f.config("more.toml", "[skills.prompt]\ncatalog = \"names_only\"\n"),
            CatalogMode::NamesOnly,
            "config file [ROOT]/cwd/more.toml",
        ),
        (
            |f| f.set("skills.prompt.catalog=off"),
            CatalogMode::Off,
            "--set skills.prompt.catalog=off",
        ),
        (
            |f| f.set("skills.prompt.catalog=\"summary\""),
            CatalogMode::Summary,
            "--set skills.prompt.catalog=\"summary\"",
        ),
    ];
    let mut fixture = Fixture::new();
    for (add, value, origin) in steps {
        fixture = add(fixture);
        let loaded = fixture.load();
        let got = (
            loaded.config.skills.prompt.catalog,
            fixture.redact(&loaded.origin("skills.prompt.catalog").unwrap().to_string()),
        );
        assert_eq!(got, (value, origin.to_owned()));
    }
}

#[test]
fn every_layer_kind_is_recorded_per_key() {
    let fixture = Fixture::new()
        .user("[skills]\nenabled = false\nmax_skill_file_bytes = 2000\n")
        .repo("[skills]\nmax_skill_file_bytes = 1000\n[invariants]\nmax_selected = 3\n")
        .env("BCODE_SYSTEM_PROMPT__SECTIONS__USER_AUTHORITY", "false")
        .env("BCODE_STATE_DIR", "/state")
        .env("BCODE_VERBOSE", "1")
        .config(
            "extra.toml",
            "[model.tool_output]\nfallback_argument_chars = 10\n",
        )
        .set("skills.prompt.max_bytes=512")
        .set("skills.disabled.ids=[\"a\", \"b\"]");
    let loaded = fixture.load();
    assert_eq!(
        fixture.explained(&loaded),
        vec![
            "invariants.max_selected = 3  # repo file [ROOT]/repo/.bcode/bcode.toml",
            "model.tool_output.fallback_argument_chars = 10  # config file [ROOT]/cwd/extra.toml",
            "skills.disabled.ids = [\"a\", \"b\"]  # --set skills.disabled.ids=[\"a\", \"b\"]",
            "skills.enabled = false  # user file [ROOT]/home/.config/bcode/bcode.toml",
            "skills.max_skill_file_bytes = 1000  # repo file [ROOT]/repo/.bcode/bcode.toml",
            "skills.prompt.max_bytes = 512  # --set skills.prompt.max_bytes=512",
            "system_prompt.sections.user_authority = false  # env BCODE_SYSTEM_PROMPT__SECTIONS__USER_AUTHORITY",
        ]
    );
    // BCODE_STATE_DIR and other single-level BCODE_ names are not config keys.
    assert_eq!(loaded.warnings, vec![]);
}

#[test]
fn xdg_config_home_replaces_home_for_the_user_file() {
    let fixture = Fixture::new()
        .user("skills.enabled = false\n")
        .env("XDG_CONFIG_HOME", "");
    fixture.write("xdg/bcode/bcode.toml", "skills.follow_symlinks = false\n");
    let xdg = fixture.path("xdg").display().to_string();
    let fixture = fixture.env("XDG_CONFIG_HOME", &xdg);
    assert_eq!(
        fixture.explained(&fixture.load()),
        vec!["skills.follow_symlinks = false  # user file [ROOT]/xdg/bcode/bcode.toml"]
    );
}

#[test]
fn old_configs_that_omit_keys_keep_their_defaults() {
    let fixture = Fixture::new().repo("[system_prompt.sections]\ncurrent_datetime = false\n");
    let loaded = fixture.load();
    assert!(loaded.config.system_prompt.sections.user_authority);
    assert_eq!(
        loaded.origin("system_prompt.sections.user_authority"),
        Some(&Origin::Default)
    );
}

#[test]
fn env_and_set_strings_are_taken_literally() {
    // figment would parse 007 as a number and fail to put it in a String.
    let fixture = Fixture::new()
        .env("BCODE_SYSTEM_PROMPT__TEXT", "007")
        .env("BCODE_SYSTEM_PROMPT__MODE", "replace")
        .set("invariants.selector.model_profile=fast")
        .set("system_prompt.templates_dir=\"tpl\"");
    let loaded = fixture.load();
    assert_eq!(loaded.config.system_prompt.text, "007");
    assert_eq!(
        loaded.config.invariants.selector.model_profile.as_deref(),
        Some("fast")
    );
    assert_eq!(
        loaded.config.system_prompt.templates_dir.as_deref(),
        Some("tpl")
    );
}

#[test]
fn arrays_are_replaced_not_appended() {
    let fixture = Fixture::new()
        .user("[skills.disabled]\nids = [\"a\", \"b\"]\n")
        .repo("[skills.disabled]\nids = [\"c\"]\n");
    assert_eq!(
        fixture.load().config.skills.disabled.ids,
        vec!["c".to_owned()]
    );
}

#[test]
fn relative_skill_paths_resolve_against_the_layer_that_set_them() {
    let check = |fixture: Fixture, expected: &[(&str, &str)]| {
        let loaded = fixture.load();
        let got: Vec<(String, String)> = loaded
            .configured_skill_roots()
            .into_iter()
            .map(|ConfiguredSkillRoot { written, resolved }| {
                (written, fixture.redact(&resolved.display().to_string()))
            })
            .collect();
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(w, r)| ((*w).to_owned(), (*r).to_owned()))
            .collect();
        assert_eq!(got, expected);
    };
    let paths =
        "[skills.sources]\npaths = [\"skills\", \"./a/../b\", \"/abs/skills\", \"~/mine\"]\n";
    check(
        Fixture::new().user(paths),
        &[
            ("skills", "[ROOT]/home/.config/bcode/skills"),
            ("./a/../b", "[ROOT]/home/.config/bcode/a/../b"),
            ("/abs/skills", "/abs/skills"),
            ("~/mine", "[ROOT]/home/mine"),
        ],
    );
    check(
        Fixture::new()
            .user(paths)
            .repo("skills.sources.paths = [\"shared\"]\n"),
        &[("shared", "[ROOT]/repo/.bcode/shared")],
    );
    check(
        Fixture::new().env("BCODE_SKILLS__SOURCES__PATHS", "[\"from-env\"]"),
        &[("from-env", "[ROOT]/cwd/from-env")],
    );
    check(
        Fixture::new().config("conf/extra.toml", "skills.sources.paths = [\"here\"]\n"),
        &[("here", "[ROOT]/cwd/conf/here")],
    );
    check(
        Fixture::new().set("skills.sources.paths=[\"flag\"]"),
        &[("flag", "[ROOT]/cwd/flag")],
    );
}

/// Issue 38, item 4: an MCP server's `cwd` resolves like the skill roots
/// (`~` alone is the home too); an entry without one has no folder, and
/// its server starts in a neutral one.
#[test]
fn mcp_server_folders_resolve_like_skill_paths() {
    let servers = "[[skills.mcp_servers]]\nname = \"a\"\ncommand = \"x\"\ncwd = \"tools\"\n\
                   [[skills.mcp_servers]]\nname = \"b\"\ncommand = \"x\"\ncwd = \"~/srv\"\n\
                   [[skills.mcp_servers]]\nname = \"c\"\ncommand = \"x\"\ncwd = \"~\"\n\
                   [[skills.mcp_servers]]\nname = \"d\"\ncommand = \"x\"\ncwd = \"/opt/d\"\n\
                   [[skills.mcp_servers]]\nname = \"e\"\ncommand = \"x\"\n";
    assert_eq!(
        per_mcp_server(servers, LoadedConfig::mcp_server_dir),
        [
            Some("[ROOT]/home/.config/bcode/tools".to_owned()),
            Some("[ROOT]/home/srv".to_owned()),
            Some("[ROOT]/home".to_owned()),
            Some("/opt/d".to_owned()),
            None,
        ]
    );
}

/// `path` of each MCP server entry of the user config `servers` (which
/// must load without warnings), redacted.
fn per_mcp_server(
    servers: &str,
    path: fn(&LoadedConfig, &McpServerConfig) -> Option<PathBuf>,
) -> Vec<Option<String>> {
    let fixture = Fixture::new().user(servers);
    let loaded = fixture.load();
    assert_eq!(loaded.warnings, []);
    loaded
        .config
        .skills
        .mcp_servers
        .iter()
        .map(|entry| path(&loaded, entry).map(|p| fixture.redact(&p.display().to_string())))
        .collect()
}

/// Issue 40: an MCP server's `ca_file` resolves like its `cwd`: relative
/// to the config file that names it, `~/` to the home, absolute as is.
#[test]
fn mcp_server_ca_files_resolve_like_skill_paths() {
    let servers = "[[skills.mcp_servers]]\nname = \"a\"\nurl = \"https://a.example/mcp\"\nca_file = \"certs/ca.pem\"\n\
                   [[skills.mcp_servers]]\nname = \"b\"\nurl = \"https://b.example/mcp\"\nca_file = \"~/ca.pem\"\n\
                   [[skills.mcp_servers]]\nname = \"c\"\nurl = \"https://c.example/mcp\"\nca_file = \"/etc/c.pem\"\n\
                   [[skills.mcp_servers]]\nname = \"d\"\nurl = \"https://d.example/mcp\"\n";
    assert_eq!(
        per_mcp_server(servers, LoadedConfig::mcp_server_ca_file),
        [
            Some("[ROOT]/home/.config/bcode/certs/ca.pem".to_owned()),
            Some("[ROOT]/home/ca.pem".to_owned()),
            Some("/etc/c.pem".to_owned()),
            None,
        ]
    );
}

#[test]
fn templates_dir_resolves_like_skill_paths() {
    let fixture = Fixture::new().repo("[system_prompt]\ntemplates_dir = \"templates\"\n");
    let resolved = fixture.load().templates_dir().unwrap();
    assert_eq!(
        fixture.redact(&resolved.display().to_string()),
        "[ROOT]/repo/.bcode/templates"
    );
    assert_eq!(Fixture::new().load().templates_dir(), None);
}

#[test]
fn unknown_keys_are_warnings_with_a_suggestion() {
    let fixture = Fixture::new()
        .repo("[skills.prompt]\ncatalog = \"off\"\ncatalogue = \"off\"\n\n[skill]\nenabled = true\n[wholly_unrelated]\n")
        .env("BCODE_SKILLS__ENABLD", "false")
        .set("system_prompt.sections.user_authorty=false");
    let loaded = fixture.load();
    assert_eq!(
        fixture.warnings(&loaded),
        vec![
            "repo file [ROOT]/repo/.bcode/bcode.toml:5: unknown key `skill` (ignored); did you mean `skills`?",
            "repo file [ROOT]/repo/.bcode/bcode.toml:3: unknown key `skills.prompt.catalogue` (ignored); did you mean `skills.prompt.catalog`?",
            "repo file [ROOT]/repo/.bcode/bcode.toml:7: unknown key `wholly_unrelated` (ignored)",
            "env BCODE_SKILLS__ENABLD: unknown key `skills.enabld` (ignored); did you mean `skills.enabled`?",
            "--set system_prompt.sections.user_authorty=false: unknown key `system_prompt.sections.user_authorty` (ignored); did you mean `system_prompt.sections.user_authority`?",
        ]
    );
    // The known key next to the unknown one still applies.
    assert_eq!(loaded.config.skills.prompt.catalog, CatalogMode::Off);
    assert_eq!(loaded.warnings[1].key, "skills.prompt.catalogue");
    assert_eq!(
        loaded.warnings[1].suggestion.as_deref(),
        Some("skills.prompt.catalog")
    );
}

#[test]
fn a_misspelt_enum_value_names_file_line_and_allowed_values() {
    let fixture = Fixture::new()
        .repo("# team defaults\n[skills.prompt]\ninclude_sources = true\ncatalog = \"sumary\"\n");
    assert_eq!(
        fixture.error(),
        "repo file [ROOT]/repo/.bcode/bcode.toml:4: invalid value for `skills.prompt.catalog`: \"sumary\"\n  \
         expected one of: off, names_only, summary\n  \
         did you mean `summary`?"
    );
}

#[test]
fn a_wrong_type_names_the_expected_type() {
    let fixture = Fixture::new().user("[skills]\nenabled = \"yes\"\n");
    assert_eq!(
        fixture.error(),
        "user file [ROOT]/home/.config/bcode/bcode.toml:2: invalid value for `skills.enabled`: \"yes\"\n  \
         expected a boolean (true or false)"
    );
    let fixture = Fixture::new().config("c.toml", "skills = 3\n");
    assert_eq!(
        fixture.error(),
        "config file [ROOT]/cwd/c.toml:1: invalid value for `skills`: 3\n  expected a table"
    );
    let fixture = Fixture::new().repo("skills.sources.paths = [\"a\", 1]\n");
    assert_eq!(
        fixture.error(),
        "repo file [ROOT]/repo/.bcode/bcode.toml:1: invalid value for `skills.sources.paths`: [\"a\", 1]\n  \
         expected an array of strings, e.g. [\"a\", \"b\"]"
    );
}

#[test]
fn a_negative_bound_is_an_error() {
    let fixture = Fixture::new().repo("[skills.prompt]\nmax_bytes = -1\n");
    assert_eq!(
        fixture.error(),
        "repo file [ROOT]/repo/.bcode/bcode.toml:2: invalid value for `skills.prompt.max_bytes`: -1\n  \
         expected a non-negative integer (omit the key to leave it unset)"
    );
    let fixture = Fixture::new().set("system_prompt.git_status_max_chars=-5");
    assert_eq!(
        fixture.error(),
        "--set system_prompt.git_status_max_chars=-5: invalid value for `system_prompt.git_status_max_chars`: -5\n  \
         expected a non-negative integer"
    );
}

#[test]
fn a_bad_layer_is_reported_even_when_a_higher_layer_overrides_it() {
    let fixture = Fixture::new()
        .user("skills.enabled = 1\n")
        .set("skills.enabled=false");
    assert_eq!(
        fixture.error(),
        "user file [ROOT]/home/.config/bcode/bcode.toml:1: invalid value for `skills.enabled`: 1\n  \
         expected a boolean (true or false)"
    );
}

#[test]
fn bad_env_and_set_values_name_their_variable_or_flag() {
    let fixture = Fixture::new().env("BCODE_SKILLS__ENABLED", "maybe");
    assert_eq!(
        fixture.error(),
        "env BCODE_SKILLS__ENABLED: invalid value for `skills.enabled`: \"maybe\"\n  \
         expected a boolean (true or false)"
    );
    let fixture = Fixture::new().set("invariants.selector.on_timeout=previos");
    assert_eq!(
        fixture.error(),
        "--set invariants.selector.on_timeout=previos: invalid value for `invariants.selector.on_timeout`: \"previos\"\n  \
         expected one of: full, previous, deterministic, none\n  \
         did you mean `previous`?"
    );
}

#[test]
fn a_set_flag_without_equals_is_an_error() {
    for arg in ["skills.enabled", "=true", "skills..enabled=true"] {
        let fixture = Fixture::new().set(arg);
        assert_eq!(
            fixture.error(),
            format!(
                "--set {arg}: expected KEY=VALUE with a dotted key, e.g. --set skills.prompt.catalog=off"
            )
        );
    }
}

#[test]
fn toml_syntax_errors_name_file_line_and_column() {
    let fixture = Fixture::new().repo("[skills]\nenabled = true\ncatalog = \n");
    assert_eq!(
        fixture.error(),
        "repo file [ROOT]/repo/.bcode/bcode.toml:3:11: invalid TOML: string values must be quoted, expected literal string"
    );
}

#[test]
fn a_missing_config_file_is_an_error_but_missing_user_and_repo_files_are_not() {
    let mut fixture = Fixture::new();
    fixture.config_files.push(PathBuf::from("nope.toml"));
    assert_eq!(
        fixture.error(),
        "config file [ROOT]/cwd/nope.toml: cannot read config: No such file or directory (os error 2)"
    );
}

#[test]
fn replace_mode_without_text_names_both_keys() {
    let fixture = Fixture::new().config("extra.toml", "[system_prompt]\n\nmode = \"replace\"\n");
    assert_eq!(
        fixture.error(),
        "`system_prompt.mode` is \"replace\" (config file [ROOT]/cwd/extra.toml:3) but `system_prompt.text` is empty (default)\n  \
         replace mode needs the replacement prompt in `system_prompt.text`; set it, or set `system_prompt.mode = \"default\"`"
    );
    let fixture = Fixture::new()
        .user("[system_prompt]\nmode = \"replace\"\ntext = \"Be brief.\"\n")
        .set("system_prompt.text=");
    assert_eq!(
        fixture.error(),
        "`system_prompt.mode` is \"replace\" (user file [ROOT]/home/.config/bcode/bcode.toml:2) but `system_prompt.text` is empty (--set system_prompt.text=)\n  \
         replace mode needs the replacement prompt in `system_prompt.text`; set it, or set `system_prompt.mode = \"default\"`"
    );
}

#[test]
fn loading_is_deterministic() {
    let make = || {
        Fixture::new()
            .user("[skills]\nenabled = false\nbogus = 1\n")
            .repo("[skills.prompt]\ncatalog = \"off\"\n")
            .env("BCODE_INVARIANTS__MAX_SELECTED", "3")
            .env("BCODE_INVARIANTS__MODE", "relevant")
            .set("skills.sources.paths=[\"x\"]")
    };
    let fixture = make();
    let first = fixture.load();
    let second = fixture.load();
    assert_eq!(first.explain(), second.explain());
    assert_eq!(first.warnings, second.warnings);
    assert_eq!(first.config, second.config);
    // A second tree with the same content gives the same redacted output.
    let other = make();
    assert_eq!(fixture.explained(&first), other.explained(&other.load()));
}

#[test]
fn the_fixture_never_uses_the_real_home() {
    let fixture = Fixture::new();
    let home = PathBuf::from(&fixture.inputs().env["HOME"]);
    assert!(home.starts_with(fixture.root.path()));
    assert!(Path::new(&fixture.inputs().cwd).starts_with(fixture.root.path()));
}
