//! Calendar dates as the catalog writes them: `2026-12-01`, or `2026-06` where a publisher states
//! only the month (NVIDIA's driver end-of-life table). A month means its last day: a branch that
//! "ends June 2026" is supported through June 30.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A day, or a month taken as its last day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    year: i32,
    month: u32,
    day: u32,
    /// Written as `YYYY-MM`.
    month_only: bool,
}

impl Date {
    /// A day; `None` when it does not exist.
    pub fn ymd(year: i32, month: u32, day: u32) -> Option<Self> {
        ((1..=12).contains(&month) && (1..=days_in_month(year, month)).contains(&day)).then_some(
            Self {
                year,
                month,
                day,
                month_only: false,
            },
        )
    }

    /// Parses `YYYY-MM-DD`, `YYYY-MM`, or the date part of an RFC 3339 time.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        let s = s.split(['T', ' ']).next()?;
        let mut parts = s.split('-');
        let year: i32 = parts.next()?.parse().ok()?;
        let month: u32 = parts.next()?.parse().ok()?;
        match parts.next() {
            Some(d) => {
                if parts.next().is_some() {
                    return None;
                }
                Self::ymd(year, month, d.parse().ok()?)
            }
            None => (1..=12).contains(&month).then(|| Self {
                year,
                month,
                day: days_in_month(year, month),
                month_only: true,
            }),
        }
    }

    /// Today, from the system clock (UTC).
    pub fn today() -> Self {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Self::from_days((secs / 86_400) as i64)
    }

    /// Days since 1970-01-01.
    pub fn days(&self) -> i64 {
        // Howard Hinnant's days_from_civil.
        let y = i64::from(self.year) - i64::from(self.month <= 2);
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let m = i64::from(self.month);
        let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + i64::from(self.day) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// The date `days` after 1970-01-01.
    pub fn from_days(days: i64) -> Self {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
        Self {
            year,
            month,
            day,
            month_only: false,
        }
    }

    /// Whole days from `self` to `later` (negative when `later` is earlier).
    pub fn days_until(&self, later: &Date) -> i64 {
        later.days() - self.days()
    }

    /// `June 2026` or `2026-12-01`, for messages.
    pub fn human(&self) -> String {
        if self.month_only {
            const NAMES: [&str; 12] = [
                "January",
                "February",
                "March",
                "April",
                "May",
                "June",
                "July",
                "August",
                "September",
                "October",
                "November",
                "December",
            ];
            format!("{} {}", NAMES[self.month as usize - 1], self.year)
        } else {
            self.to_string()
        }
    }
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => 0,
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.month_only {
            write!(f, "{:04}-{:02}", self.year, self.month)
        } else {
            write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
        }
    }
}

impl Serialize for Date {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Date {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Date::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!("`{s}` is not a date (write 2026-12-01 or 2026-06)"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_round_trip_and_months_end_on_their_last_day() {
        let d = Date::parse("2026-12-01").unwrap();
        assert_eq!(Date::from_days(d.days()), d);
        assert_eq!(Date::parse("1970-01-01").unwrap().days(), 0);
        let june = Date::parse("2026-06").unwrap();
        assert_eq!(june.to_string(), "2026-06");
        assert_eq!(june.human(), "June 2026");
        assert_eq!(
            Date::parse("2026-06-30").unwrap().days(),
            june.days(),
            "a month is its last day"
        );
        assert_eq!(Date::parse("2026-09-01").unwrap().days_until(&d), 91);
        assert!(Date::parse("2026-02-30").is_none());
        assert!(Date::parse("2026-13").is_none());
        assert!(Date::parse("soon").is_none());
        assert_eq!(
            Date::parse("2026-10-28T15:16:30Z").unwrap().to_string(),
            "2026-10-28"
        );
        assert_eq!(Date::parse("2028-02").unwrap().human(), "February 2028");
    }
}
