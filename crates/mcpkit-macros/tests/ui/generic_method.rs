struct Echo;

#[mcpkit::tools]
impl Echo {
    #[tool]
    async fn echo<T: serde::de::DeserializeOwned + schemars::JsonSchema + ToString>(&self, value: T) -> String {
        value.to_string()
    }
}

fn main() {}
