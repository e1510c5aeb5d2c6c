use mcpkit::server::Uri;

/// Which URI? A tool has none.
#[mcpkit::tool]
async fn which(uri: Uri) -> String {
    uri.0
}

fn main() {}
