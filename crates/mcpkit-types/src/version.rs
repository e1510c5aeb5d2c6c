//! Protocol revisions (spec: `basic/lifecycle` "Version Negotiation", `basic/versioning`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A protocol revision mcpkit speaks. Ordered by release date, so version logic is a
/// comparison or a `match`, never string comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05, the first public revision.
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, audio content, tool annotations, completions capability.
    V2025_03_26,
    /// 2025-06-18: structured tool output, elicitation, resource links, titles; no batches.
    V2025_06_18,
    /// 2025-11-25: icons, URL elicitation, sampling with tools, tasks.
    V2025_11_25,
    /// 2026-07-28: the stateless era (no handshake, per-request metadata).
    V2026_07_28,
}

/// The two eras of the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize` handshake, per-session negotiated state (2024-11-05 to 2025-11-25).
    Handshake,
    /// No handshake; every request carries its own metadata (2026-07-28 on).
    Stateless,
}

/// The version string was not one mcpkit knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVersion(pub String);

impl fmt::Display for UnknownVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown MCP protocol version {:?}", self.0)
    }
}

impl std::error::Error for UnknownVersion {}

impl ProtocolVersion {
    /// Every revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
        Self::V2026_07_28,
    ];
    /// The handshake-era revisions, oldest first.
    pub const HANDSHAKE: [ProtocolVersion; 4] = [
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
    ];
    /// The newest handshake-era revision.
    pub const LATEST_HANDSHAKE: ProtocolVersion = Self::V2025_11_25;
    /// The newest revision.
    pub const LATEST: ProtocolVersion = Self::V2026_07_28;

    /// The wire spelling, e.g. `"2025-11-25"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// Which era this revision belongs to.
    pub const fn era(self) -> Era {
        match self {
            Self::V2026_07_28 => Era::Stateless,
            _ => Era::Handshake,
        }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "2024-11-05" => Self::V2024_11_05,
            "2025-03-26" => Self::V2025_03_26,
            "2025-06-18" => Self::V2025_06_18,
            "2025-11-25" => Self::V2025_11_25,
            "2026-07-28" => Self::V2026_07_28,
            other => return Err(UnknownVersion(other.to_owned())),
        })
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_by_date_and_round_trips() {
        for w in ProtocolVersion::ALL.windows(2) {
            assert!(w[0] < w[1]);
            assert!(w[0].as_str() < w[1].as_str());
        }
        for v in ProtocolVersion::ALL {
            assert_eq!(v.as_str().parse::<ProtocolVersion>(), Ok(v));
            let json = serde_json::to_string(&v).unwrap();
            assert_eq!(serde_json::from_str::<ProtocolVersion>(&json).unwrap(), v);
        }
        assert!("2025-01-01".parse::<ProtocolVersion>().is_err());
        assert_eq!(ProtocolVersion::V2026_07_28.era(), Era::Stateless);
        assert_eq!(ProtocolVersion::V2024_11_05.era(), Era::Handshake);
    }
}
