//! Fixtures of the MCP tests, which the MCP crate's tests and the CLI's
//! (for the binary) both use: the skills tree a server serves, and a fake
//! MCP server of the 2025-11-25 era written in `sh`.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::files::write_tree;

/// Writes below `skills` the tree the server tests serve: `pdf-tools`
/// (front matter beyond the spec's fields; a text, a script and a binary
/// file; and `refs/leak.txt`, a link to `<outside>/secret.txt`, out of its
/// folder), `no-name` (no `name` field), `hidden` (hidden from the model),
/// `off` (for a config to disable), `titled` (a name that is a title, not
/// the id) and the flat `flat.md`.
pub fn write_served_skills(skills: &Path, outside: &Path) {
    write_tree(
        skills,
        &[
            (
                "pdf-tools/SKILL.md",
                "---\nname: pdf-tools\ndescription: Work with PDFs\nlicense: MIT\nmetadata:\n  author: team\n  version: 1.10\nx-custom: [1, two]\n---\nRead refs/guide.md.\n",
            ),
            ("pdf-tools/refs/guide.md", "# Guide\n"),
            ("pdf-tools/scripts/run.sh", "#!/bin/sh\necho hi\n"),
            (
                "no-name/SKILL.md",
                "---\ndescription: A skill without a name field\n---\nBody.\n",
            ),
            (
                "hidden/SKILL.md",
                "---\ndescription: Hidden\ndisable-model-invocation: true\n---\nB.\n",
            ),
            ("off/SKILL.md", "---\ndescription: Disabled\n---\nB.\n"),
            (
                "titled/SKILL.md",
                "---\nname: Titled Skill\ndescription: Named with a title\n---\nB.\n",
            ),
            (
                "flat.md",
                "---\ndescription: A flat skill\n---\nFlat body.\n",
            ),
        ],
    );
    std::fs::write(
        skills.join("pdf-tools/refs/logo.bin"),
        [0u8, 159, 146, 150, 255],
    )
    .unwrap();
    // A link out of the skill's folder is neither listed nor read.
    std::fs::write(outside.join("secret.txt"), "outside").unwrap();
    std::os::unix::fs::symlink(
        outside.join("secret.txt"),
        skills.join("pdf-tools/refs/leak.txt"),
    )
    .unwrap();
}

/// `text` quoted for `sh`.
pub fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A fake MCP server in `sh`, written to `<dir>/<name>.sh`: a server of
/// the 2025-11-25 era, it answers `server/discover` with "method not found"
/// and `initialize` declaring the skills extension, `skills/list` with what
/// the `sh` code `list` prints (the result object; `$id` is the request's
/// id), and `resources/read` of each `(uri, text)` of `files`.
pub fn fake_server(dir: &Path, name: &str, list: &str, files: &[(&str, &str)]) -> PathBuf {
    let mut reads = String::new();
    for (uri, text) in files {
        let result = json!({"contents": [{"uri": uri, "text": text}]}).to_string();
        reads.push_str(&format!(
            "      {}) printf '%s' {} ;;\n",
            sh_quote(uri),
            sh_quote(&result)
        ));
    }
    let script = format!(
        r#"while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/^{{"jsonrpc":"2.0","id":\([0-9]*\|"[^"]*"\),.*/\1/p')
  case "$line" in
    *'"method":"server/discover"'*)
      printf '%s\n' "{{\"jsonrpc\":\"2.0\",\"id\":$id,\"error\":{{\"code\":-32601,\"message\":\"Method not found\"}}}}" ;;
    *'"method":"initialize"'*)
      printf '%s\n' "{{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{{\"resources\":{{}},\"extensions\":{{\"io.modelcontextprotocol/skills\":{{}}}}}},\"serverInfo\":{{\"name\":\"fake\",\"version\":\"1\"}}}}}}" ;;
    *'"method":"skills/list"'*)
      printf '{{"jsonrpc":"2.0","id":%s,"result":' "$id"
{list}
      printf '}}\n' ;;
    *'"method":"resources/read"'*)
      uri=$(printf '%s\n' "$line" | sed -n 's/.*"uri":"\([^"]*\)".*/\1/p')
      printf '{{"jsonrpc":"2.0","id":%s,"result":' "$id"
      case "$uri" in
{reads}      esac
      printf '}}\n' ;;
  esac
done
"#
    );
    let path = dir.join(format!("{name}.sh"));
    write_tree(dir, &[(&format!("{name}.sh"), &script)]);
    path
}
