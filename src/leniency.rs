//! Leniency: named tolerances, each an exception to one strict parsing rule.
//!
//! h1proto refuses what RFC 9112 lets a recipient refuse. Some peers send
//! such messages anyway (embedded servers, old appliances, hand-written
//! CGI), and a client may have to read them. Each tolerance here loosens one
//! rule and nothing else. Requests and responses have separate tolerances,
//! in separate types, so a response tolerance can never loosen request
//! parsing:
//!
//! | tolerance | [`RequestLeniency`] | [`ResponseLeniency`] |
//! |---|---|---|
//! | [`no_space_after_status`](ResponseLeniency::no_space_after_status) | | on by default |
//! | [`space_before_colon`](ResponseLeniency::space_before_colon) | | off |
//! | [`skip_invalid_fields`](ResponseLeniency::skip_invalid_fields) | | off |
//! | [`bare_lf`](RequestLeniency::bare_lf) | off | off |
//! | [`obs_fold`](RequestLeniency::obs_fold) | off | |
//! | [`chunked_with_content_length`](RequestLeniency::chunked_with_content_length) | off | |
//!
//! Every request tolerance is off by default: a server stays strict. The one
//! response tolerance on by default, `no_space_after_status`, cannot change
//! where a message ends, and curl, h11 and httparse all accept what it
//! accepts. `docs/parsing.md` and `docs/security.md` in the repository give
//! the risk of turning each tolerance on, and say which tolerances can make
//! h1proto read a message's length differently from another parser.
//!
//! When a strict decoder refuses input that a tolerance would accept, the
//! error says so: [`Error::tolerance`](crate::Error::tolerance) names the tolerance,
//! and the error's text ends with "(enable `NAME` to accept)".
//!
//! ```
//! use h1proto::{Limits, ResponseDecoder, leniency::ResponseLeniency};
//! use h1proto::leniency::Tolerance;
//!
//! let mut lenient = ResponseLeniency::strict();
//! lenient.space_before_colon = true;
//! lenient.set(Tolerance::BareLf, true).unwrap();
//! let decoder = ResponseDecoder::with_leniency(Limits::default(), lenient);
//! assert!(decoder.leniency().is_on(Tolerance::BareLf));
//! assert!(!decoder.leniency().is_on(Tolerance::NoSpaceAfterStatus));
//! ```

use std::fmt;

/// A party's leniency type's calls, written once for both: `strict`,
/// `all`, `is_on`, `set`, the field that holds each of its tolerances,
/// and the head reader's rules made of them (over `base`, what the party
/// is and the rules it always applies).
macro_rules! tolerances {
    ($party:ident {
        $(#[$strict:meta])* strict,
        $(#[$all:meta])* all,
        rules: $base:expr,
        $($tolerance:ident => $field:ident,)+
    }) => {
        impl $party {
            $(#[$strict])*
            pub const fn strict() -> Self {
                $party { $($field: false),+ }
            }

            $(#[$all])*
            pub const fn all() -> Self {
                $party { $($field: true),+ }
            }

            /// Whether `tolerance` is on (`false` for a tolerance of the
            /// other party).
            pub fn is_on(&self, tolerance: Tolerance) -> bool {
                self.clone().slot(tolerance).is_some_and(|on| *on)
            }

            /// Turns `tolerance` on or off.
            ///
            /// # Errors
            ///
            /// [`NotForThisParty`] for a tolerance of the other party.
            pub fn set(&mut self, tolerance: Tolerance, on: bool) -> Result<(), NotForThisParty> {
                *self.slot(tolerance).ok_or(NotForThisParty(tolerance))? = on;
                Ok(())
            }

            /// The field that holds `tolerance`, if it is this party's.
            fn slot(&mut self, tolerance: Tolerance) -> Option<&mut bool> {
                Some(match tolerance {
                    $(Tolerance::$tolerance => &mut self.$field,)+
                    _ => return None,
                })
            }
        }

        impl From<$party> for Rules {
            fn from(leniency: $party) -> Rules {
                Rules { $($field: leniency.$field,)+ ..$base }
            }
        }
    };
}

/// Defines [`Tolerance`]: each tolerance with its documentation, its name
/// and what the input had that it would accept (for error texts), so
/// that every list of them is written once.
macro_rules! tolerance_list {
    ($($(#[$doc:meta])* $tolerance:ident => $name:literal, $refusal:literal,)+) => {
        /// One leniency tolerance, by name: what an [`Error`](crate::Error) names, and
        /// what [`RequestLeniency::set`] and [`ResponseLeniency::set`] take.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Tolerance {
            $($(#[$doc])* $tolerance,)+
        }

        impl Tolerance {
            /// Every tolerance, in the order of the documentation.
            pub const ALL: [Tolerance; [$(Tolerance::$tolerance),+].len()] =
                [$(Tolerance::$tolerance),+];

            /// The tolerance's name: the field of [`RequestLeniency`] /
            /// [`ResponseLeniency`] that turns it on, and the name the conformance
            /// corpus uses (`no_space_after_status`, ...).
            pub fn name(self) -> &'static str {
                match self {
                    $(Tolerance::$tolerance => $name,)+
                }
            }

            /// What the input had that this tolerance would accept, for error texts.
            pub(crate) fn refusal(self) -> &'static str {
                match self {
                    $(Tolerance::$tolerance => $refusal,)+
                }
            }
        }
    };
}

tolerance_list! {
    /// `no_space_after_status` (responses): a status line may end right
    /// after the three digits of the code.
    NoSpaceAfterStatus => "no_space_after_status", "status line without SP after the code",
    /// `space_before_colon` (responses): spaces and tabs between a field
    /// name and its colon are ignored.
    SpaceBeforeColon => "space_before_colon", "whitespace between a field name and its colon",
    /// `skip_invalid_fields` (responses): a field line that is not a valid
    /// field is skipped instead of refusing the message.
    SkipInvalidFields => "skip_invalid_fields", "field line that is not a valid field",
    /// `bare_lf` (requests and responses): LF alone ends a line wherever
    /// CRLF may.
    BareLf => "bare_lf", "line ended by LF alone",
    /// `obs_fold` (requests): obs-fold in a request's head is replaced by
    /// one SP.
    ObsFold => "obs_fold", "obs-fold in a request field line",
    /// `chunked_with_content_length` (requests): a request with both
    /// `Transfer-Encoding: chunked` and `Content-Length` is read as
    /// chunked, and the connection closes after it.
    ChunkedWithContentLength => "chunked_with_content_length",
        "request with both Transfer-Encoding: chunked and Content-Length",
}

impl Tolerance {
    /// The tolerance called `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Tolerance> {
        Tolerance::ALL.into_iter().find(|s| s.name() == name)
    }

    /// `true` for a tolerance of request parsing ([`RequestLeniency`]).
    pub fn applies_to_requests(self) -> bool {
        RequestLeniency::strict().slot(self).is_some()
    }

    /// `true` for a tolerance of response parsing ([`ResponseLeniency`]).
    pub fn applies_to_responses(self) -> bool {
        ResponseLeniency::strict().slot(self).is_some()
    }
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A tolerance that does not exist for the party it was set on (a response
/// tolerance on [`RequestLeniency`], or the reverse).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotForThisParty(pub Tolerance);

impl fmt::Display for NotForThisParty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` does not apply to this party", self.0)
    }
}

impl std::error::Error for NotForThisParty {}

/// The leniency tolerances of request parsing (the server party). All off by
/// default ([`RequestLeniency::strict`]).
///
/// ```
/// let mut config = h1proto::Config::default();
/// config.request_leniency.obs_fold = true;
/// let server = h1proto::ServerConnection::new(config);
/// # let _ = server;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct RequestLeniency {
    /// LF alone ends a line wherever CRLF may: the request line, field
    /// lines, the empty line ending the head, empty lines before the
    /// request line, chunk-size lines, the line end after chunk data, and
    /// trailer lines. Off by default: it can make h1proto and a front end
    /// disagree on where a line, and so a message, ends.
    pub bare_lf: bool,
    /// obs-fold (a field line starting with SP or HTAB) in a request head
    /// is replaced by one SP and joins the value above it, as in responses.
    /// A fold with no field above it, and a fold in a trailer section,
    /// stay refused. Off by default: a front end that reads the folded
    /// line as a field of its own sees a field h1proto does not.
    pub obs_fold: bool,
    /// A request with `Transfer-Encoding: chunked` (one final `chunked`)
    /// and a valid `Content-Length` is read as chunked; `Content-Length`
    /// is removed from the decoded head, and the keep-alive verdict is
    /// `Close(FramingConflict)`, so the connection closes after the
    /// response. Off by default: this is the request smuggling pattern. A
    /// front end that framed the request by its `Content-Length` and
    /// forwards the rest as the next request is desynchronised from
    /// h1proto (RFC 9112 section 6.1 lets a server process such a request
    /// only if it then closes the connection).
    pub chunked_with_content_length: bool,
}

tolerances!(RequestLeniency {
    /// Every tolerance off: RFC 9112 read strictly (the default).
    strict,
    /// Every request tolerance on.
    all,
    rules: Rules { request: true, ..Rules::default() },
    BareLf => bare_lf,
    ObsFold => obs_fold,
    ChunkedWithContentLength => chunked_with_content_length,
});

/// The leniency tolerances of response parsing (the client party).
///
/// The default turns on [`no_space_after_status`](Self::no_space_after_status)
/// only; [`ResponseLeniency::strict`] turns everything off.
///
/// ```
/// let mut config = h1proto::Config::default();
/// config.response_leniency = h1proto::leniency::ResponseLeniency::all();
/// let client = h1proto::ClientConnection::new(config);
/// # let _ = client;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ResponseLeniency {
    /// A status line may end right after the three digits of the code
    /// (`HTTP/1.1 200`); the reason phrase is then empty. On by default:
    /// the line ends where it ends either way, so no reading of the
    /// message's length changes, and curl, h11, httparse, picohttpparser
    /// and browsers accept it.
    pub no_space_after_status: bool,
    /// Spaces and tabs between a field name and its colon (`Server : x`)
    /// are ignored. Off by default: applied to `Content-Length` or
    /// `Transfer-Encoding`, it makes h1proto frame by a field that a
    /// parser keeping the space in the name, or skipping the line, does
    /// not see (the pattern of llhttp's CVE-2021-22959).
    pub space_before_colon: bool,
    /// A field line that is not a valid field is skipped instead of
    /// refusing the message: a line without a colon, a name that is not a
    /// token (whitespace before the colon included, unless
    /// [`space_before_colon`](Self::space_before_colon) is on), a
    /// whitespace-preceded line with no field above it (RFC 9112 section
    /// 2.2), and the obs-fold continuations of a skipped line. A line with
    /// an invalid value is still refused. Off by default: a parser that
    /// reads the skipped line as a field (a lenient one that trims a name,
    /// say) can see a `Content-Length` or `Transfer-Encoding` h1proto
    /// skipped.
    pub skip_invalid_fields: bool,
    /// LF alone ends a line wherever CRLF may: the status line, field
    /// lines, the empty line ending the head, chunk-size lines, the line
    /// end after chunk data, and trailer lines. Off by default: parsers
    /// differ on it (h11 accepts a bare LF in a head but not after a chunk
    /// size), so it can change where a message ends.
    pub bare_lf: bool,
}

impl Default for ResponseLeniency {
    /// The client defaults: only
    /// [`no_space_after_status`](Self::no_space_after_status) on.
    fn default() -> Self {
        ResponseLeniency {
            no_space_after_status: true,
            ..ResponseLeniency::strict()
        }
    }
}

tolerances!(ResponseLeniency {
    /// Every tolerance off: RFC 9112 read strictly.
    strict,
    /// Every response tolerance on: reads what curl reads, and more (curl
    /// refuses a field line without a colon).
    all,
    // RFC 9112 section 5.2: a user agent replaces obs-fold with SP.
    rules: Rules { obs_fold: true, ..Rules::default() },
    NoSpaceAfterStatus => no_space_after_status,
    SpaceBeforeColon => space_before_colon,
    SkipInvalidFields => skip_invalid_fields,
    BareLf => bare_lf,
});

pub(crate) use flat::Rules;

/// Holds [`Rules`] apart: public only so that the role trait can name it,
/// and private to the crate.
mod flat {
    /// What the head reader consults: the tolerances of one party, flattened, and the
    /// party itself (so that an error names only a tolerance of that party).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct Rules {
        pub(crate) request: bool,
        pub(crate) bare_lf: bool,
        pub(crate) obs_fold: bool,
        pub(crate) chunked_with_content_length: bool,
        pub(crate) no_space_after_status: bool,
        pub(crate) space_before_colon: bool,
        pub(crate) skip_invalid_fields: bool,
    }
}

impl Rules {
    /// The tolerance to name in an error, if it exists on this party.
    pub(crate) fn hint(&self, tolerance: Tolerance) -> Option<Tolerance> {
        let exists = if self.request {
            tolerance.applies_to_requests()
        } else {
            tolerance.applies_to_responses()
        };
        exists.then_some(tolerance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_sides_are_separate() {
        for s in Tolerance::ALL {
            assert_eq!(Tolerance::from_name(s.name()), Some(s));
            let mut req = RequestLeniency::strict();
            let mut res = ResponseLeniency::strict();
            assert_eq!(req.set(s, true).is_ok(), s.applies_to_requests());
            assert_eq!(res.set(s, true).is_ok(), s.applies_to_responses());
            assert_eq!(req.is_on(s), s.applies_to_requests());
            assert_eq!(res.is_on(s), s.applies_to_responses());
            assert_eq!(RequestLeniency::all().is_on(s), s.applies_to_requests());
            assert_eq!(ResponseLeniency::all().is_on(s), s.applies_to_responses());
        }
        assert_eq!(Tolerance::from_name("lenient"), None);
    }

    #[test]
    fn defaults() {
        assert_eq!(RequestLeniency::default(), RequestLeniency::strict());
        let res = ResponseLeniency::default();
        for s in Tolerance::ALL {
            assert_eq!(res.is_on(s), s == Tolerance::NoSpaceAfterStatus, "{s}");
        }
    }

    #[test]
    fn a_response_tolerance_never_loosens_request_rules() {
        let rules = Rules::from(RequestLeniency::strict());
        assert!(!rules.obs_fold && !rules.bare_lf);
        assert!(!rules.no_space_after_status && !rules.space_before_colon);
        assert!(!rules.skip_invalid_fields);
        assert_eq!(rules.hint(Tolerance::SpaceBeforeColon), None);
        assert_eq!(rules.hint(Tolerance::ObsFold), Some(Tolerance::ObsFold));
        let rules = Rules::from(ResponseLeniency::strict());
        assert_eq!(rules.hint(Tolerance::ChunkedWithContentLength), None);
        assert_eq!(rules.hint(Tolerance::BareLf), Some(Tolerance::BareLf));
    }
}
