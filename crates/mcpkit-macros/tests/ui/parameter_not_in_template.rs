/// A note.
#[mcpkit::resource("notes://{id}")]
async fn note(name: String) -> String {
    name
}

fn main() {}
