//! The URI-template matcher of server resources (`mcpkit::server::uri_template`). Input: a
//! template and a URI separated by the first newline. Properties: no panic; a template
//! without expressions matches exactly itself; a match names only the template's variables.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpkit::server::uri_template::UriTemplate;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (template, uri) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(t) = UriTemplate::parse(template) else { return };
    let names: Vec<&str> = t.variables().collect();
    if names.is_empty() && !template.contains('{') {
        assert!(t.matches(template).is_some(), "{template:?} does not match itself");
    }
    for candidate in [uri, template] {
        if let Some(vars) = t.matches(candidate) {
            for name in vars.keys() {
                assert!(
                    names.contains(&name.as_str()),
                    "{name:?} is not a variable of {template:?}"
                );
            }
        }
    }
});
