struct Notes;

#[mcpkit::tools]
impl Notes {
    #[resource]
    async fn readme(&self) -> String {
        String::new()
    }
}

fn main() {}
