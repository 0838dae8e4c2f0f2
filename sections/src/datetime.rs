//! The `current_datetime` stage: the local timestamp, timezone abbreviation
//! and UTC offset, computed from an injected clock reading and zone (never the
//! real clock), plus the pure rule that picks the zone.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

/// The template this stage renders.
pub const DATETIME_TEMPLATE: &str = "sections/datetime.j2";

/// Where the timezone came from, for `--explain`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ZoneSource {
    /// The `--timezone` flag.
    Flag,
    /// The `TZ` environment variable.
    TzVariable,
    /// The operating system's configured zone.
    System,
    /// Nothing usable was found.
    DefaultUtc,
}

impl ZoneSource {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            ZoneSource::Flag => "timezone from --timezone",
            ZoneSource::TzVariable => "timezone from TZ",
            ZoneSource::System => "timezone from the operating system",
            ZoneSource::DefaultUtc => "no timezone configured; using UTC",
        }
    }
}

/// The gathered clock reading and zone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DateTimeInput {
    /// The injected clock reading of this request (`ProbeRequest::now`),
    /// never read from the real clock here.
    pub now: DateTime<Utc>,
    /// The zone `now` is shown in, as chosen by `resolve_timezone`.
    pub zone: Tz,
    /// Which source supplied `zone`; it becomes the section's note.
    pub zone_source: ZoneSource,
}

/// Picks the zone: the flag, else `TZ` (an IANA name, optionally with the
/// POSIX leading `:`), else the system's zone, else UTC. Unparsable values
/// fall through to the next source rather than failing.
pub fn resolve_timezone(
    flag: Option<Tz>,
    tz_variable: Option<&str>,
    system: impl FnOnce() -> Option<String>,
) -> (Tz, ZoneSource) {
    if let Some(zone) = flag {
        return (zone, ZoneSource::Flag);
    }
    let parse = |name: &str| name.trim().trim_start_matches(':').parse::<Tz>().ok();
    if let Some(zone) = tz_variable.and_then(parse) {
        return (zone, ZoneSource::TzVariable);
    }
    if let Some(zone) = system().as_deref().and_then(parse) {
        return (zone, ZoneSource::System);
    }
    (Tz::UTC, ZoneSource::DefaultUtc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zone_sources_in_order() {
        let berlin: Tz = "Europe/Berlin".parse().unwrap();
        let sys = || Some("America/New_York".to_owned());
        assert_eq!(
            resolve_timezone(Some(berlin), Some("Asia/Tokyo"), sys),
            (berlin, ZoneSource::Flag)
        );
        assert_eq!(
            resolve_timezone(None, Some(":Asia/Tokyo"), sys),
            (Tz::Asia__Tokyo, ZoneSource::TzVariable)
        );
        assert_eq!(
            resolve_timezone(None, Some("not a zone"), sys),
            (Tz::America__New_York, ZoneSource::System)
        );
        assert_eq!(
            resolve_timezone(None, None, || None),
            (Tz::UTC, ZoneSource::DefaultUtc)
        );
    }
}
