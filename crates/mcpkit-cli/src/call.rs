//! `mcpkit call`, `read`, `prompt`, `complete` and `ping`: one request each, printed readably.
//!
//! Text is printed as it is; images, audio and binary resources are saved to files (in `--out
//! DIR`, or a fresh temporary directory) and summarised; `structuredContent` is printed as
//! pretty JSON. `--json` prints the raw result instead.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use base64::Engine as _;
use mcpkit::client::{prompt_ref, resource_ref, CallOptions, ServerNotification};
use mcpkit::types::schema::{CallToolResult, ContentBlock, ResourceContents};
use mcpkit::Client;
use serde_json::{Map, Value};

use crate::target::{one_line, Failure};

/// Where binary content goes.
#[derive(Debug, Clone)]
pub struct Saver {
    dir: Option<PathBuf>,
    prefix: String,
    count: usize,
}

impl Saver {
    /// Save into `dir` (created if needed), or a new temporary directory when `None`. Files are
    /// named `{prefix}-{n}.{ext}`.
    pub fn new(dir: Option<PathBuf>, prefix: &str) -> Self {
        let prefix: String = prefix
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        Saver { dir, prefix, count: 0 }
    }

    fn dir(&mut self) -> Result<PathBuf, String> {
        if let Some(d) = &self.dir {
            std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
            return Ok(d.clone());
        }
        let mut random = [0u8; 6];
        let _ = getrandom::fill(&mut random);
        let name: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let d = std::env::temp_dir().join(format!("mcpkit-{name}"));
        std::fs::create_dir_all(&d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
        self.dir = Some(d.clone());
        Ok(d)
    }

    /// Decode base64 `data` and write it; the summary line names the file.
    fn save(&mut self, kind: &str, mime: Option<&str>, data: &str) -> String {
        let bytes = match base64::engine::general_purpose::STANDARD.decode(data.trim()) {
            Ok(b) => b,
            Err(e) => return format!("[{kind} {}: invalid base64: {e}]", mime.unwrap_or("?")),
        };
        self.count += 1;
        let path = self
            .dir()
            .map(|d| d.join(format!("{}-{}.{}", self.prefix, self.count, extension(mime))));
        match path.and_then(|p| std::fs::write(&p, &bytes).map(|()| p).map_err(|e| e.to_string())) {
            Ok(p) => format!(
                "[{kind} {}, {} bytes, saved to {}]",
                mime.unwrap_or("application/octet-stream"),
                bytes.len(),
                p.display()
            ),
            Err(e) => format!(
                "[{kind} {}, {} bytes, not saved: {e}]",
                mime.unwrap_or("?"),
                bytes.len()
            ),
        }
    }
}

fn extension(mime: Option<&str>) -> &'static str {
    match mime.unwrap_or("").split(';').next().unwrap_or("").trim() {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "audio/mpeg" | "audio/mp3" => "mp3",
        "audio/ogg" => "ogg",
        "audio/flac" => "flac",
        "application/pdf" => "pdf",
        "application/json" => "json",
        "text/plain" => "txt",
        _ => "bin",
    }
}

/// One content block, readably.
pub fn render_block(out: &mut String, block: &ContentBlock, saver: &mut Saver) {
    match block {
        ContentBlock::Text(t) => {
            let _ = writeln!(out, "{}", t.text);
        }
        ContentBlock::Image(i) => {
            let _ = writeln!(out, "{}", saver.save("image", Some(&i.mime_type), &i.data));
        }
        ContentBlock::Audio(a) => {
            let _ = writeln!(out, "{}", saver.save("audio", Some(&a.mime_type), &a.data));
        }
        ContentBlock::ResourceLink(r) => {
            let mut line = format!("[resource link {}", r.uri);
            if !r.name.is_empty() {
                let _ = write!(line, " \"{}\"", r.name);
            }
            if let Some(m) = &r.mime_type {
                let _ = write!(line, " ({m})");
            }
            line.push(']');
            let _ = writeln!(out, "{line}");
            if let Some(d) = &r.description {
                let _ = writeln!(out, "  {d}");
            }
        }
        ContentBlock::Resource(e) => render_contents(out, &e.resource, saver),
    }
}

/// One resource's contents: a header line, then the text or a saved file.
pub fn render_contents(out: &mut String, c: &ResourceContents, saver: &mut Saver) {
    match c {
        ResourceContents::Text(t) => {
            let _ = writeln!(
                out,
                "[resource {}{}]",
                t.uri,
                t.mime_type.as_deref().map(|m| format!(" ({m})")).unwrap_or_default()
            );
            let _ = writeln!(out, "{}", t.text);
        }
        ResourceContents::Blob(b) => {
            let _ = writeln!(out, "[resource {}]", b.uri);
            let _ = writeln!(out, "{}", saver.save("blob", b.mime_type.as_deref(), &b.blob));
        }
    }
}

/// A tool result, readably.
pub fn render_result(result: &CallToolResult, saver: &mut Saver) -> String {
    let mut out = String::new();
    for block in &result.content {
        render_block(&mut out, block, saver);
    }
    if let Some(s) = &result.structured_content {
        let _ = writeln!(out, "structured content:");
        let _ = writeln!(out, "{}", serde_json::to_string_pretty(s).unwrap_or_default());
    }
    out
}

/// What `call` needs besides the client.
#[derive(Debug, Clone)]
pub struct CallPlan {
    /// The tool.
    pub tool: String,
    /// `key=value` pairs.
    pub pairs: Vec<String>,
    /// `--args JSON`.
    pub base: Map<String, Value>,
    /// Print the raw result.
    pub json: bool,
    /// Where files go.
    pub out_dir: Option<PathBuf>,
    /// Per-call timeout (reset by progress).
    pub timeout: Duration,
}

/// Look up the tool, type and check the arguments, call it, print the result. Exit code 0, or
/// 1 when the tool reported an error.
pub async fn call(client: &Client, plan: &CallPlan, bar: &indicatif::ProgressBar) -> Result<u8, Failure> {
    let tools = client.list_all_tools().await?;
    let Some(tool) = tools.iter().find(|t| t.name == plan.tool) else {
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        return Err(Failure::usage(format!(
            "the server has no tool {:?} (it has: {}); see `mcpkit inspect`",
            plan.tool,
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )));
    };
    let what = format!("tool {:?}", tool.name);
    let args = crate::args::typed_arguments(&plan.pairs, plan.base.clone(), &tool.input_schema, &what)?;
    crate::args::validate(&args, &tool.input_schema, &what)?;

    let (ptx, mut prx) = tokio::sync::mpsc::unbounded_channel::<mcpkit::types::schema::ProgressParams>();
    let progress_bar = bar.clone();
    let progress = tokio::spawn(async move {
        let mut shown = false;
        while let Some(p) = prx.recv().await {
            if !shown && crate::bench::stderr_is_terminal() {
                progress_bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                shown = true;
            }
            if let Some(total) = p.total {
                progress_bar.set_length(total.max(0.0) as u64);
            }
            progress_bar.set_position(p.progress.max(0.0) as u64);
            if let Some(m) = p.message {
                progress_bar.set_message(m);
            }
        }
    });
    let logs = forward_logs(client);
    let options = CallOptions {
        timeout: Some(plan.timeout),
        reset_timeout_on_progress: true,
        progress: Some(ptx),
    };
    let outcome = client.call_tool_with(&tool.name, Value::Object(args), options).await;
    progress.abort();
    logs.abort();
    bar.finish_and_clear();
    let result = outcome.map_err(|e| Failure::usage(format!("{what}: {}", one_line(&e.to_string()))))?;
    if plan.json {
        println!("{}", serde_json::to_string_pretty(&result).unwrap_or_default());
    } else {
        let mut saver = Saver::new(plan.out_dir.clone(), &tool.name);
        print!("{}", render_result(&result, &mut saver));
    }
    if result.is_error == Some(true) {
        eprintln!("mcpkit call: {what} reported an error (isError)");
        return Ok(1);
    }
    Ok(0)
}

/// Print the server's log messages on stderr while a request runs.
fn forward_logs(client: &Client) -> tokio::task::JoinHandle<()> {
    let mut rx = client.notifications();
    tokio::spawn(async move {
        while let Ok(n) = rx.recv().await {
            if let ServerNotification::Log(m) = n {
                let level = serde_json::to_value(m.level)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                let text = match &m.data {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                match &m.logger {
                    Some(l) => eprintln!("[server {level} {l}] {text}"),
                    None => eprintln!("[server {level}] {text}"),
                }
            }
        }
    })
}

/// `resources/read`.
pub async fn read(client: &Client, uri: &str, json: bool, out_dir: Option<PathBuf>) -> Result<u8, Failure> {
    let result = client
        .read_resource(uri)
        .await
        .map_err(|e| Failure::usage(format!("reading {uri}: {}", one_line(&e.to_string()))))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result).unwrap_or_default());
        return Ok(0);
    }
    let mut saver = Saver::new(out_dir, "resource");
    let mut out = String::new();
    for c in &result.contents {
        render_contents(&mut out, c, &mut saver);
    }
    print!("{out}");
    Ok(0)
}

/// `prompts/get`.
pub async fn prompt(
    client: &Client,
    name: &str,
    pairs: &[String],
    json: bool,
    out_dir: Option<PathBuf>,
) -> Result<u8, Failure> {
    let args = crate::args::string_pairs(pairs)?;
    let prompts = client.list_all_prompts().await?;
    let Some(p) = prompts.iter().find(|p| p.name == name) else {
        let mut names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        names.sort_unstable();
        return Err(Failure::usage(format!(
            "the server has no prompt {name:?} (it has: {})",
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )));
    };
    let declared: Vec<&str> = p.arguments.iter().flatten().map(|a| a.name.as_str()).collect();
    for (k, _) in &args {
        if !declared.contains(&k.as_str()) {
            return Err(Failure::usage(format!(
                "prompt {name:?} has no argument {k:?} (it takes: {})",
                if declared.is_empty() {
                    "none".to_owned()
                } else {
                    declared.join(", ")
                }
            )));
        }
    }
    for a in p.arguments.iter().flatten() {
        if a.required == Some(true) && !args.iter().any(|(k, _)| k == &a.name) {
            return Err(Failure::usage(format!(
                "prompt {name:?} needs the argument {:?} ({}={}…)",
                a.name, a.name, "VALUE"
            )));
        }
    }
    let result = client
        .get_prompt(name, args)
        .await
        .map_err(|e| Failure::usage(format!("prompt {name:?}: {}", one_line(&e.to_string()))))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result).unwrap_or_default());
        return Ok(0);
    }
    let mut out = String::new();
    if let Some(d) = &result.description {
        let _ = writeln!(out, "{d}\n");
    }
    let mut saver = Saver::new(out_dir, name);
    for m in &result.messages {
        let role = serde_json::to_value(m.role)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let _ = writeln!(out, "[{role}]");
        render_block(&mut out, &m.content, &mut saver);
    }
    print!("{out}");
    Ok(0)
}

/// What to complete.
#[derive(Debug, Clone)]
pub enum CompleteRef {
    /// A prompt's argument.
    Prompt(String),
    /// A resource template's variable.
    Resource(String),
}

/// `completion/complete` for `ARG=PARTIAL`.
pub async fn complete(client: &Client, reference: &CompleteRef, pair: &str, json: bool) -> Result<u8, Failure> {
    let Some((arg, partial)) = pair.split_once('=') else {
        return Err(Failure::usage(format!(
            "{pair:?} is not ARG=PARTIAL (e.g. language=py)"
        )));
    };
    if client.server_capabilities().completions.is_none() {
        return Err(Failure::usage(
            "the server does not offer completions (no `completions` capability)",
        ));
    }
    let r = match reference {
        CompleteRef::Prompt(p) => prompt_ref(p),
        CompleteRef::Resource(t) => resource_ref(t),
    };
    let result = client
        .complete(r, arg, partial)
        .await
        .map_err(|e| Failure::usage(format!("completing {arg:?}: {}", one_line(&e.to_string()))))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result).unwrap_or_default());
        return Ok(0);
    }
    for v in &result.completion.values {
        println!("{v}");
    }
    let c = &result.completion;
    if c.has_more == Some(true) || c.total.is_some_and(|t| t > c.values.len() as u64) {
        eprintln!(
            "({} of {} shown)",
            c.values.len(),
            c.total.map_or("more".to_owned(), |t| t.to_string())
        );
    }
    Ok(0)
}

/// `ping`: prints the round-trip time on stderr, `ok` on stdout.
pub async fn ping(client: &Client) -> Result<u8, Failure> {
    let t0 = std::time::Instant::now();
    client
        .ping()
        .await
        .map_err(|e| Failure::usage(format!("ping: {}", one_line(&e.to_string()))))?;
    println!("ok");
    eprintln!("round trip {:.3} ms", t0.elapsed().as_secs_f64() * 1000.0);
    Ok(0)
}

/// A progress bar for a call: hidden until the server reports progress, and drawn only when
/// stderr is a terminal.
pub fn progress_bar() -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::hidden();
    if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}") {
        bar.set_style(style);
    }
    bar
}
