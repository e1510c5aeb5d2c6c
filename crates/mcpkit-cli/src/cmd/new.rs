//! `mcpkit new NAME`: a new cargo project with an MCP server written with the macros (stdio, or
//! Streamable HTTP with `--http`), a test that calls its tools over the in-memory client/server
//! pair, and a README with the commands to test, run, inspect and install it. The files are the
//! templates in `crates/mcpkit-cli/templates/new/`.
//!
//! mcpkit is not on crates.io yet, so the dependency line matters: `--mcpkit-path PATH` depends
//! on that checkout by path; without it, on the checkout this binary was built from when it is
//! still there (`cargo install --path crates/mcpkit-cli` from a clone), and otherwise on
//! `mcpkit = "MAJOR.MINOR"` from crates.io, which will resolve once mcpkit is published (the
//! command and the generated README say so).

use std::path::{Path, PathBuf};

use crate::cmd::Globals;
use crate::target::Failure;

/// `mcpkit new NAME [--http] [--mcpkit-path PATH]`.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "THE MCPKIT DEPENDENCY: mcpkit is not on crates.io yet. With --mcpkit-path PATH the \
project depends on that checkout by path. Without it: on the checkout this mcpkit binary was built from, when \
it still exists; otherwise on mcpkit = \"0.1\" from crates.io, which does not resolve until mcpkit is \
published (the generated README says how to point it at a clone)."
)]
pub struct Args {
    /// The project's folder; its last part is the crate name (letters, digits, '-' and '_',
    /// not starting with a digit). The folder must not exist or be empty.
    #[arg(value_name = "NAME")]
    pub path: PathBuf,
    /// A Streamable HTTP server (on 127.0.0.1:3000) instead of a stdio one.
    #[arg(long)]
    pub http: bool,
    /// Depend on this mcpkit checkout (its root, or its crates/mcpkit folder) by path.
    #[arg(long, value_name = "PATH")]
    pub mcpkit_path: Option<PathBuf>,
}

/// Where the generated project gets mcpkit from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpkitSource {
    /// The mcpkit crate of a checkout, by path (absolute).
    Path {
        /// The `crates/mcpkit` folder.
        dir: PathBuf,
        /// True when it was given with `--mcpkit-path`, false when it is the checkout this
        /// binary was built from.
        given: bool,
    },
    /// `mcpkit = "MAJOR.MINOR"` from crates.io (not published yet).
    CratesIo(String),
}

impl Args {
    /// Write the project.
    pub async fn run(self, _globals: &Globals) -> Result<u8, Failure> {
        let name = crate_name(&self.path)?;
        check_target(&self.path)?;
        let source = match &self.mcpkit_path {
            Some(p) => McpkitSource::Path {
                dir: mcpkit_crate_dir(p)?,
                given: true,
            },
            None => default_source(),
        };
        let files = render(&name, self.http, &source);
        for (rel, text) in &files {
            let path = self.path.join(rel);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| Failure::usage(format!("cannot create {}: {e}", dir.display())))?;
            }
            std::fs::write(&path, text).map_err(|e| Failure::usage(format!("cannot write {}: {e}", path.display())))?;
        }
        let kind = if self.http { "Streamable HTTP" } else { "stdio" };
        println!("created {} ({kind} server {name:?})", self.path.display());
        match &source {
            McpkitSource::Path { dir, .. } => println!("mcpkit: the checkout at {}, by path", dir.display()),
            McpkitSource::CratesIo(v) => eprintln!(
                "mcpkit new: warning: the project depends on mcpkit = \"{v}\" from crates.io, where mcpkit is not \
                 published yet; pass --mcpkit-path PATH (a clone of the mcpkit repository) or edit Cargo.toml"
            ),
        }
        println!(
            "next: cd {} && cargo test (README.md has the commands to run, inspect and install it)",
            self.path.display()
        );
        Ok(0)
    }
}

/// The crate name: the folder's last part, checked the way cargo checks package names.
pub fn crate_name(path: &Path) -> Result<String, Failure> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| Failure::usage(format!("{}: no project name in this path", path.display())))?;
    check_crate_name(name).map_err(|why| Failure::usage(format!("{name:?} is not a valid crate name: {why}")))?;
    Ok(name.to_owned())
}

/// Why `name` cannot be a package name, if it cannot.
pub fn check_crate_name(name: &str) -> Result<(), String> {
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
        "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self",
        "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "abstract",
        "become", "box", "do", "final", "gen", "macro", "override", "priv", "try", "typeof", "unsized", "virtual",
        "yield",
    ];
    // The standard library's crates, cargo's own folder names, and Windows device names.
    const RESERVED: &[&str] = &[
        "alloc",
        "core",
        "proc_macro",
        "proc-macro",
        "std",
        "test",
        "build",
        "deps",
        "examples",
        "incremental",
        "con",
        "prn",
        "aux",
        "nul",
        "com1",
        "com2",
        "com3",
        "com4",
        "com5",
        "com6",
        "com7",
        "com8",
        "com9",
        "lpt1",
        "lpt2",
        "lpt3",
        "lpt4",
        "lpt5",
        "lpt6",
        "lpt7",
        "lpt8",
        "lpt9",
    ];
    // The project's own dependencies: a package may not share a name with one it depends on.
    const DEPENDENCIES: &[&str] = &["mcpkit", "tokio", "serde_json", "serde-json"];
    let Some(first) = name.chars().next() else {
        return Err("it is empty".to_owned());
    };
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        return Err(format!(
            "{bad:?} is not allowed (use letters, digits, '-' and '_'), e.g. {:?}",
            suggest(name)
        ));
    }
    if first.is_ascii_digit() {
        return Err(format!("it starts with a digit, e.g. \"mcp-{name}\" would do"));
    }
    if KEYWORDS.contains(&name) {
        return Err(format!("{name} is a Rust keyword, e.g. \"{name}-server\" would do"));
    }
    let lower = name.to_ascii_lowercase();
    if RESERVED.contains(&lower.as_str()) {
        return Err(format!("{name} is reserved, e.g. \"{name}-server\" would do"));
    }
    if DEPENDENCIES.contains(&lower.as_str()) {
        return Err(format!(
            "the project depends on {name} itself, e.g. \"{name}-server\" would do"
        ));
    }
    Ok(())
}

fn suggest(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    s.trim_matches('-').to_owned()
}

/// The folder must not exist, or be empty.
fn check_target(path: &Path) -> Result<(), Failure> {
    match std::fs::read_dir(path) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(Failure::usage(format!(
                    "{} already exists and is not empty; pick another name or empty it first",
                    path.display()
                )));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) if path.exists() => Err(Failure::usage(format!("{} exists and is not a folder", path.display()))),
        Err(e) => Err(Failure::usage(format!("cannot read {}: {e}", path.display()))),
    }
}

/// The `crates/mcpkit` folder of a checkout given as its root or as that folder itself.
pub fn mcpkit_crate_dir(given: &Path) -> Result<PathBuf, Failure> {
    let candidates = [given.join("crates").join("mcpkit"), given.to_path_buf()];
    for dir in candidates {
        if is_mcpkit_crate(&dir) {
            return std::fs::canonicalize(&dir)
                .map_err(|e| Failure::usage(format!("--mcpkit-path {}: {e}", given.display())));
        }
    }
    Err(Failure::usage(format!(
        "--mcpkit-path {}: neither a clone of the mcpkit repository (with crates/mcpkit) nor the mcpkit crate's folder",
        given.display()
    )))
}

fn is_mcpkit_crate(dir: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
        return false;
    };
    let Ok(doc) = text.parse::<toml_edit::DocumentMut>() else {
        return false;
    };
    doc.get("package").and_then(|p| p.get("name")).and_then(|n| n.as_str()) == Some("mcpkit")
}

/// Without `--mcpkit-path`: the checkout this binary was built from (its `crates/mcpkit` beside
/// this crate's folder) when it is still there, else the crates.io version of this release.
pub fn default_source() -> McpkitSource {
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("mcpkit");
    if is_mcpkit_crate(&built_from) {
        if let Ok(dir) = std::fs::canonicalize(&built_from) {
            return McpkitSource::Path { dir, given: false };
        }
    }
    McpkitSource::CratesIo(major_minor(env!("CARGO_PKG_VERSION")))
}

fn major_minor(version: &str) -> String {
    version.split('.').take(2).collect::<Vec<_>>().join(".")
}

/// A TOML basic string (quotes and backslashes escaped, as Windows paths need).
fn toml_string(s: &str) -> String {
    toml_edit::Value::from(s).to_string().trim().to_owned()
}

/// The project's files: (path relative to its folder, text).
pub fn render(name: &str, http: bool, source: &McpkitSource) -> Vec<(&'static str, String)> {
    let crate_ident = name.replace('-', "_");
    let (mcpkit_source, mcpkit_comment, dependency_note) = match source {
        McpkitSource::Path { dir, given } => {
            let shown = dir.display();
            let why = if *given {
                "given with --mcpkit-path".to_owned()
            } else {
                "the one the mcpkit tool was built from; `mcpkit new --mcpkit-path PATH` picks another".to_owned()
            };
            (
                format!("path = {}", toml_string(&dir.to_string_lossy())),
                "# mcpkit is not on crates.io yet: this is a checkout of it, by path.".to_owned(),
                format!(
                    "mcpkit is not on crates.io yet, so `Cargo.toml` depends on the mcpkit checkout at\n`{shown}` by path ({why}). \
                     Once mcpkit is published, `mcpkit = \"{}\"` can replace the path.",
                    major_minor(env!("CARGO_PKG_VERSION"))
                ),
            )
        }
        McpkitSource::CratesIo(v) => (
            format!("version = \"{v}\""),
            "# NOT ON CRATES.IO YET: until mcpkit is published, replace `version = …` with\n\
             # `path = \"…/crates/mcpkit\"` (a clone of the mcpkit repository)."
                .to_owned(),
            format!(
                "**mcpkit is not on crates.io yet**: `Cargo.toml` depends on `mcpkit = \"{v}\"`, which does not resolve \
                 until it is published. Until then, clone the mcpkit repository and point the dependency at it:\n\
                 `mcpkit = {{ path = \"../mcpkit/crates/mcpkit\", … }}` (or generate the project again with\n\
                 `mcpkit new {name} --mcpkit-path ../mcpkit`)."
            ),
        ),
    };
    let mut features = vec!["\"server\"", "\"client\"", "\"macros\""];
    let mut tokio = vec!["\"macros\"", "\"rt-multi-thread\""];
    if http {
        features.push("\"http-server\"");
        tokio.push("\"net\"");
    }
    let fill = |template: &str| {
        template
            .replace("{{name}}", name)
            .replace("{{crate}}", &crate_ident)
            .replace("{{mcpkit_source}}", &mcpkit_source)
            .replace("{{mcpkit_comment}}", &mcpkit_comment)
            .replace("{{mcpkit_features}}", &features.join(", "))
            .replace("{{tokio_features}}", &tokio.join(", "))
            .replace(
                "{{http_feature_comment}}",
                if http { ", \"http-server\" for HttpServer" } else { "" },
            )
            .replace("{{dependency_note}}", &dependency_note)
            .replace(
                "{{transport_doc}}",
                if http { "over Streamable HTTP" } else { "on stdio" },
            )
    };
    let (main, readme) = if http {
        (
            include_str!("../../templates/new/main_http.rs.tmpl"),
            include_str!("../../templates/new/README_http.md.tmpl"),
        )
    } else {
        (
            include_str!("../../templates/new/main_stdio.rs.tmpl"),
            include_str!("../../templates/new/README_stdio.md.tmpl"),
        )
    };
    vec![
        ("Cargo.toml", fill(include_str!("../../templates/new/Cargo.toml.tmpl"))),
        ("src/lib.rs", fill(include_str!("../../templates/new/lib.rs.tmpl"))),
        ("src/main.rs", fill(main)),
        (
            "tests/tools.rs",
            fill(include_str!("../../templates/new/tests_tools.rs.tmpl")),
        ),
        ("README.md", fill(readme)),
        (".gitignore", fill(include_str!("../../templates/new/gitignore.tmpl"))),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_names_are_checked_like_cargo_does() {
        for ok in ["demo", "my-server", "my_server", "s3", "Calc"] {
            assert_eq!(check_crate_name(ok), Ok(()), "{ok}");
        }
        let cases = [
            ("", "empty"),
            ("my server", "' ' is not allowed"),
            ("1st", "starts with a digit"),
            ("fn", "Rust keyword"),
            ("test", "reserved"),
            ("CON", "reserved"),
            ("mcpkit", "depends on mcpkit itself"),
            ("dé", "'é' is not allowed"),
        ];
        for (bad, why) in cases {
            let e = check_crate_name(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert!(check_crate_name("my server").unwrap_err().contains("\"my-server\""));
    }

    #[test]
    fn no_placeholder_is_left_unfilled() {
        let sources = [
            McpkitSource::Path {
                dir: PathBuf::from("/x/crates/mcpkit"),
                given: true,
            },
            McpkitSource::CratesIo("0.1".into()),
        ];
        for source in &sources {
            for http in [false, true] {
                for (file, text) in render("my-demo", http, source) {
                    assert!(!text.contains("{{"), "{file}: {text}");
                }
            }
        }
    }

    #[test]
    fn the_dependency_line_follows_the_source() {
        let path = render(
            "demo",
            false,
            &McpkitSource::Path {
                dir: PathBuf::from(r"C:\src\mcpkit\crates\mcpkit"),
                given: true,
            },
        );
        let cargo = &path[0].1;
        let doc: toml_edit::DocumentMut = cargo.parse().unwrap();
        assert_eq!(
            doc["dependencies"]["mcpkit"]["path"].as_str(),
            Some(r"C:\src\mcpkit\crates\mcpkit")
        );
        let io = render("demo", true, &McpkitSource::CratesIo("0.1".into()));
        let doc: toml_edit::DocumentMut = io[0].1.parse().unwrap();
        assert_eq!(doc["dependencies"]["mcpkit"]["version"].as_str(), Some("0.1"));
        assert!(io[0].1.contains("NOT ON CRATES.IO YET"));
        assert!(io[4].1.contains("mcpkit is not on crates.io yet"));
        let features = doc["dependencies"]["mcpkit"]["features"].as_array().unwrap();
        assert!(features.iter().any(|f| f.as_str() == Some("http-server")));
    }

    #[test]
    fn without_a_path_the_checkout_this_binary_came_from_is_used() {
        // These tests run from the checkout, so it is there.
        let McpkitSource::Path { dir, given } = default_source() else {
            panic!("expected the checkout");
        };
        assert!(!given);
        assert!(is_mcpkit_crate(&dir), "{}", dir.display());
    }
}
