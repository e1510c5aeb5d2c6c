//! The choices of an elicitation form field, for asking on a terminal (see [`crate::interact`]):
//! every enum shape of the 2025-11-25 schema — `enum`, titled `oneOf: [{const, title}]`, the
//! legacy `enum` + `enumNames`, and the multi-select arrays (`items.enum`, titled
//! `items.anyOf: [{const, title}]`, with `minItems`/`maxItems`). The options are listed with
//! their titles and numbers; the user answers by number, value or title, and the answer is the
//! option's value (an array of them for a multi-select).

use serde_json::Value;

/// One option of a field: the value sent back, and the title shown for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The value (`const`, or the `enum` entry).
    pub value: Value,
    /// The title shown, when the schema gives one.
    pub title: Option<String>,
}

/// What a field lets the user choose.
#[derive(Debug, Clone, PartialEq)]
pub enum Choices {
    /// Exactly one of these.
    One(Vec<Choice>),
    /// Several of these, at least `min` and at most `max`.
    Many {
        /// The options.
        options: Vec<Choice>,
        /// `minItems`.
        min: Option<usize>,
        /// `maxItems`.
        max: Option<usize>,
    },
}

/// The choices a field's schema offers; `None` for a field that is not an enum.
pub fn choices_of(prop: &Value) -> Option<Choices> {
    if prop.get("type").and_then(Value::as_str) == Some("array") {
        let items = prop.get("items")?;
        let options = options_of(items, "anyOf")?;
        let count = |key: &str| {
            prop.get(key)
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok())
        };
        return Some(Choices::Many {
            options,
            min: count("minItems"),
            max: count("maxItems"),
        });
    }
    options_of(prop, "oneOf").map(Choices::One)
}

/// The options of `schema`: its titled list under `titled` (`oneOf` or `anyOf` of
/// `{const, title}`), else its `enum` (titled by `enumNames` when present and as long).
fn options_of(schema: &Value, titled: &str) -> Option<Vec<Choice>> {
    if let Some(list) = schema.get(titled).and_then(Value::as_array) {
        let options: Vec<Choice> = list
            .iter()
            .filter_map(|o| {
                Some(Choice {
                    value: o.get("const")?.clone(),
                    title: o.get("title").and_then(Value::as_str).map(str::to_owned),
                })
            })
            .collect();
        return (!options.is_empty()).then_some(options);
    }
    let values = schema.get("enum").and_then(Value::as_array)?;
    let names = schema
        .get("enumNames")
        .and_then(Value::as_array)
        .filter(|n| n.len() == values.len());
    Some(
        values
            .iter()
            .enumerate()
            .map(|(i, v)| Choice {
                value: v.clone(),
                title: names.and_then(|n| n[i].as_str()).map(str::to_owned),
            })
            .collect(),
    )
}

/// A value as the user types it: a string without quotes, anything else as JSON.
fn text_of(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

impl Choices {
    /// The options.
    pub fn options(&self) -> &[Choice] {
        match self {
            Choices::One(o) | Choices::Many { options: o, .. } => o,
        }
    }

    /// One line per option, numbered from 1: `    2) Second Option (value2)`, or the bare value
    /// when it has no title.
    pub fn listing(&self) -> Vec<String> {
        self.options()
            .iter()
            .enumerate()
            .map(|(i, c)| match &c.title {
                Some(t) if *t != text_of(&c.value) => format!("    {}) {t} ({})", i + 1, text_of(&c.value)),
                _ => format!("    {}) {}", i + 1, text_of(&c.value)),
            })
            .collect()
    }

    /// How to answer, for the question: `pick one: 1-3` or `pick 1 to 2 of 1-3, comma-separated`.
    pub fn hint(&self) -> String {
        let n = self.options().len();
        match self {
            Choices::One(_) => format!("pick one: 1-{n}"),
            Choices::Many { min, max, .. } => {
                let how_many = match (min, max) {
                    (Some(a), Some(b)) if a == b => format!("{a}"),
                    (Some(a), Some(b)) => format!("{a} to {b}"),
                    (Some(a), None) => format!("at least {a}"),
                    (None, Some(b)) => format!("up to {b}"),
                    (None, None) => "any".to_owned(),
                };
                format!("pick {how_many} of 1-{n}, comma-separated")
            }
        }
    }

    /// The value(s) a non-empty answer picks: for one choice a number, value or title; for a
    /// multi-select a comma-separated list of them (repeats counted once), checked against
    /// `minItems`/`maxItems`.
    pub fn answer(&self, line: &str) -> Result<Value, String> {
        match self {
            Choices::One(options) => pick(options, line.trim()).map(|c| c.value.clone()),
            Choices::Many { options, min, max } => {
                let mut picked: Vec<Value> = Vec::new();
                for token in line.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                    let value = pick(options, token)?.value.clone();
                    if !picked.contains(&value) {
                        picked.push(value);
                    }
                }
                if let Some(min) = min.filter(|&m| picked.len() < m) {
                    return Err(format!("pick at least {min}"));
                }
                if let Some(max) = max.filter(|&m| picked.len() > m) {
                    return Err(format!("pick at most {max}"));
                }
                Ok(Value::Array(picked))
            }
        }
    }
}

/// The option `token` names: its number (from 1), its value, or its title (any case).
fn pick<'a>(options: &'a [Choice], token: &str) -> Result<&'a Choice, String> {
    if let Ok(n) = token.parse::<usize>() {
        if let Some(c) = n.checked_sub(1).and_then(|i| options.get(i)) {
            return Ok(c);
        }
    }
    options
        .iter()
        .find(|c| text_of(&c.value) == token)
        .or_else(|| {
            options
                .iter()
                .find(|c| c.title.as_deref().is_some_and(|t| t.eq_ignore_ascii_case(token)))
        })
        .ok_or_else(|| {
            let values: Vec<String> = options.iter().map(|c| text_of(&c.value)).collect();
            format!(
                "{token:?} is not a choice: answer 1-{} or one of {}",
                options.len(),
                values.join(", ")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn titled(pairs: &[(&str, &str)]) -> Vec<Choice> {
        pairs
            .iter()
            .map(|(v, t)| Choice {
                value: json!(v),
                title: Some((*t).to_owned()),
            })
            .collect()
    }

    #[test]
    fn a_plain_enum_is_one_choice_without_titles() {
        let c = choices_of(&json!({"type": "string", "enum": ["a", "b"]})).unwrap();
        assert_eq!(c.listing(), ["    1) a", "    2) b"]);
        assert_eq!(c.answer("2"), Ok(json!("b")));
        assert_eq!(c.answer(" a "), Ok(json!("a")));
        assert!(c.answer("3").unwrap_err().contains("not a choice"));
        assert!(c.answer("c").is_err());
    }

    #[test]
    fn a_titled_one_of_lists_the_titles_and_answers_the_const() {
        let c = choices_of(&json!({"type": "string", "oneOf": [
            {"const": "value1", "title": "First Option"},
            {"const": "value2", "title": "Second Option"}
        ]}))
        .unwrap();
        assert_eq!(
            c,
            Choices::One(titled(&[("value1", "First Option"), ("value2", "Second Option")]))
        );
        assert_eq!(
            c.listing(),
            ["    1) First Option (value1)", "    2) Second Option (value2)"]
        );
        assert_eq!(c.hint(), "pick one: 1-2");
        assert_eq!(c.answer("2"), Ok(json!("value2")));
        assert_eq!(c.answer("value1"), Ok(json!("value1")));
        assert_eq!(c.answer("second option"), Ok(json!("value2")));
    }

    #[test]
    fn legacy_enum_names_title_the_enum_values() {
        let c =
            choices_of(&json!({"type": "string", "enum": ["opt1", "opt2"], "enumNames": ["Option One", "Option Two"]}))
                .unwrap();
        assert_eq!(
            c,
            Choices::One(titled(&[("opt1", "Option One"), ("opt2", "Option Two")]))
        );
        assert_eq!(c.answer("1"), Ok(json!("opt1")));
        // enumNames of the wrong length are not trusted.
        let c = choices_of(&json!({"type": "string", "enum": ["x", "y"], "enumNames": ["X"]})).unwrap();
        assert!(c.options().iter().all(|o| o.title.is_none()));
    }

    #[test]
    fn an_untitled_multi_select_answers_an_array_within_its_bounds() {
        let c = choices_of(&json!({"type": "array", "minItems": 1, "maxItems": 2,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]}}))
        .unwrap();
        assert_eq!(c.hint(), "pick 1 to 2 of 1-3, comma-separated");
        assert_eq!(c.answer("1, 3"), Ok(json!(["option1", "option3"])));
        assert_eq!(c.answer("option2,2"), Ok(json!(["option2"])));
        assert_eq!(c.answer("1,2,3"), Err("pick at most 2".to_owned()));
        assert_eq!(c.answer(","), Err("pick at least 1".to_owned()));
        assert!(c.answer("1,9").is_err());
    }

    #[test]
    fn a_titled_multi_select_lists_its_any_of_titles() {
        let c = choices_of(&json!({"type": "array", "items": {"anyOf": [
            {"const": "#FF0000", "title": "Red"},
            {"const": "#00FF00", "title": "Green"},
            {"const": "#0000FF", "title": "Blue"}
        ]}}))
        .unwrap();
        assert_eq!(c.listing()[0], "    1) Red (#FF0000)");
        assert_eq!(c.hint(), "pick any of 1-3, comma-separated");
        assert_eq!(c.answer("blue, 1"), Ok(json!(["#0000FF", "#FF0000"])));
    }

    #[test]
    fn fields_without_choices_have_none() {
        assert_eq!(choices_of(&json!({"type": "string"})), None);
        assert_eq!(choices_of(&json!({"type": "array", "items": {"type": "string"}})), None);
        assert_eq!(choices_of(&json!({"type": "integer", "minimum": 1})), None);
    }
}
