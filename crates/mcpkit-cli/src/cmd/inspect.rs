//! `mcpkit inspect`: connect, then print what the server offers as readable tables (or raw JSON).

use std::fmt::Write as _;
use std::io::IsTerminal as _;

use mcpkit::types::ext::skills::{Skill, SkillResources};
use mcpkit::types::schema::{JsonObject, Prompt, Resource, ResourceTemplate, Tool, ToolAnnotations};
use mcpkit::types::Era;
use mcpkit::{Client, Result};
use serde_json::{json, Value};

use super::Globals;
use crate::render::print_json;
use crate::target::{Failure, TargetArgs};
use crate::terminal::{self, Shown};

/// Connect to a server and print what it offers: server info, negotiated revision,
/// capabilities, declared extensions, tools, resources, templates, prompts and skills.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print the raw JSON results instead of tables.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    target: TargetArgs,
}

impl Args {
    /// Connect, print the server's offer to stdout, and disconnect.
    pub async fn run(self, globals: &Globals) -> std::result::Result<u8, Failure> {
        // The same client capabilities as `call` (sampling, elicitation): a server may offer tools
        // only to clients that can answer them, and `inspect` must show what `call` can use.
        let builder = crate::interact::install(
            Client::builder().name("mcpkit-inspect", env!("CARGO_PKG_VERSION")),
            crate::interact::interactive(),
            indicatif::ProgressBar::hidden(),
        );
        let client = self
            .target
            .resolve()?
            .connect(builder, globals.connect_options(&self.target))
            .await?;
        let report = collect(&client).await;
        let _ = client.close().await;
        let report = report?;
        if self.json {
            print_json(&report.to_json());
        } else {
            print!("{}", report.render(table_width(), terminal::stdout()));
        }
        Ok(0)
    }
}

/// Everything `inspect` shows.
#[derive(Debug)]
pub struct Report {
    init: mcpkit::types::schema::InitializeResult,
    tools: Vec<Tool>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    prompts: Vec<Prompt>,
    /// The skills (Skills extension), when the server declares it.
    skills: Option<Vec<Skill>>,
}

/// Fetch every list the server's capabilities promise.
pub async fn collect(client: &Client) -> Result<Report> {
    let caps = client.server_capabilities();
    let tools = if caps.tools.is_some() {
        client.list_all_tools().await?
    } else {
        Vec::new()
    };
    let (resources, templates) = if caps.resources.is_some() {
        (
            client.list_all_resources().await?,
            client.list_all_resource_templates().await?,
        )
    } else {
        (Vec::new(), Vec::new())
    };
    let prompts = if caps.prompts.is_some() {
        client.list_all_prompts().await?
    } else {
        Vec::new()
    };
    let skills = if client.serves_skills() {
        Some(client.list_all_skills().await?)
    } else {
        None
    };
    Ok(Report {
        init: client.initialize_result().clone(),
        tools,
        resources,
        templates,
        prompts,
        skills,
    })
}

/// The width the tables are fitted to: `$COLUMNS` when set; otherwise 120 on a terminal, and no
/// limit when stdout is a pipe or a file (a script or a pager gets every description whole).
fn table_width() -> usize {
    let columns = std::env::var("COLUMNS").ok().and_then(|c| c.parse::<usize>().ok());
    match columns {
        Some(c) => c.max(60),
        None if std::io::stdout().is_terminal() => 120,
        None => usize::MAX,
    }
}

impl Report {
    /// The raw results as one JSON document.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "initialize": self.init,
            "tools": self.tools,
            "resources": self.resources,
            "resourceTemplates": self.templates,
            "prompts": self.prompts,
        });
        if let Some(skills) = &self.skills {
            v["skills"] = json!(skills);
        }
        v
    }

    /// The human-readable report; `shown` says how the server's text is shown (escaped on a
    /// terminal).
    pub fn render(&self, width: usize, shown: Shown) -> String {
        let mut out = String::new();
        let t = |s: &str| shown.text(s).into_owned();
        let info = &self.init.server_info;
        let era = match self
            .init
            .protocol_version
            .parse::<mcpkit::types::ProtocolVersion>()
            .map(|v| v.era())
        {
            Ok(Era::Handshake) => "handshake era",
            Ok(Era::Stateless) => "stateless era",
            Err(_) => "unknown revision",
        };
        let _ = writeln!(out, "Server     {} {}", t(&info.name), t(&info.version));
        if let Some(title) = &info.title {
            let _ = writeln!(out, "Title      {}", t(title));
        }
        let _ = writeln!(out, "Protocol   {} ({era})", t(&self.init.protocol_version));
        let _ = writeln!(out, "Capabilities {}", capability_summary(&self.init.capabilities));
        if let Some(extensions) = self.init.capabilities.extensions.as_ref().filter(|e| !e.is_empty()) {
            let _ = writeln!(out, "Extensions {}", t(&extension_summary(extensions)));
        }
        if let Some(i) = &self.init.instructions {
            let _ = writeln!(out, "Instructions {}", t(i));
        }

        let caps = &self.init.capabilities;
        section(&mut out, "Tools", self.tools.len());
        let no_tools = undeclared(&mut out, caps.tools.is_none(), "tools");
        let rows: Vec<Vec<String>> = self
            .tools
            .iter()
            .map(|t| {
                vec![
                    t.name.clone(),
                    schema_summary(&t.input_schema),
                    with_app_hint(
                        with_task_hint(annotation_summary(t.annotations.as_ref(), t.output_schema.is_some()), t),
                        t,
                    ),
                    match (&t.title, &t.description) {
                        (Some(title), Some(d)) => format!("{title} — {d}"),
                        (Some(title), None) => title.clone(),
                        (None, Some(d)) => d.clone(),
                        (None, None) => String::new(),
                    },
                ]
            })
            .collect();
        if !no_tools {
            table(
                &mut out,
                &["NAME", "ARGUMENTS", "HINTS", "DESCRIPTION"],
                &rows,
                width,
                shown,
            );
        }

        section(&mut out, "Resources", self.resources.len());
        let no_resources = undeclared(&mut out, caps.resources.is_none(), "resources");
        let rows: Vec<Vec<String>> = self
            .resources
            .iter()
            .map(|r| {
                vec![
                    r.uri.clone(),
                    r.name.clone(),
                    r.mime_type.clone().unwrap_or_default(),
                    r.description.clone().unwrap_or_default(),
                ]
            })
            .collect();
        if !no_resources {
            table(&mut out, &["URI", "NAME", "MIME", "DESCRIPTION"], &rows, width, shown);
        }

        section(&mut out, "Resource templates", self.templates.len());
        let rows: Vec<Vec<String>> = self
            .templates
            .iter()
            .map(|t| {
                vec![
                    t.uri_template.clone(),
                    t.name.clone(),
                    t.mime_type.clone().unwrap_or_default(),
                    t.description.clone().unwrap_or_default(),
                ]
            })
            .collect();
        table(
            &mut out,
            &["URI TEMPLATE", "NAME", "MIME", "DESCRIPTION"],
            &rows,
            width,
            shown,
        );

        section(&mut out, "Prompts", self.prompts.len());
        let no_prompts = undeclared(&mut out, caps.prompts.is_none(), "prompts");
        let rows: Vec<Vec<String>> = self
            .prompts
            .iter()
            .map(|p| {
                let args = p
                    .arguments
                    .iter()
                    .flatten()
                    .map(|a| {
                        if a.required == Some(true) {
                            a.name.clone()
                        } else {
                            format!("[{}]", a.name)
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                vec![p.name.clone(), args, p.description.clone().unwrap_or_default()]
            })
            .collect();
        if !no_prompts {
            table(&mut out, &["NAME", "ARGUMENTS", "DESCRIPTION"], &rows, width, shown);
        }

        if let Some(skills) = &self.skills {
            section(&mut out, "Skills", skills.len());
            let rows: Vec<Vec<String>> = skills.iter().map(skill_row).collect();
            table(&mut out, &["URI", "NAME", "FILES", "DESCRIPTION"], &rows, width, shown);
        }
        out
    }
}

/// One row of the skills table: the files column counts the manifest and sums its sizes.
fn skill_row(s: &Skill) -> Vec<String> {
    let files = match &s.resources {
        SkillResources::Files(f) => {
            let bytes: u64 = f.iter().map(|r| r.size).sum();
            format!("{} ({bytes} B)", f.len())
        }
        SkillResources::Dynamic => "dynamic".to_owned(),
    };
    vec![
        s.uri.clone(),
        s.name().unwrap_or_default().to_owned(),
        files,
        s.description().unwrap_or_default().to_owned(),
    ]
}

/// Each declared extension, with the names of its settings that are `true` (or set).
fn extension_summary(extensions: &JsonObject) -> String {
    extensions
        .iter()
        .map(|(id, settings)| {
            let flags: Vec<&str> = settings
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(_, v)| !matches!(v, Value::Bool(false) | Value::Null))
                .map(|(k, _)| k.as_str())
                .collect();
            if flags.is_empty() {
                id.clone()
            } else {
                format!("{id} ({})", flags.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn capability_summary(caps: &mcpkit::types::schema::ServerCapabilities) -> String {
    let mut parts = Vec::new();
    if let Some(t) = &caps.tools {
        parts.push(if t.list_changed == Some(true) {
            "tools (listChanged)".to_owned()
        } else {
            "tools".to_owned()
        });
    }
    if let Some(r) = &caps.resources {
        let mut flags = Vec::new();
        if r.subscribe == Some(true) {
            flags.push("subscribe");
        }
        if r.list_changed == Some(true) {
            flags.push("listChanged");
        }
        parts.push(if flags.is_empty() {
            "resources".to_owned()
        } else {
            format!("resources ({})", flags.join(", "))
        });
    }
    if let Some(p) = &caps.prompts {
        parts.push(if p.list_changed == Some(true) {
            "prompts (listChanged)".to_owned()
        } else {
            "prompts".to_owned()
        });
    }
    if caps.logging.is_some() {
        parts.push("logging".to_owned());
    }
    if caps.completions.is_some() {
        parts.push("completions".to_owned());
    }
    if caps.tasks.is_some() {
        parts.push("tasks".to_owned());
    }
    if parts.is_empty() {
        "none".to_owned()
    } else {
        parts.join(", ")
    }
}

/// `name: type` for each property; required ones unbracketed, optional ones in brackets.
fn schema_summary(schema: &JsonObject) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return "-".to_owned();
    };
    if props.is_empty() {
        return "-".to_owned();
    }
    props
        .iter()
        .map(|(name, s)| {
            let ty = type_name(s);
            if required.contains(&name.as_str()) {
                format!("{name}: {ty}")
            } else {
                format!("[{name}: {ty}]")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A property's type in a word or a few: `string`, `integer|null`, `enum`, and for an array its
/// items' type (`array of string`, `array of array of number`).
fn type_name(s: &Value) -> String {
    let of_array = || match s.get("items") {
        Some(items @ Value::Object(_)) => format!("array of {}", type_name(items)),
        _ => "array".to_owned(),
    };
    let name = |t: &str| if t == "array" { of_array() } else { t.to_owned() };
    match s.get("type") {
        Some(Value::String(t)) => name(t),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(name)
            .collect::<Vec<_>>()
            .join("|"),
        _ if s.get("enum").is_some() => "enum".to_owned(),
        _ if s.get("$ref").is_some() => "object".to_owned(),
        _ => "any".to_owned(),
    }
}

fn annotation_summary(a: Option<&ToolAnnotations>, structured: bool) -> String {
    let mut hints = Vec::new();
    if let Some(a) = a {
        if a.read_only_hint == Some(true) {
            hints.push("read-only");
        }
        if a.destructive_hint == Some(true) {
            hints.push("destructive");
        }
        if a.idempotent_hint == Some(true) {
            hints.push("idempotent");
        }
        if a.open_world_hint == Some(true) {
            hints.push("open-world");
        }
    }
    if structured {
        hints.push("structured");
    }
    hints.join(", ")
}

/// The hints, with whether the tool runs as a task (Tasks extension: `execution.taskSupport`).
fn with_task_hint(hints: String, tool: &mcpkit::types::schema::Tool) -> String {
    use mcpkit::types::schema::TaskSupport;
    let task = match tool.execution.as_ref().and_then(|e| e.task_support) {
        Some(TaskSupport::Optional) => "task",
        Some(TaskSupport::Required) => "task only",
        _ => return hints,
    };
    if hints.is_empty() {
        task.to_owned()
    } else {
        format!("{hints}, {task}")
    }
}

/// The hints, with whether the tool has an MCP App view and whether only views may call it
/// (`_meta.ui`: `resourceUri`, `visibility` without `model`).
fn with_app_hint(hints: String, tool: &mcpkit::types::schema::Tool) -> String {
    let Some(ui) = mcpkit::apps::ToolUi::of(tool) else {
        return hints;
    };
    let mut parts: Vec<String> = (!hints.is_empty()).then_some(hints).into_iter().collect();
    if ui.resource_uri.is_some() {
        parts.push("view".to_owned());
    }
    if !ui.allows(mcpkit::apps::Visibility::Model) {
        parts.push("app only".to_owned());
    }
    parts.join(", ")
}

fn section(out: &mut String, title: &str, n: usize) {
    let _ = writeln!(out, "\n{title} ({n})");
}

/// In place of a section's table: that the server did not declare the capability (so it was
/// not asked), rather than an empty table that reads as "asked, and it has none". Returns
/// `undeclared`.
fn undeclared(out: &mut String, undeclared: bool, what: &str) -> bool {
    if undeclared {
        let _ = writeln!(out, "  the server declares no {what} (no `{what}` capability)");
    }
    undeclared
}

/// The widest a column other than the last grows when fitting a width.
const MAX_COLUMN: usize = 48;

/// The fewest characters of the last column kept when the table is wider than the screen.
const MIN_DESCRIPTION: usize = 40;

/// A plain aligned table; the last column is cut to fit `width`. Cells are server text, shown
/// as `shown` says (escaped before they are measured, so the columns stay aligned).
fn table(out: &mut String, header: &[&str], rows: &[Vec<String>], width: usize, shown: Shown) {
    if rows.is_empty() {
        let _ = writeln!(out, "  (none)");
        return;
    }
    let cols = header.len();
    // Columns are capped only when fitting a width; unlimited output keeps every cell whole.
    let cap = if width == usize::MAX { usize::MAX } else { MAX_COLUMN };
    // Each cell on one line, and shown as `shown` says, before it is measured.
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|cell| shown.text(&one_line(cell)).into_owned())
                .collect()
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate().take(cols) {
            widths[i] = widths[i].max(cell.chars().count().min(cap));
        }
    }
    let mut line = |cells: Vec<String>| {
        let mut s = String::from("  ");
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cols {
                // Never cut a description below a readable length; a long line beats a stub.
                let room = width.saturating_sub(s.chars().count()).max(MIN_DESCRIPTION);
                s.push_str(&truncate(cell, room));
            } else {
                let cell = truncate(cell, widths[i]);
                let _ = write!(s, "{cell:<w$}  ", w = widths[i]);
            }
        }
        let _ = writeln!(out, "{}", s.trim_end());
    };
    line(header.iter().map(|h| (*h).to_owned()).collect());
    for row in rows {
        line(row);
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}
