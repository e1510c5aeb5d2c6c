// A template variable is a string, a number or a boolean parsed from the URI: a list is not.
#[mcpkit::resource("tags://{tags}")]
async fn tagged(tags: Vec<String>) -> String {
    tags.join(",")
}

fn main() {}
