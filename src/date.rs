//! The `Date` field a server sends (RFC 9110 section 6.6.1): the wall
//! clock the driver hands over, in IMF-fixdate form
//! (`Sun, 06 Nov 1994 08:49:37 GMT`), formatted at most once per second.
//! The core reads no clock of its own.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The length of an IMF-fixdate.
pub(crate) const LEN: usize = 29;

/// The length of the field line `date: <IMF-fixdate>\r\n`.
pub(crate) const LINE: usize = LEN + 8;

/// 9999-12-31 23:59:59 UTC, the last second with a four-digit year; a
/// clock past it is written as it.
const MAX_SECS: u64 = 253_402_300_799;

/// The field line of the last second formatted, kept while the clock
/// stays in that second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DateCache {
    /// The second formatted, from its start to the next one's: a time
    /// between them needs two comparisons, not a subtraction.
    from: SystemTime,
    until: SystemTime,
    /// `date: <IMF-fixdate>\r\n`, the name in lower case.
    pub(crate) line: [u8; LINE],
}

impl DateCache {
    /// The date of `now`: of its whole seconds since the Unix epoch (a
    /// clock before the epoch counts as the epoch, one after year 9999 as
    /// its last second).
    #[cold]
    pub(crate) fn new(now: SystemTime) -> Self {
        let secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let secs = secs.min(MAX_SECS);
        let from = UNIX_EPOCH + Duration::from_secs(secs);
        let mut line = *b"date: Thu, 01 Jan 1970 00:00:00 GMT\r\n";
        line[6..6 + LEN].copy_from_slice(&imf_fixdate(secs));
        DateCache {
            from,
            until: from + Duration::from_secs(1),
            line,
        }
    }

    /// Moves to `now`: formats only when it is in another second.
    #[inline]
    pub(crate) fn update(&mut self, now: SystemTime) {
        if now < self.from || now >= self.until {
            *self = DateCache::new(now);
        }
    }

    /// The field value.
    #[cfg(test)]
    fn text(&self) -> &[u8] {
        &self.line[6..6 + LEN]
    }
}

/// The proleptic Gregorian date of a day counted from 1970-01-01:
/// (year, month 1-12, day 1-31). The era arithmetic of H. Hinnant's
/// `civil_from_days`, for days on or after the epoch.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Counted from 0000-03-01, so that the leap day ends a year.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097; // day of the 400-year era, [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of the March year, [0, 365]
    let mp = (5 * doy + 2) / 153; // month from March, [0, 11]
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = era * 400 + yoe + u64::from(month <= 2);
    (year, month, day)
}

/// `secs` since the epoch as an IMF-fixdate (RFC 9110 section 5.6.7):
/// `day-name "," SP date1 SP time-of-day SP GMT`.
pub(crate) fn imf_fixdate(secs: u64) -> [u8; LEN] {
    const DAYS: &[u8; 21] = b"ThuFriSatSunMonTueWed"; // 1970-01-01 was a Thursday
    const MONTHS: &[u8; 36] = b"JanFebMarAprMayJunJulAugSepOctNovDec";
    let secs = secs.min(MAX_SECS);
    let days = secs / 86_400;
    let in_day = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    let mut out = *b"Thu, 01 Jan 1970 00:00:00 GMT";
    let weekday = (days % 7) as usize * 3;
    out[..3].copy_from_slice(&DAYS[weekday..weekday + 3]);
    let two = |out: &mut [u8], n: u64| {
        out[0] = b'0' + (n / 10) as u8;
        out[1] = b'0' + (n % 10) as u8;
    };
    two(&mut out[5..7], day);
    let month = (month - 1) as usize * 3;
    out[8..11].copy_from_slice(&MONTHS[month..month + 3]);
    two(&mut out[12..14], year / 100);
    two(&mut out[14..16], year % 100);
    two(&mut out[17..19], in_day / 3600);
    two(&mut out[20..22], in_day / 60 % 60);
    two(&mut out[23..25], in_day % 60);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::time::Duration;

    fn text(secs: u64) -> String {
        String::from_utf8(imf_fixdate(secs).to_vec()).unwrap()
    }

    #[test]
    fn known_dates() {
        for (secs, date) in [
            (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
            (784_111_777, "Sun, 06 Nov 1994 08:49:37 GMT"), // RFC 9110's example
            (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"), // a leap day of a 400th year
            (951_868_799, "Tue, 29 Feb 2000 23:59:59 GMT"),
            (951_868_800, "Wed, 01 Mar 2000 00:00:00 GMT"),
            (1_078_012_800, "Sun, 29 Feb 2004 00:00:00 GMT"),
            (1_078_099_200, "Mon, 01 Mar 2004 00:00:00 GMT"),
            (4_107_542_400, "Mon, 01 Mar 2100 00:00:00 GMT"), // 2100 has no 29 Feb
            (4_107_456_000, "Sun, 28 Feb 2100 00:00:00 GMT"),
            (1_234_567_890, "Fri, 13 Feb 2009 23:31:30 GMT"),
            (2_147_483_647, "Tue, 19 Jan 2038 03:14:07 GMT"),
            (1_798_761_599, "Thu, 31 Dec 2026 23:59:59 GMT"),
            (MAX_SECS, "Fri, 31 Dec 9999 23:59:59 GMT"),
            (u64::MAX, "Fri, 31 Dec 9999 23:59:59 GMT"),
        ] {
            assert_eq!(text(secs), date, "{secs}");
        }
    }

    /// The inverse, written another way: days from a civil date by
    /// counting whole years and months.
    fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
        let leap = |y: u64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let mut days = (1970..year).map(|y| 365 + u64::from(leap(y))).sum::<u64>();
        let lengths = [
            31,
            28 + u64::from(leap(year)),
            31,
            30,
            31,
            30,
            31,
            31,
            30,
            31,
            30,
            31,
        ];
        days += lengths[..month as usize - 1].iter().sum::<u64>();
        days + day - 1
    }

    /// Reads an IMF-fixdate back to seconds, checking every piece's form.
    fn parse(text: &str) -> u64 {
        let b = text.as_bytes();
        assert_eq!(b.len(), LEN);
        assert_eq!(&text[3..5], ", ");
        assert_eq!(&text[25..], " GMT");
        let num = |r: std::ops::Range<usize>| text[r].parse::<u64>().unwrap();
        let months = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        let month = months.iter().position(|m| *m == &text[8..11]).unwrap() as u64 + 1;
        let (year, day) = (num(12..16), num(5..7));
        let days = days_from_civil(year, month, day);
        let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
        assert_eq!(&text[..3], weekdays[(days % 7) as usize]);
        let (h, m, s) = (num(17..19), num(20..22), num(23..25));
        assert!(h < 24 && m < 60 && s < 60);
        days * 86_400 + h * 3600 + m * 60 + s
    }

    proptest! {
        #[test]
        fn formats_back_to_the_same_second(secs in 0..=MAX_SECS) {
            prop_assert_eq!(parse(&text(secs)), secs);
        }
    }

    #[test]
    fn every_day_to_2400_follows_the_day_before() {
        // Counted one day at a time, month lengths and leap years by hand.
        let leap = |y: u64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let (mut y, mut m, mut d) = (1970, 1, 1);
        for days in 0..days_from_civil(2400, 12, 31) {
            assert_eq!(civil_from_days(days), (y, m, d), "day {days}");
            let length = match m {
                2 => 28 + u64::from(leap(y)),
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            d += 1;
            if d > length {
                (m, d) = (m + 1, 1);
            }
            if m > 12 {
                (y, m) = (y + 1, 1);
            }
        }
    }

    #[test]
    fn the_cache_formats_once_a_second() {
        let t = UNIX_EPOCH + Duration::from_millis(784_111_777_250);
        let mut cache = DateCache::new(t);
        assert_eq!(cache.text(), b"Sun, 06 Nov 1994 08:49:37 GMT");
        cache.update(t + Duration::from_millis(700));
        assert_eq!(cache.text(), b"Sun, 06 Nov 1994 08:49:37 GMT");
        cache.update(t + Duration::from_millis(750));
        assert_eq!(cache.text(), b"Sun, 06 Nov 1994 08:49:38 GMT");
        // A clock that steps back is followed.
        cache.update(t - Duration::from_secs(1));
        assert_eq!(cache.text(), b"Sun, 06 Nov 1994 08:49:36 GMT");
        cache.update(UNIX_EPOCH - Duration::from_secs(5));
        assert_eq!(cache.text(), b"Thu, 01 Jan 1970 00:00:00 GMT");
    }
}
