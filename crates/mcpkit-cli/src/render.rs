//! Results printed readably, shared by `call`, `read` and `prompt`.
//!
//! Text is printed as it is (on a terminal, its control characters escaped: see
//! [`crate::terminal`]); images, audio and binary resources are saved to files (in `--out
//! DIR`, or a fresh temporary directory) and summarised; `structuredContent` is printed as
//! pretty JSON.

use std::fmt::Write as _;
use std::path::PathBuf;

use base64::Engine as _;
use mcpkit::types::schema::{CallToolResult, ContentBlock, ResourceContents};

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

/// A tool result, readably. When the content is one text block that only serializes the
/// structured content (as the spec advises servers to send for older clients), the structured
/// content alone is printed, once, as pretty JSON.
pub fn render_result(result: &CallToolResult, saver: &mut Saver) -> String {
    let mut out = String::new();
    if let Some(s) = &result.structured_content {
        if text_only_serializes(&result.content, s) {
            let _ = writeln!(out, "{}", serde_json::to_string_pretty(s).unwrap_or_default());
            return out;
        }
    }
    for block in &result.content {
        render_block(&mut out, block, saver);
    }
    if let Some(s) = &result.structured_content {
        let _ = writeln!(out, "structured content:");
        let _ = writeln!(out, "{}", serde_json::to_string_pretty(s).unwrap_or_default());
    }
    out
}

/// Whether `content` is a single text block whose text parses to exactly `structured`.
fn text_only_serializes(content: &[ContentBlock], structured: &serde_json::Value) -> bool {
    match content {
        [ContentBlock::Text(t)] => serde_json::from_str::<serde_json::Value>(&t.text).is_ok_and(|v| &v == structured),
        [] => true,
        _ => false,
    }
}

/// Print `value` as pretty JSON on stdout (the `--json` output of every command).
pub fn print_json<T: serde::Serialize>(value: &T) {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    println!("{}", crate::terminal::json(&text));
}

/// Print server text (a rendered result) on stdout, escaped on a terminal.
pub fn print_text(text: &str) {
    print!("{}", crate::terminal::out(text));
}
