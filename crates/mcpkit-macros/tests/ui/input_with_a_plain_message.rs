use mcpkit::RequestContext;

/// Asking with a bare message: the error points to `confirm` and `elicit_as`.
#[mcpkit::tool]
async fn wipe(cx: RequestContext) -> String {
    match cx.input(None, "Wipe everything?").await {
        Ok(_) => "wiped".to_owned(),
        Err(e) => e.to_string(),
    }
}

fn main() {}
