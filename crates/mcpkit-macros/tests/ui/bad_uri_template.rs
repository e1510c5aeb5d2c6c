/// A note.
#[mcpkit::resource("notes://{id")]
async fn note(id: String) -> String {
    id
}

fn main() {}
