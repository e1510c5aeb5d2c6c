/// A note.
#[mcpkit::resource("notes://{id}/%aé")]
async fn note(id: String) -> String {
    id
}

fn main() {}
