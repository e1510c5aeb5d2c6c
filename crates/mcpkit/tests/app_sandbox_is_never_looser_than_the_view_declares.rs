//! The sandbox a host builds for a view (`mcpkit::apps::host`): the CSP and the iframe's
//! `allow` attribute, exactly, from what the view declares; nothing declared allows nothing
//! beyond the view's own inline code; a declared origin that would add CSP syntax is dropped;
//! tools whose visibility leaves out `model` are not given to the model.

use mcpkit::apps::host::{allow_attribute, content_security_policy, model_tools};
use mcpkit::apps::{Csp, Permission, ToolUi, ViewMeta, Visibility};
use mcpkit::server::ToolDef;
use serde_json::json;

fn meta(json: serde_json::Value) -> ViewMeta {
    serde_json::from_value(json).unwrap()
}

#[test]
fn without_metadata_the_restrictive_default_applies() {
    assert_eq!(
        content_security_policy(None),
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; \
         connect-src 'none'; img-src 'self' data:; font-src 'self'; media-src 'self' data:; \
         frame-src 'none'; object-src 'none'; base-uri 'self'"
    );
    assert_eq!(allow_attribute(None), "");
    assert_eq!(
        content_security_policy(Some(&ViewMeta::default())),
        content_security_policy(None)
    );
}

#[test]
fn declared_origins_and_permissions_are_built_exactly() {
    let view = meta(json!({
        "csp": {
            "connectDomains": ["https://api.example.com", "wss://live.example.com"],
            "resourceDomains": ["https://cdn.example.com"],
            "frameDomains": ["https://www.youtube.com"],
            "baseUriDomains": ["https://base.example.com"]
        },
        "permissions": {"microphone": {}, "camera": {}, "clipboardWrite": {}}
    }));
    assert_eq!(
        content_security_policy(Some(&view)),
        "default-src 'none'; \
         script-src 'self' 'unsafe-inline' https://cdn.example.com; \
         style-src 'self' 'unsafe-inline' https://cdn.example.com; \
         connect-src https://api.example.com wss://live.example.com; \
         img-src 'self' data: https://cdn.example.com; \
         font-src 'self' https://cdn.example.com; \
         media-src 'self' data: https://cdn.example.com; \
         frame-src https://www.youtube.com; object-src 'none'; base-uri https://base.example.com"
    );
    assert_eq!(allow_attribute(Some(&view)), "camera; microphone; clipboard-write");
}

#[test]
fn an_origin_that_would_add_csp_syntax_is_dropped() {
    let view = ViewMeta {
        csp: Some(Csp {
            connect_domains: vec![
                "https://ok.example.com".into(),
                "https://a.example.com; script-src *".into(),
                "*".into(),
                "'unsafe-eval'".into(),
                "https://b.example.com,https://c.example.com".into(),
            ],
            ..Csp::default()
        }),
        ..ViewMeta::default()
    };
    let csp = content_security_policy(Some(&view));
    assert!(csp.contains("; connect-src https://ok.example.com; img-src"), "{csp}");
    assert_eq!(csp.matches("script-src").count(), 1, "{csp}");
    assert!(!csp.contains("unsafe-eval") && !csp.contains('*'), "{csp}");
}

#[test]
fn permissions_map_to_their_features() {
    for (p, feature) in [
        (Permission::Camera, "camera"),
        (Permission::Microphone, "microphone"),
        (Permission::Geolocation, "geolocation"),
        (Permission::ClipboardWrite, "clipboard-write"),
    ] {
        let view = ViewMeta {
            permissions: Some(mcpkit::apps::Permissions::of([p])),
            ..ViewMeta::default()
        };
        assert_eq!(allow_attribute(Some(&view)), feature);
    }
}

#[test]
fn app_only_tools_are_not_given_to_the_model() {
    let tools = [
        ToolDef::new("plain", || async { "" }),
        ToolDef::new("both", || async { "" }).ui("ui://v"),
        ToolDef::new("app_only", || async { "" })
            .ui("ui://v")
            .visibility([Visibility::App]),
        ToolDef::new("model_only", || async { "" }).visibility([Visibility::Model]),
        ToolDef::new("explicit_both", || async { "" }).visibility([Visibility::Model, Visibility::App]),
    ]
    .map(|d| d.tool().clone());
    let names: Vec<String> = model_tools(tools).into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["plain", "both", "model_only", "explicit_both"]);
}

#[test]
fn a_visibility_mcpkit_does_not_know_grants_nothing_and_the_legacy_key_links() {
    let meta = |v: serde_json::Value| serde_json::from_value(v).unwrap();
    let unknown = ToolDef::new("unknown", || async { "" })
        .meta(meta(json!({"ui": {"visibility": ["widget"]}})))
        .tool()
        .clone();
    let ui = ToolUi::of(&unknown).unwrap();
    assert!(!ui.allows(Visibility::Model) && !ui.allows(Visibility::App));
    assert!(model_tools([unknown]).is_empty());

    let legacy = ToolDef::new("legacy", || async { "" })
        .meta(meta(json!({"ui/resourceUri": "ui://v"})))
        .tool()
        .clone();
    let ui = ToolUi::of(&legacy).unwrap();
    assert_eq!(ui.resource_uri.as_deref(), Some("ui://v"));
    assert!(ui.allows(Visibility::Model) && ui.allows(Visibility::App));
}
