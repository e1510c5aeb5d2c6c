struct Counter {
    n: u64,
}

#[mcpkit::tools]
impl Counter {
    #[tool]
    async fn bump(&mut self) -> u64 {
        self.n += 1;
        self.n
    }
}

fn main() {}
