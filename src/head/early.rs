//! Early refusal: the bytes of a head that has not ended yet are checked as
//! they arrive, so that a head is refused at the first byte that proves it
//! invalid instead of once it is complete or has reached
//! `max_head_bytes`.
//!
//! [`EarlyCheck`] reads a head left to right, one byte after the other,
//! and remembers where it stopped: each byte is checked once, however the
//! head arrives. It knows the grammar of each line of a head (the request
//! or status line, field lines, obs-fold, the empty line that ends the
//! head) and the decoder's leniency switches, and it is the one that
//! decides what a line-local fault is called and where it is: the first
//! byte that no continuation of the line could make valid decides the
//! error, so the error does not depend on how much of the head had
//! arrived. A CR decides nothing until the byte after it (CRLF ends a
//! line; CR before anything else is a byte of the line).
//!
//! A head that arrives whole never runs it: the parser reads it, and only
//! if the parser refuses it is the check run over the head (from where an
//! earlier read left it), so that a refusal names the same fault whether
//! the head came in one read or in many. What only a complete head can
//! show (a missing `Host`, framing fields in conflict) is not its concern.

use crate::error::{Error, ErrorKind};
use crate::grammar::{is_target_char, is_tchar, is_text};
use crate::leniency::{Rules, Switch};

use super::parse::form_fits;

/// The longest field name `http` takes (`HeaderName::from_bytes`).
const MAX_NAME: usize = (1 << 16) - 1;

/// `HTTP/` DIGIT `.` DIGIT, with `0` standing for a digit.
const VERSION: &[u8; 8] = b"HTTP/0.0";

/// Where in its line the next byte falls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// The method of a request line; `n` bytes of it so far.
    Method,
    /// The request-target; `n` bytes so far, from `mark`.
    Target,
    /// The version of a request line; `n` bytes of it so far.
    Version,
    /// The version of a status line; `n` bytes so far.
    StatusVersion,
    /// The status code; `n` digits so far.
    Code,
    /// Right after the status code.
    AfterCode,
    /// The reason phrase.
    Reason,
    /// The first byte of a field line, or the empty line ending the head.
    LineStart,
    /// A field name; `n` bytes so far.
    Name,
    /// Whitespace after a field name.
    NameSpace,
    /// A field value; the colon is at `mark`.
    Value,
    /// An obs-fold continuation that joins the field above.
    Fold,
    /// A line the switches skip (`skip_invalid_fields`): its bytes are not
    /// looked at.
    Skip,
    /// After the empty line: the head is complete.
    End,
}

/// The check of the heads of one stream (see the module docs), and the
/// empty lines skipped before a request line.
///
/// Its state is boxed and made by the first head that arrives in pieces
/// (or the first empty line skipped): a decoder whose heads all arrive
/// whole carries one word for it and never touches it.
#[derive(Debug, Default)]
pub(crate) struct EarlyCheck(Option<Box<State>>);

#[derive(Debug, Default)]
struct State {
    check: Check,
    /// Empty lines skipped before a request line, and the stream offset
    /// where the last one ended: the count goes on only for a request line
    /// that starts there.
    empty_lines: (u8, u64),
}

/// The check of one head.
#[derive(Debug)]
struct Check {
    /// Where in the stream the head being checked starts: a check of a
    /// head that starts elsewhere starts over, so that nothing needs
    /// resetting when a head ends.
    head: u64,
    /// Bytes of the head checked so far.
    checked: usize,
    at: At,
    /// Where the current line starts.
    line: usize,
    /// A count within the current element (see [`At`]).
    n: usize,
    /// The start of the target, of the version (request line), or the
    /// colon of a field line.
    mark: usize,
    /// The last byte checked is a CR whose meaning waits for the next byte.
    cr: bool,
    /// A field line came before the current line.
    after_field_line: bool,
    /// A field was accepted in this head: an obs-fold can join it.
    field_above: bool,
    /// The last field line was skipped: so are its obs-fold continuations.
    skipping: bool,
}

impl Default for Check {
    fn default() -> Self {
        Check {
            head: 0,
            checked: 0,
            at: At::Method,
            line: 0,
            n: 0,
            mark: 0,
            cr: false,
            after_field_line: false,
            field_above: false,
            skipping: false,
        }
    }
}

impl EarlyCheck {
    /// How many bytes of the head that starts at byte `at` of the stream
    /// have been checked.
    #[inline]
    pub(crate) fn checked(&self, at: u64) -> usize {
        match &self.0 {
            Some(state) if state.check.head == at => state.check.checked,
            _ => 0,
        }
    }

    /// Checks the bytes of `head`, the head that starts at byte `at` of the
    /// stream, from where the last call for it stopped up to `upto` (what
    /// was checked must still be there). `Err` is the fault found, placed
    /// within the head (its line, and the field at fault).
    ///
    /// `rules` gives the side (`rules.request`) and its switches;
    /// `max_target` bounds a request-target.
    pub(crate) fn check(
        &mut self,
        head: &[u8],
        at: u64,
        upto: usize,
        rules: &Rules,
        max_target: usize,
    ) -> Result<(), Error> {
        let state = self.0.get_or_insert_with(Box::default);
        state.check.check(head, at, upto, rules, max_target)
    }

    /// Counts an empty line, skipped from byte `from` of the stream to byte
    /// `next`, before a request line: `Err` past [`MAX_EMPTY_LINES`]. The
    /// count goes on from the line counted last only if it ended at
    /// `from`.
    pub(crate) fn empty_line(&mut self, from: u64, next: u64) -> Result<(), ErrorKind> {
        let state = self.0.get_or_insert_with(Box::default);
        let (count, end) = &mut state.empty_lines;
        // Lines before an earlier request line do not count.
        if *end != from {
            *count = 0;
        }
        if *count == MAX_EMPTY_LINES {
            return Err(ErrorKind::TooManyEmptyLines);
        }
        *count += 1;
        *end = next;
        Ok(())
    }

    /// Where the empty lines skipped last ended in the stream (0 if none
    /// was).
    pub(crate) fn empty_lines_end(&self) -> u64 {
        self.0.as_ref().map_or(0, |state| state.empty_lines.1)
    }
}

/// Empty lines skipped before one request line (RFC 9112 section 2.2 asks
/// to ignore at least one; Apache httpd ignores ten); one more is
/// [`ErrorKind::TooManyEmptyLines`].
pub(crate) const MAX_EMPTY_LINES: u8 = 10;

impl Check {
    fn check(
        &mut self,
        head: &[u8],
        at: u64,
        upto: usize,
        rules: &Rules,
        max_target: usize,
    ) -> Result<(), Error> {
        if self.head != at || self.checked == 0 {
            *self = Check {
                head: at,
                at: if rules.request {
                    At::Method
                } else {
                    At::StatusVersion
                },
                ..Check::default()
            };
        }
        let mut i = self.checked;
        if self.cr && i < upto {
            // The last call ended on a CR: the byte after it decides.
            self.cr = false;
            if head[i] == b'\n' {
                self.line_end(head, i, true, rules)?;
                i += 1;
            } else {
                // That CR ends nothing: it is a byte of the line.
                self.byte(head, i - 1, b'\r', rules, max_target)?;
            }
        }
        while i < upto {
            // A run of bytes that change nothing but a count, read at once.
            let (j, bound) = match self.at {
                At::Value | At::Fold | At::Reason => (run(head, i, upto, is_text), usize::MAX),
                At::Method => (run(head, i, upto, is_tchar), usize::MAX),
                At::Name => (run(head, i, upto, is_tchar), MAX_NAME),
                At::Target => (run(head, i, upto, is_target_char), max_target),
                At::Skip => (run(head, i, upto, |b| b != b'\r' && b != b'\n'), usize::MAX),
                At::Version | At::StatusVersion if self.n < VERSION.len() => {
                    let n = self.n;
                    let matches = head[i..upto]
                        .iter()
                        .zip(&VERSION[n..])
                        .take_while(|&(&b, &c)| b == c || (c == b'0' && b.is_ascii_digit()))
                        .count();
                    (i + matches, usize::MAX)
                }
                _ => (i, usize::MAX),
            };
            if j > i {
                self.n += j - i;
                if self.n > bound {
                    // Past a bound inside the run: the byte that crossed
                    // it decides.
                    let crossing = j - (self.n - bound);
                    self.n = bound;
                    self.byte(head, crossing, head[crossing], rules, max_target)?;
                    i = crossing + 1;
                    continue;
                }
                i = j;
                if i == upto {
                    break;
                }
            }
            match head[i] {
                // The usual ways out of a run, without the general case.
                b':' if self.at == At::Name => self.field(i),
                b if self.at == At::LineStart && is_tchar(b) => {
                    self.at = At::Name;
                    self.n = 1;
                }
                b'\r' if i + 1 == upto => self.cr = true,
                b'\r' if head[i + 1] == b'\n' => {
                    self.line_end(head, i + 1, true, rules)?;
                    i += 1;
                }
                b'\n' => self.line_end(head, i, false, rules)?,
                // A bare CR is a byte of the line like any other.
                b => self.byte(head, i, b, rules, max_target)?,
            }
            i += 1;
        }
        self.checked = upto;
        Ok(())
    }

    /// One byte of a line, neither LF nor the CR of a line end.
    fn byte(
        &mut self,
        head: &[u8],
        i: usize,
        b: u8,
        rules: &Rules,
        max_target: usize,
    ) -> Result<(), Error> {
        use ErrorKind::*;
        match self.at {
            At::Method => {
                if is_tchar(b) {
                    self.n += 1;
                } else if b == b' ' && self.n > 0 {
                    self.at = At::Target;
                    self.mark = i + 1;
                    self.n = 0;
                } else {
                    return Err(start_line(InvalidMethod));
                }
            }
            At::Target => {
                if is_target_char(b) {
                    self.n += 1;
                    if self.n > max_target {
                        return Err(start_line(TargetTooLong));
                    }
                } else if b == b' ' && self.n > 0 {
                    // The target is whole: its form must fit the method.
                    let method = &head[..self.mark - 1];
                    if !form_fits(method, &head[self.mark..i]) {
                        return Err(start_line(InvalidTarget));
                    }
                    self.at = At::Version;
                    self.mark = i + 1;
                    self.n = 0;
                } else {
                    return Err(start_line(InvalidTarget));
                }
            }
            At::Version | At::StatusVersion if self.n < VERSION.len() => {
                let ok = match VERSION[self.n] {
                    b'0' => b.is_ascii_digit(),
                    c => b == c,
                };
                if !ok {
                    return Err(start_line(InvalidVersion));
                }
                self.n += 1;
            }
            At::Version => return Err(start_line(InvalidStartLine)),
            At::StatusVersion => {
                if b != b' ' {
                    return Err(start_line(InvalidStartLine));
                }
                if head[self.line + 5] != b'1' {
                    return Err(start_line(UnsupportedVersion));
                }
                self.at = At::Code;
                self.n = 0;
            }
            At::Code => {
                // Three digits, 100 to 999 (`StatusCode::from_bytes`).
                if !b.is_ascii_digit() || (self.n == 0 && b == b'0') {
                    return Err(start_line(InvalidStatus));
                }
                self.n += 1;
                if self.n == 3 {
                    self.at = At::AfterCode;
                }
            }
            At::AfterCode => {
                if b != b' ' {
                    return Err(start_line(InvalidStatus));
                }
                self.at = At::Reason;
            }
            At::Reason => {
                if !is_text(b) {
                    return Err(start_line(InvalidReason));
                }
            }
            At::LineStart => {
                if b == b' ' || b == b'\t' {
                    self.fold(rules)?;
                } else if is_tchar(b) {
                    self.at = At::Name;
                    self.n = 1;
                } else {
                    self.invalid_name(head, i, rules)?;
                }
            }
            At::Name => {
                if is_tchar(b) && self.n < MAX_NAME {
                    self.n += 1;
                } else if b == b':' {
                    self.field(i);
                } else if b == b' ' || b == b'\t' {
                    self.at = At::NameSpace;
                } else {
                    self.invalid_name(head, i, rules)?;
                }
            }
            At::NameSpace => {
                if b == b':' {
                    if rules.space_before_colon {
                        self.field(i);
                    } else if rules.skip_invalid_fields {
                        self.skip();
                    } else {
                        let name = head[self.line..i].trim_ascii_end();
                        let e = refuse(rules, WhitespaceBeforeColon, Switch::SpaceBeforeColon);
                        return Err(e.at(self.line as u64, Some(name)));
                    }
                } else if b != b' ' && b != b'\t' {
                    self.invalid_name(head, i, rules)?;
                }
            }
            At::Value | At::Fold => {
                if !is_text(b) {
                    let name =
                        (self.at == At::Value).then(|| head[self.line..self.mark].trim_ascii_end());
                    return Err(Error::from(InvalidFieldValue).at(self.line as u64, name));
                }
            }
            At::Skip | At::End => {}
        }
        Ok(())
    }

    /// A field line starting with SP or HTAB: a continuation of the field
    /// above (obs-fold) where the switches allow one, else refused or, by
    /// `skip_invalid_fields`, skipped.
    fn fold(&mut self, rules: &Rules) -> Result<(), Error> {
        if self.skipping {
            self.at = At::Skip;
        } else if rules.obs_fold && self.field_above {
            self.at = At::Fold;
        } else if rules.obs_fold && rules.skip_invalid_fields {
            self.skip();
        } else {
            let hint = if rules.obs_fold {
                Some(Switch::SkipInvalidFields)
            } else if self.after_field_line {
                Some(Switch::ObsFold)
            } else {
                None
            };
            let error = Error::refused(ErrorKind::ObsFold, hint.and_then(|s| rules.hint(s)));
            return Err(error.at(self.line as u64, None));
        }
        Ok(())
    }

    /// A field name (the bytes before `colon`) that is valid.
    fn field(&mut self, colon: usize) {
        self.at = At::Value;
        self.mark = colon;
        self.skipping = false;
        self.field_above = true;
    }

    fn skip(&mut self) {
        self.at = At::Skip;
        self.skipping = true;
    }

    /// Byte `i` cannot be part of the field name it is in: the line is
    /// skipped (`skip_invalid_fields`), or refused. The field the error
    /// names is the line up to that byte.
    fn invalid_name(&mut self, head: &[u8], i: usize, rules: &Rules) -> Result<(), Error> {
        if rules.skip_invalid_fields {
            self.skip();
            return Ok(());
        }
        let name = &head[self.line..=i];
        let name = (name != b":").then_some(name);
        let error = refuse(
            rules,
            ErrorKind::InvalidFieldName,
            Switch::SkipInvalidFields,
        );
        Err(error.at(self.line as u64, name))
    }

    /// The LF at `lf` ends the current line (after a CR when `crlf`).
    fn line_end(&mut self, head: &[u8], lf: usize, crlf: bool, rules: &Rules) -> Result<(), Error> {
        use ErrorKind::*;
        // What the line lacks at its end comes first...
        let first = self.line == 0;
        match self.at {
            At::Method | At::Target | At::StatusVersion | At::Code => {
                return Err(start_line(InvalidStartLine));
            }
            At::Version if self.n < VERSION.len() => {
                return Err(start_line(InvalidStartLine));
            }
            At::Version => {
                // `mark` is where the version starts.
                if head[self.mark + 5] != b'1' {
                    return Err(start_line(UnsupportedVersion));
                }
            }
            At::AfterCode if !rules.no_space_after_status => {
                let e = refuse(rules, InvalidStatus, Switch::NoSpaceAfterStatus);
                return Err(e.at(0, None));
            }
            At::LineStart => {
                // The empty line: the end of the head.
                if !crlf && !rules.bare_lf {
                    let e = refuse(rules, BareLineFeed, Switch::BareLf);
                    return Err(e.at(lf as u64, None));
                }
                self.at = At::End;
                return Ok(());
            }
            At::Name | At::NameSpace => {
                if rules.skip_invalid_fields {
                    self.skipping = true;
                } else {
                    let e = refuse(rules, MissingColon, Switch::SkipInvalidFields);
                    return Err(e.at(self.line as u64, None));
                }
            }
            At::AfterCode | At::Reason | At::Value | At::Fold | At::Skip | At::End => {}
        }
        // ...then how it ends.
        if !crlf && !rules.bare_lf {
            let field = (!first).then(|| field_name(&head[self.line..lf])).flatten();
            let e = refuse(rules, BareLineFeed, Switch::BareLf);
            return Err(e.at(self.line as u64, field));
        }
        self.after_field_line = !first;
        self.at = At::LineStart;
        self.line = lf + 1;
        Ok(())
    }
}

/// The error `kind` of a start line: placed at its start, no field.
fn start_line(kind: ErrorKind) -> Error {
    Error::from(kind).at(0, None)
}

fn refuse(rules: &Rules, kind: ErrorKind, switch: Switch) -> Error {
    Error::refused(kind, rules.hint(switch))
}

/// Where the run of bytes of `head[from..upto]` that `keep` takes ends.
#[inline(always)]
fn run(head: &[u8], from: usize, upto: usize, keep: impl Fn(u8) -> bool) -> usize {
    head[from..upto]
        .iter()
        .position(|&b| !keep(b))
        .map_or(upto, |n| from + n)
}

/// The name of a field line as received: the bytes before its colon
/// without the whitespace before the colon; `None` for a line that starts
/// with whitespace, has no colon or nothing before it.
fn field_name(line: &[u8]) -> Option<&[u8]> {
    if matches!(line.first(), None | Some(b' ' | b'\t')) {
        return None;
    }
    let colon = line.iter().position(|&b| b == b':')?;
    let name = line[..colon].trim_ascii_end();
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::head::names::NameCache;
    use crate::head::parse::{Lenient, request_head, response_head};
    use crate::head::scan::LineScanner;
    use crate::leniency::{RequestLeniency, ResponseLeniency};
    use bytes::Bytes;
    use bytes::BytesMut;
    use http::HeaderMap;
    use proptest::prelude::*;

    const MAX_TARGET: usize = 64;

    #[test]
    fn the_state_is_one_word_until_used() {
        assert_eq!(
            std::mem::size_of::<EarlyCheck>(),
            std::mem::size_of::<usize>()
        );
    }

    fn sides() -> Vec<Rules> {
        let mut rules = vec![
            Rules::of_requests(RequestLeniency::strict()),
            Rules::of_requests(RequestLeniency::all()),
            Rules::of_responses(ResponseLeniency::strict()),
            Rules::of_responses(ResponseLeniency::default()),
            Rules::of_responses(ResponseLeniency::all()),
        ];
        let mut skip = ResponseLeniency::strict();
        skip.skip_invalid_fields = true;
        rules.push(Rules::of_responses(skip));
        rules
    }

    /// The check of `input` fed in pieces cut at `cuts`.
    fn in_pieces(input: &[u8], cuts: &[usize], rules: &Rules) -> Result<(), Error> {
        let mut check = EarlyCheck::default();
        for &to in cuts.iter().chain([&input.len()]) {
            check.check(input, 0, to, rules, MAX_TARGET)?;
        }
        Ok(())
    }

    /// The parser's reading of a whole head, and the check's.
    fn both(head: &[u8], rules: &Rules) -> Option<(Result<(), Error>, Result<(), Error>)> {
        let mut scanner = LineScanner::default();
        let buf = BytesMut::from(head);
        let len = scanner.find_end(&buf, usize::MAX, usize::MAX).ok()??;
        if scanner.in_first_line() {
            // An empty line where the start line belongs: the decoder
            // refuses it before either runs.
            return None;
        }
        let head = Bytes::copy_from_slice(&head[..len]);
        let (ends, mut names, mut map) = (scanner.ends(), NameCache::default(), HeaderMap::new());
        // The parser's own reading, before the check names the fault.
        let t = Lenient {
            rules,
            in_head: true,
        };
        let parsed = if rules.request {
            let fold = rules.obs_fold;
            request_head(&head, ends, MAX_TARGET, fold, t, &mut names, &mut map).map(drop)
        } else {
            response_head(&head, ends, t, &mut names, &mut map).map(drop)
        };
        let checked = EarlyCheck::default().check(&head, 0, len, rules, MAX_TARGET);
        Some((parsed, checked))
    }

    fn heads() -> impl Strategy<Value = Vec<u8>> {
        const BASES: &[&[u8]] = &[
            b"GET /a?b HTTP/1.1\r\nHost: a\r\nX-Y:  z \r\n\r\n",
            b"CONNECT a:443 HTTP/1.0\r\nA: b\r\n c\r\n\r\n",
            b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
            b"POST http://a/x HTTP/1.1\r\nContent-Length: 1\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nServer: x\r\n folded\r\n\r\n",
            b"HTTP/1.0 404 \r\nA:b\r\n\r\n",
            b"HTTP/1.1 200\r\nX : y\r\n\r\n",
        ];
        let base = prop::sample::select(BASES);
        let byte = prop_oneof![
            3 => any::<u8>(),
            4 => prop::sample::select(&b"\r\n :\t/H1.0aZ(*\x00\x7f\x80"[..]),
        ];
        let edit = (any::<prop::sample::Index>(), byte, 0u8..3);
        (base, prop::collection::vec(edit, 0..4)).prop_map(|(base, edits)| {
            let mut bytes = base.to_vec();
            for (at, b, op) in edits {
                let i = at.index(bytes.len() + 1);
                match op {
                    0 if i < bytes.len() => bytes[i] = b,
                    1 => bytes.insert(i, b),
                    _ if i < bytes.len() => drop(bytes.remove(i)),
                    _ => {}
                }
            }
            bytes
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// The check never refuses a head the parser accepts, and refuses
        /// every head it refuses, at the same line: the check decides what
        /// a refused head's fault is, and it must be the first one there.
        #[test]
        fn the_check_refuses_what_the_parser_refuses_at_the_same_line(head in heads()) {
            for rules in sides() {
                let Some((parsed, checked)) = both(&head, &rules) else { continue };
                match (&parsed, &checked) {
                    (Ok(()), Ok(())) => {}
                    (Err(p), Err(c)) => prop_assert_eq!(
                        p.offset().unwrap_or(0), c.offset().unwrap_or(0),
                        "{:?} {:?}: parser {:?}, check {:?}",
                        String::from_utf8_lossy(&head), rules, p, c
                    ),
                    _ => prop_assert!(
                        false,
                        "{:?} {:?}: parser {:?}, check {:?}",
                        String::from_utf8_lossy(&head), rules, parsed, checked
                    ),
                }
            }
        }

        /// However the bytes arrive, the check finds the same fault.
        #[test]
        fn the_check_does_not_depend_on_the_reads(
            head in heads(),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
        ) {
            let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(head.len() + 1)).collect();
            cuts.sort_unstable();
            for rules in sides() {
                let whole = in_pieces(&head, &[], &rules);
                prop_assert_eq!(&in_pieces(&head, &cuts, &rules), &whole);
                let bytewise: Vec<usize> = (1..head.len()).collect();
                prop_assert_eq!(&in_pieces(&head, &bytewise, &rules), &whole);
            }
        }
    }

    #[test]
    fn a_fault_is_found_at_its_byte() {
        let request = Rules::of_requests(RequestLeniency::strict());
        let response = Rules::of_responses(ResponseLeniency::strict());
        // (input, side, bytes after which the fault is known, kind)
        let cases: &[(&[u8], &Rules, usize, ErrorKind)] = &[
            (b"G\x01", &request, 2, ErrorKind::InvalidMethod),
            (b"GET /a\rb", &request, 8, ErrorKind::InvalidTarget),
            (b"GET /\"", &request, 6, ErrorKind::InvalidTarget),
            (b"GET / HTTX", &request, 10, ErrorKind::InvalidVersion),
            (
                b"GET / HTTP/1.1x",
                &request,
                15,
                ErrorKind::InvalidStartLine,
            ),
            (
                b"GET / HTTP/1.1\r\nX\x01",
                &request,
                18,
                ErrorKind::InvalidFieldName,
            ),
            (
                b"GET / HTTP/1.1\r\nX: a\x00",
                &request,
                21,
                ErrorKind::InvalidFieldValue,
            ),
            (b"GET / HTTP/1.1\r\n b", &request, 17, ErrorKind::ObsFold),
            (b"HTTP/1.1 2x", &response, 11, ErrorKind::InvalidStatus),
            (b"HTTP/2.0 ", &response, 9, ErrorKind::UnsupportedVersion),
            (
                b"HTTP/1.1 200 O\x7f",
                &response,
                15,
                ErrorKind::InvalidReason,
            ),
        ];
        for &(input, rules, known, kind) in cases {
            let mut check = EarlyCheck::default();
            assert_eq!(
                check.check(input, 0, known - 1, rules, MAX_TARGET),
                Ok(()),
                "{input:?}"
            );
            let error = check.check(input, 0, known, rules, MAX_TARGET).unwrap_err();
            assert_eq!(error.kind(), kind, "{input:?}");
        }
    }
}
