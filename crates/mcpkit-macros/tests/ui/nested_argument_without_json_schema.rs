use std::collections::HashMap;

struct Tag {
    name: String,
}

/// Labels a note: each container parameter's error names `Tag`, where it is written.
#[mcpkit::tool]
async fn label(tags: Vec<Tag>, extra: Option<Tag>, by_key: HashMap<String, Vec<Tag>>, fine: Vec<String>) -> String {
    format!("{} {} {} {}", tags.len(), extra.map(|t| t.name).unwrap_or_default(), by_key.len(), fine.len())
}

fn main() {}
