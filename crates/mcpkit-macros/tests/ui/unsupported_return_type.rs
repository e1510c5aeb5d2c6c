struct Reading {
    celsius: f64,
}

/// The temperature.
#[mcpkit::tool]
async fn temperature() -> Reading {
    Reading { celsius: 20.0 }
}

fn main() {}
