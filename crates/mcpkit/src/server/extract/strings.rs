//! Decoding string-valued arguments (resource template variables, prompt arguments) into typed
//! fields: each value is parsed as the field's type asks (`id: i64` from `"42"`), and a value
//! that does not parse is named with the type it should have been.

use std::collections::BTreeMap;
use std::marker::PhantomData;

use serde::de::value::{MapDeserializer, StrDeserializer};
use serde::de::{self, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;

/// The values of `values` as a map whose values parse on demand.
pub(super) fn deserializer(
    values: &BTreeMap<String, String>,
) -> MapDeserializer<'_, impl Iterator<Item = (&str, Text<'_, de::value::Error>)>, de::value::Error> {
    MapDeserializer::new(values.iter().map(|(k, v)| (k.as_str(), Text::new(v))))
}

/// One string value, read as whatever type the field asks for.
pub(super) struct Text<'a, E> {
    text: &'a str,
    error: PhantomData<E>,
}

impl<'a, E> Text<'a, E> {
    fn new(text: &'a str) -> Self {
        Text {
            text,
            error: PhantomData,
        }
    }
}

impl<'de, E: de::Error> IntoDeserializer<'de, E> for Text<'de, E> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'de, E: de::Error> Text<'de, E> {
    /// `self.text` parsed as `T`, or an error saying it is not `kind`.
    fn parse<T: std::str::FromStr>(&self, kind: &str) -> Result<T, E> {
        self.text
            .trim()
            .parse()
            .map_err(|_| E::custom(format!("{:?} is not {kind}", self.text)))
    }
}

macro_rules! parse_as {
    ($($method:ident => $visit:ident: $ty:ty, $kind:literal;)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
                visitor.$visit(self.parse::<$ty>($kind)?)
            }
        )*
    };
}

impl<'de, E: de::Error> de::Deserializer<'de> for Text<'de, E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        visitor.visit_borrowed_str(self.text)
    }

    parse_as! {
        deserialize_bool => visit_bool: bool, "true or false";
        deserialize_i8 => visit_i8: i8, "an integer from -128 to 127";
        deserialize_i16 => visit_i16: i16, "an integer from -32768 to 32767";
        deserialize_i32 => visit_i32: i32, "a 32-bit integer";
        deserialize_i64 => visit_i64: i64, "an integer";
        deserialize_i128 => visit_i128: i128, "an integer";
        deserialize_u8 => visit_u8: u8, "an integer from 0 to 255";
        deserialize_u16 => visit_u16: u16, "an integer from 0 to 65535";
        deserialize_u32 => visit_u32: u32, "a non-negative 32-bit integer";
        deserialize_u64 => visit_u64: u64, "a non-negative integer";
        deserialize_u128 => visit_u128: u128, "a non-negative integer";
        deserialize_f32 => visit_f32: f32, "a number";
        deserialize_f64 => visit_f64: f64, "a number";
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        // A variable that is there is a value; one that is absent is not in the map at all.
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, E> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, E> {
        // A unit variant, by its (serde) name.
        let text: StrDeserializer<'de, E> = self.text.into_deserializer();
        de::Deserializer::deserialize_enum(text, name, variants, visitor)
    }

    forward_to_deserialize_any! {
        char str string bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Order {
        Asc,
        Desc,
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Vars {
        id: i64,
        name: String,
        limit: Option<u8>,
        ratio: Option<f64>,
        all: Option<bool>,
        order: Option<Order>,
    }

    fn vars(pairs: &[(&str, &str)]) -> Result<Vars, String> {
        let values: BTreeMap<String, String> = pairs.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
        serde_path_to_error::deserialize(deserializer(&values)).map_err(|e| format!("{}: {}", e.path(), e.inner()))
    }

    #[test]
    fn values_parse_as_their_fields_ask() {
        let v = vars(&[
            ("id", "-42"),
            ("name", "007"),
            ("limit", "9"),
            ("ratio", "0.5"),
            ("all", "true"),
            ("order", "desc"),
        ]);
        assert_eq!(
            v,
            Ok(Vars {
                id: -42,
                name: "007".into(),
                limit: Some(9),
                ratio: Some(0.5),
                all: Some(true),
                order: Some(Order::Desc),
            })
        );
        assert_eq!(vars(&[("id", "1"), ("name", "x")]).map(|v| v.limit), Ok(None));
    }

    #[test]
    fn a_bad_value_is_named_with_its_type() {
        assert_eq!(
            vars(&[("id", "abc"), ("name", "x")]),
            Err("id: \"abc\" is not an integer".into())
        );
        assert_eq!(
            vars(&[("id", "1"), ("name", "x"), ("limit", "300")]),
            Err("limit: \"300\" is not an integer from 0 to 255".into())
        );
        assert_eq!(
            vars(&[("id", "1"), ("name", "x"), ("all", "yes")]),
            Err("all: \"yes\" is not true or false".into())
        );
        let e = vars(&[("id", "1"), ("name", "x"), ("order", "up")]).unwrap_err();
        assert!(e.starts_with("order: unknown variant `up`"), "{e}");
        assert_eq!(vars(&[("name", "x")]), Err(".: missing field `id`".into()));
    }
}
