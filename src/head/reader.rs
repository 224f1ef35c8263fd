//! The one reader of the head grammar: a request line or a status line,
//! field lines, obs-fold, and the empty line that ends a head; and, with
//! the same code, the field lines of a trailer section.
//!
//! [`Reader`] goes left to right and remembers where it stopped, so each
//! byte is read once however the section arrives, and the first byte that
//! no continuation of its line could make valid decides the error,
//! whatever the split (early refusal); an invalid field name is refused
//! where the name ends, to be named whole. A CR decides nothing until the byte
//! after it: CRLF ends a line, CR before anything else is a byte of the
//! line (and refused there: no element of a head may hold a bare CR).
//! Within a line the content comes before the line end.
//!
//! As it goes it records what it accepted ([`Record`]): the parts of the
//! start line and, for each field line, where its name and value are. The
//! `http` types, the wire view and the framing summary are built from the
//! record (`super::build`) without reading the grammar again. The
//! decoder's leniency tolerances ([`Rules`]) are options of this reader:
//! they are consulted only where the strict reading refuses.
//!
//! What only a complete head can show (a missing `Host`, framing fields
//! in conflict) is not its concern.

use http::Version;
use http::header::HeaderValue;
use memchr::memchr;

use super::names::{NameCache, same};
use super::record::{Field, NO_ENTRY, Record};
use super::target::form_fits;
use crate::error::{Error, ErrorKind};
use crate::framing::{FieldRole, FramingFields};
use crate::grammar::{is_target_char, is_tchar, run, target_end, text_end, token_end, trim_ows};
use crate::leniency::{Rules, Tolerance};

/// The longest field name `http` takes (`HeaderName::from_bytes`).
pub(crate) const MAX_NAME: usize = (1 << 16) - 1;

/// `HTTP/` DIGIT `.` DIGIT, with `0` standing for a digit.
const VERSION: &[u8; 8] = b"HTTP/0.0";

/// Empty lines skipped before one request line (RFC 9112 section 2.2 asks
/// to ignore at least one; Apache httpd ignores ten); one more is
/// [`ErrorKind::TooManyEmptyLines`].
pub(crate) const MAX_EMPTY_LINES: u8 = 10;

/// How a section is read: its kind, the tolerances and the bounds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options<'a> {
    /// A trailer section: field lines only, no obs-fold, and its faults
    /// reported once the whole section has arrived. Else the head of a
    /// request or a response, as the rules' party receives.
    pub(crate) trailers: bool,
    pub(crate) rules: &'a Rules,
    pub(crate) max_target: usize,
    /// Bytes the section may have, its empty line included.
    pub(crate) max_bytes: usize,
    /// Non-empty lines the section may have.
    pub(crate) max_lines: usize,
    /// The peer closed: no more bytes of a head will come.
    pub(crate) eof: bool,
}

/// Where in its line the next byte falls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum At {
    /// The method of a request line; `n` bytes of it so far.
    #[default]
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
    /// A field name with a byte that cannot be in one, read on to its
    /// end to be named whole.
    BadName,
    /// A field value; the colon is at `mark`.
    Value,
    /// An obs-fold continuation that joins the field above.
    Fold,
    /// A line not looked at: skipped by `skip_invalid_fields`, or after
    /// a fault of a trailer section.
    Skip,
    /// After the empty line: the section is complete.
    End,
}

/// The reader of one section at a time (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Reader {
    /// Bytes of the section read so far.
    read: usize,
    at: At,
    /// Where the current line starts.
    line: usize,
    /// A count within the current element (see [`At`]).
    n: usize,
    /// The start of the target, of the version (request line), or of the
    /// whitespace after a field name.
    mark: usize,
    /// The last byte read is a CR whose meaning waits for the next byte.
    cr: bool,
    /// The last field line was skipped: so are its obs-fold continuations.
    skipping: bool,
    /// Non-empty lines ended so far.
    lines: usize,
    /// The first fault of a trailer section, reported at its end.
    fault: Option<Box<Error>>,
    record: Record,
}

impl Reader {
    /// Forgets the current section (keeps the record's allocation).
    #[inline]
    pub(crate) fn reset(&mut self) {
        self.read = 0;
        self.lines = 0;
        self.cr = false;
    }

    /// Gives back the record's room for field lines, and the names learnt
    /// in `names`, between messages only (the fields of a head being read
    /// name entries of the cache): an idle connection's buffers go back
    /// likewise.
    pub(crate) fn release(&mut self, names: &mut NameCache) {
        if self.is_fresh() {
            self.record.fields = Vec::new();
            names.release();
        }
    }

    /// `true` when nothing of a section has been read since the last
    /// reset.
    #[inline]
    pub(crate) fn is_fresh(&self) -> bool {
        self.read == 0 && !self.cr
    }

    /// `true` while no line of the current section has ended.
    #[inline]
    pub(crate) fn in_first_line(&self) -> bool {
        self.lines == 0
    }

    /// What was accepted of the current section.
    #[inline]
    pub(crate) fn record(&self) -> &Record {
        &self.record
    }

    /// The record of the section just read, for a wire view to take its
    /// field lines (see [`WireHead`](crate::wire::WireHead)); the reader
    /// needs them no more once the head is built, and clears what it is
    /// left with when it begins the next section.
    #[inline]
    pub(crate) fn record_mut(&mut self) -> &mut Record {
        &mut self.record
    }

    /// The first fault of the trailer section just read, if any.
    pub(crate) fn take_fault(&mut self) -> Option<Error> {
        self.fault.take().map(|fault| *fault)
    }

    fn begin(&mut self, o: &Options) {
        self.at = match (o.trailers, o.rules.request) {
            (true, _) => At::LineStart,
            (false, true) => At::Method,
            (false, false) => At::StatusVersion,
        };
        self.line = 0;
        self.n = 0;
        self.mark = 0;
        // `cr` and `lines` are already clear: a fresh reader's are.
        self.skipping = false;
        self.fault = None;
        self.record.fields.clear();
        self.record.noted = FramingFields::default();
        self.record.refold = false;
    }

    /// Reads `buf`, which holds the section from its first byte on, from
    /// where the last call stopped. `names`, the decoder's name cache,
    /// vouches for the names and values it has seen before.
    /// `Ok(Some(len))`: the section is
    /// complete, `len` bytes with its empty line. `Ok(None)`: more is
    /// needed. `Err`: the fault found, placed within the section (its
    /// line, and the field at fault), or the bound the section ran into,
    /// placed at its start.
    pub(crate) fn read(
        &mut self,
        buf: &[u8],
        o: &Options,
        names: &mut NameCache,
    ) -> Result<Option<usize>, Error> {
        if self.is_fresh() {
            self.begin(o);
        }
        let upto = buf.len().min(o.max_bytes);
        loop {
            match self.scan(buf, upto, o, names) {
                // A bound is reported as soon as it is met.
                Err(fault) if o.trailers && fault.kind() != ErrorKind::TooManyFields => {
                    // Read on to the end of the section, then report it.
                    self.fault.get_or_insert(Box::new(fault));
                    self.read = self.line;
                    self.at = At::Skip;
                    self.cr = false;
                }
                Ok(None)
                    if self.at == At::BadName && (o.eof || upto == o.max_bytes) && !o.trailers =>
                {
                    // The name ends where the input does.
                    let end = upto - usize::from(self.cr);
                    return Err(self.bad_name(buf, end, o.rules));
                }
                Ok(None) if upto == o.max_bytes => {
                    let kind = match o.trailers {
                        true => ErrorKind::TrailersTooLarge,
                        false if o.rules.request && self.lines == 0 => ErrorKind::TargetTooLong,
                        false => ErrorKind::HeadTooLarge,
                    };
                    return Err(Error::from(kind).at(0, None));
                }
                done => return done,
            }
        }
    }

    fn scan(
        &mut self,
        head: &[u8],
        upto: usize,
        o: &Options,
        names: &mut NameCache,
    ) -> Result<Option<usize>, Error> {
        let mut i = self.read;
        if self.cr && i < upto {
            // The last call ended on a CR, which no run takes: read from
            // it again, now that the byte that decides is here.
            self.cr = false;
            i -= 1;
        }
        while i < upto {
            // The usual way through each element: its run, and the byte
            // that ends it as usual, at once. Any other byte, a bound met
            // and the end of the input are left to the steps below, from
            // the same byte.
            match self.at {
                At::LineStart => {
                    // The name the cache predicts (valid, as every name it
                    // holds), and the value it keeps for it, if they come.
                    if let Some((entry, n)) = names.predict(&head[i..upto]) {
                        self.field(i + n, i + n, entry, names.role_at(entry));
                        i = match names.value_at(entry) {
                            Some(known) => self.known_value(head, i + n + 1, upto, known, o)?,
                            None => self.value(head, i + n + 1, upto, o)?,
                        };
                        continue;
                    } else if is_tchar(head[i]) {
                        self.at = At::Name;
                        self.n = 0;
                        continue;
                    } else if head[i] == b'\r' && i + 1 < upto && head[i + 1] == b'\n' {
                        // The empty line that ends the section.
                        self.at = At::End;
                        self.read = i + 2;
                        return Ok(Some(i + 2));
                    }
                }
                At::Name => {
                    let j = token_end(head, i, upto);
                    if j < upto && head[j] == b':' && self.n + (j - i) <= MAX_NAME {
                        self.field(j, j, NO_ENTRY, FieldRole::of_name(&head[self.line..j]));
                        i = self.value(head, j + 1, upto, o)?;
                        continue;
                    }
                }
                At::Value => {
                    i = self.value(head, i, upto, o)?;
                    if self.at != At::Value || i == upto {
                        continue;
                    }
                }
                At::Method => {
                    let j = token_end(head, i, upto);
                    if j < upto && head[j] == b' ' && self.n + j > i {
                        self.record.method_end = j;
                        (self.at, self.mark, self.n) = (At::Target, j + 1, 0);
                        i = j + 1;
                        continue;
                    }
                }
                At::Target => {
                    let j = target_end(head, i, upto);
                    let n = self.n + (j - i);
                    if j < upto && head[j] == b' ' && n > 0 && n <= o.max_target {
                        // The target is whole: its form must fit the method.
                        if !form_fits(&head[..self.mark - 1], &head[self.mark..j]) {
                            return Err(start_line(ErrorKind::InvalidTarget));
                        }
                        self.record.target = (self.mark, j);
                        (self.at, self.mark, self.n) = (At::Version, j + 1, 0);
                        i = j + 1;
                        continue;
                    }
                }
                At::Version
                    if self.n == 0
                        && i + 10 <= upto
                        && is_version(&head[i..i + 8])
                        && &head[i + 8..i + 10] == b"\r\n" =>
                {
                    self.record.version = version(&head[i..i + 8])?;
                    self.record.line_end = i + 8;
                    self.next_line(i + 9, o)?;
                    i += 10;
                    continue;
                }
                At::StatusVersion if self.n == 0 && i + 13 <= upto => {
                    let line = &head[i..i + 13];
                    let code = &line[9..12];
                    if is_version(&line[..8])
                        && line[8] == b' '
                        && line[12] == b' '
                        && code.iter().all(u8::is_ascii_digit)
                        && code[0] != b'0'
                    {
                        self.record.version = version(&line[..8])?;
                        self.record.status = status(code);
                        self.record.reason.0 = i + 13;
                        self.at = At::Reason;
                        i += 13;
                        // And the reason phrase with its CRLF.
                        let j = text_end(head, i, upto);
                        if j + 1 < upto && &head[j..j + 2] == b"\r\n" {
                            self.record.reason.1 = j;
                            self.record.line_end = j;
                            self.next_line(j + 1, o)?;
                            i = j + 2;
                        }
                        continue;
                    }
                }
                _ => {}
            }
            // A run of bytes that change nothing but a count, read at once.
            let (j, bound) = match self.at {
                At::Value | At::Fold | At::Reason => (text_end(head, i, upto), usize::MAX),
                At::Name => (token_end(head, i, upto), MAX_NAME),
                At::Target => (target_end(head, i, upto), o.max_target),
                At::Method => (token_end(head, i, upto), usize::MAX),
                At::Skip => (run(head, i, upto, |b| b != b'\r' && b != b'\n'), usize::MAX),
                At::BadName => (
                    run(head, i, upto, |b| !matches!(b, b':' | b'\r' | b'\n')),
                    usize::MAX,
                ),
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
                    self.byte(head, crossing, head[crossing], o)?;
                    i = crossing + 1;
                    continue;
                }
                i = j;
                if i == upto {
                    break;
                }
            }
            match head[i] {
                // The ways out of a run that `byte` leaves to here.
                b'\r' if i + 1 == upto => self.cr = true,
                b'\r' if head[i + 1] == b'\n' => {
                    i += 1;
                    self.line_end(head, i, true, o)?;
                }
                b'\n' => self.line_end(head, i, false, o)?,
                // A bare CR is a byte of the line like any other.
                b => self.byte(head, i, b, o)?,
            }
            i += 1;
            if self.at == At::End {
                self.read = i;
                return Ok(Some(i));
            }
        }
        self.read = upto;
        Ok(None)
    }

    /// One byte of a line, neither LF nor the CR of a line end: the byte
    /// that stopped the run of its element in [`scan`](Self::scan), which
    /// took every byte the element keeps up to its bound (so each class
    /// of bytes is told here or there, not in both), or a CR that ends
    /// nothing.
    fn byte(&mut self, head: &[u8], i: usize, b: u8, o: &Options) -> Result<(), Error> {
        use ErrorKind::*;
        let rules = o.rules;
        match self.at {
            // A method or a target that ends as usual is read on by its
            // step in `scan`: here it ends otherwise.
            At::Method => return Err(start_line(InvalidMethod)),
            // The byte past `max_target`.
            At::Target if is_target_char(b) => return Err(start_line(TargetTooLong)),
            At::Target => return Err(start_line(InvalidTarget)),
            At::Version | At::StatusVersion if self.n < VERSION.len() => {
                return Err(start_line(InvalidVersion));
            }
            At::Version => return Err(start_line(InvalidStartLine)),
            At::StatusVersion => {
                if b != b' ' {
                    return Err(start_line(InvalidStartLine));
                }
                self.record.version = version(&head[..8])?;
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
                    self.record.status = status(&head[9..12]);
                    self.at = At::AfterCode;
                    // An empty reason, unless a SP comes.
                    self.record.reason.0 = i + 1;
                }
            }
            At::AfterCode => {
                if b != b' ' {
                    return Err(start_line(InvalidStatus));
                }
                self.record.reason.0 = i + 1;
                self.at = At::Reason;
            }
            At::Reason => return Err(start_line(InvalidReason)),
            At::LineStart => {
                if b == b' ' || b == b'\t' {
                    self.fold(o)?;
                } else {
                    self.invalid_name(head, i, b, o)?;
                }
            }
            At::Name => {
                if b == b' ' || b == b'\t' {
                    self.mark = i;
                    self.at = At::NameSpace;
                } else {
                    self.invalid_name(head, i, b, o)?;
                }
            }
            At::NameSpace => {
                if b == b':' {
                    if rules.space_before_colon {
                        let role = FieldRole::of_name(&head[self.line..self.mark]);
                        self.field(self.mark, i, NO_ENTRY, role);
                    } else if rules.skip_invalid_fields {
                        self.skip();
                    } else {
                        let name = &head[self.line..self.mark];
                        let e = refuse(rules, WhitespaceBeforeColon, Tolerance::SpaceBeforeColon);
                        return Err(e.at(self.line as u64, Some(name)));
                    }
                } else if b != b' ' && b != b'\t' {
                    self.invalid_name(head, i, b, o)?;
                }
            }
            At::BadName => {
                // A colon or a bare CR ends the name.
                if b == b':' || b == b'\r' {
                    return Err(self.bad_name(head, i, rules));
                }
            }
            At::Value | At::Fold => {
                // The current line's field, if it is not a continuation.
                let field = self.record.fields.last().filter(|_| self.at == At::Value);
                let name = field.map(|field| &head[field.name()]);
                return Err(Error::from(InvalidFieldValue).at(self.line as u64, name));
            }
            At::Skip | At::End => {}
        }
        Ok(())
    }

    /// The value of the current field line from `from` on: where the
    /// next line starts when the run of text ends with the CRLF of the
    /// line, else where the run ends.
    #[inline(always)]
    fn value(
        &mut self,
        head: &[u8],
        from: usize,
        upto: usize,
        o: &Options,
    ) -> Result<usize, Error> {
        let j = text_end(head, from, upto);
        if j + 1 < upto && head[j] == b'\r' && head[j + 1] == b'\n' {
            self.value_end(head, j);
            self.next_line(j + 1, o)?;
            return Ok(j + 2);
        }
        Ok(j)
    }

    /// The value of the current field line ends at `end`.
    #[inline(always)]
    fn value_end(&mut self, head: &[u8], end: usize) {
        let field = self.record.fields.last_mut().expect("a field line");
        let value = trimmed(head, field.value.0, end);
        // The value kept is known only if nothing but OWS came after it.
        field.value_known &= value == field.value;
        field.value = value;
        if field.role != FieldRole::Other {
            self.record.noted.note(field.role, &head[field.value()]);
        }
    }

    /// A field line starting with SP or HTAB: a continuation of the field
    /// above (obs-fold) where the tolerances allow one, else refused or, by
    /// `skip_invalid_fields`, skipped. A trailer section never folds.
    fn fold(&mut self, o: &Options) -> Result<(), Error> {
        let rules = o.rules;
        let trailers = o.trailers;
        // A line other than the start line came before this one (a trailer
        // section never folds: there it does not matter).
        let after_field_line = self.lines > 1;
        let field_above = after_field_line && !self.record.fields.is_empty();
        if self.skipping {
            self.at = At::Skip;
        } else if rules.obs_fold && field_above && !trailers {
            self.at = At::Fold;
        } else if rules.obs_fold && rules.skip_invalid_fields && !trailers {
            self.skip();
        } else {
            // With obs-fold on, only skipping would accept the line.
            let hint = if rules.obs_fold {
                Tolerance::SkipInvalidFields
            } else {
                Tolerance::ObsFold
            };
            let hint = (!trailers && (rules.obs_fold || after_field_line)).then_some(hint);
            let error = Error::refused(ErrorKind::ObsFold, hint.and_then(|s| rules.hint(s)));
            return Err(error.at(self.line as u64, None));
        }
        Ok(())
    }

    /// A valid field name, `line..name_end`, its colon at `colon`; the
    /// name cache's entry for it ([`NO_ENTRY`] for none), and its role.
    #[inline(always)]
    fn field(&mut self, name_end: usize, colon: usize, entry: u32, role: FieldRole) {
        self.at = At::Value;
        self.skipping = false;
        self.record.fields.push(Field {
            start: self.line,
            name_end,
            value: (colon + 1, colon + 1),
            role,
            folded: false,
            entry,
            value_known: false,
        });
    }

    /// Where the value of the field line just begun, from `from` on, is
    /// read on from: after `known`, the value the name cache keeps for its
    /// name, when it comes byte for byte after the OWS (the field holds
    /// it, known unless more than OWS follows), and after the line when
    /// its CRLF comes next; else from `from`.
    #[inline(always)]
    fn known_value(
        &mut self,
        head: &[u8],
        from: usize,
        upto: usize,
        known: &HeaderValue,
        o: &Options,
    ) -> Result<usize, Error> {
        let known = known.as_bytes();
        let mut at = from;
        while at < upto && matches!(head[at], b' ' | b'\t') {
            at += 1;
        }
        let to = at + known.len();
        if to > upto || !same(&head[at..to], known) {
            return Ok(from);
        }
        let field = self.record.fields.last_mut().expect("a field line");
        field.value = (at, to);
        field.value_known = true;
        if to + 1 >= upto || &head[to..to + 2] != b"\r\n" {
            return Ok(to);
        }
        match field.role {
            FieldRole::Other => {}
            // The value kept is an accepted head's: a `Host` value is valid.
            FieldRole::Host => self.record.noted.hosts += 1,
            role => self.record.noted.note(role, &head[at..to]),
        }
        self.next_line(to + 1, o)?;
        Ok(to + 2)
    }

    fn skip(&mut self) {
        self.at = At::Skip;
        self.skipping = true;
    }

    /// Byte `b`, at `i`, cannot be part of the field name it is in: the
    /// line is skipped (`skip_invalid_fields`), or refused once the name
    /// ends ([`bad_name`](Self::bad_name)), `b` itself maybe.
    fn invalid_name(&mut self, head: &[u8], i: usize, b: u8, o: &Options) -> Result<(), Error> {
        if o.rules.skip_invalid_fields {
            self.skip();
            return Ok(());
        }
        self.at = At::BadName;
        self.byte(head, i, b, o)
    }

    /// The refusal of an invalid field name that ends at `end` (its
    /// colon, its line's end, or the end of the input), naming it whole:
    /// the same error however the head arrives, since the name's end is
    /// not decided by the reads. Whitespace before the colon is left out;
    /// an empty name is not named.
    #[cold]
    fn bad_name(&self, head: &[u8], end: usize, rules: &Rules) -> Error {
        let name = trim_ows(&head[self.line..end]);
        let error = refuse(
            rules,
            ErrorKind::InvalidFieldName,
            Tolerance::SkipInvalidFields,
        );
        error.at(self.line as u64, (!name.is_empty()).then_some(name))
    }

    /// The LF at `lf` ends the current line (after a CR when `crlf`).
    fn line_end(&mut self, head: &[u8], lf: usize, crlf: bool, o: &Options) -> Result<(), Error> {
        use ErrorKind::*;
        let rules = o.rules;
        let end = if crlf { lf - 1 } else { lf };
        if self.fault.is_some() {
            // A faulty trailer section: only its end is looked for.
            if end == self.line {
                self.at = At::End;
            } else {
                self.next_line(lf, o)?;
                self.at = At::Skip;
            }
            return Ok(());
        }
        // What the line lacks at its end comes first...
        let first = self.line == 0 && !o.trailers;
        match self.at {
            At::Method if self.n == 0 && !crlf => {
                // An empty line where the request line belongs: a bare LF
                // `bare_lf` would skip as it skips CRLF.
                let e = refuse(rules, InvalidStartLine, Tolerance::BareLf);
                return Err(e.at(0, None));
            }
            At::Version if self.n == VERSION.len() => {
                // `mark` is where the version starts.
                self.record.version = version(&head[self.mark..self.mark + 8])?;
                self.record.line_end = end;
            }
            At::Method | At::Target | At::Version | At::StatusVersion | At::Code => {
                return Err(start_line(InvalidStartLine));
            }
            At::AfterCode if !rules.no_space_after_status => {
                let e = refuse(rules, InvalidStatus, Tolerance::NoSpaceAfterStatus);
                return Err(e.at(0, None));
            }
            At::AfterCode | At::Reason => {
                self.record.reason.1 = end;
                self.record.line_end = end;
            }
            At::LineStart => {
                // The empty line: the end of the head.
                if !crlf && !rules.bare_lf {
                    let e = refuse(rules, BareLineFeed, Tolerance::BareLf);
                    return Err(e.at(lf as u64, None));
                }
                self.at = At::End;
                return Ok(());
            }
            At::BadName => return Err(self.bad_name(head, end, rules)),
            At::Name | At::NameSpace => {
                if rules.skip_invalid_fields {
                    self.skipping = true;
                } else {
                    let e = refuse(rules, MissingColon, Tolerance::SkipInvalidFields);
                    return Err(e.at(self.line as u64, None));
                }
            }
            At::Value | At::Fold | At::Skip | At::End => {}
        }
        // ...then how it ends.
        if !crlf && !rules.bare_lf {
            let field = (!first).then(|| field_name(&head[self.line..lf])).flatten();
            let e = refuse(rules, BareLineFeed, Tolerance::BareLf);
            return Err(e.at(self.line as u64, field));
        }
        match self.at {
            At::Value => self.value_end(head, end),
            At::Fold => {
                let field = self.record.fields.last_mut().expect("a field above");
                field.value = trimmed(head, field.value.0, end);
                field.folded = true;
                self.record.refold |= field.role != FieldRole::Other;
            }
            _ => {}
        }
        self.next_line(lf, o)
    }

    /// Moves on to the line after the LF at `lf`, counting the one that
    /// ended against the bound of lines.
    #[inline]
    fn next_line(&mut self, lf: usize, o: &Options) -> Result<(), Error> {
        if self.lines == o.max_lines {
            return Err(Error::from(ErrorKind::TooManyFields).at(0, None));
        }
        self.lines += 1;
        self.at = At::LineStart;
        self.line = lf + 1;
        Ok(())
    }
}

/// The name of a field line as received: the bytes before its colon
/// without the whitespace before the colon; `None` for a line that starts
/// with whitespace, has no colon or nothing before it.
fn field_name(line: &[u8]) -> Option<&[u8]> {
    let name = line[..memchr(b':', line)?].trim_ascii_end();
    (!name.is_empty() && !matches!(line[0], b' ' | b'\t')).then_some(name)
}

/// `bytes[from..to]` without the whitespace and line breaks at either
/// end, as offsets.
fn trimmed(bytes: &[u8], from: usize, to: usize) -> (usize, usize) {
    // An accepted value holds no other ASCII whitespace (`trim_ascii`
    // also takes FF).
    let rest = bytes[from..to].trim_ascii_start();
    let from = to - rest.len();
    (from, from + rest.trim_ascii_end().len())
}

/// `HTTP/` DIGIT `.` DIGIT.
fn is_version(v: &[u8]) -> bool {
    v[..5] == *b"HTTP/" && v[5].is_ascii_digit() && v[6] == b'.' && v[7].is_ascii_digit()
}

/// The status code of three digits.
fn status(code: &[u8]) -> u16 {
    code.iter().fold(0, |n, &d| n * 10 + u16::from(d - b'0'))
}

/// `HTTP/1.0`, or `HTTP/1.1` for any `HTTP/1.x` (RFC 9110 section 2.5),
/// of a version already read as `HTTP/` DIGIT `.` DIGIT; another major
/// version is [`ErrorKind::UnsupportedVersion`].
fn version(v: &[u8]) -> Result<Version, Error> {
    match (v[5], v[7]) {
        (b'1', b'0') => Ok(Version::HTTP_10),
        (b'1', _) => Ok(Version::HTTP_11),
        _ => Err(start_line(ErrorKind::UnsupportedVersion)),
    }
}

/// The error `kind` of a start line: placed at its start, no field.
pub(crate) fn start_line(kind: ErrorKind) -> Error {
    Error::from(kind).at(0, None)
}

fn refuse(rules: &Rules, kind: ErrorKind, tolerance: Tolerance) -> Error {
    Error::refused(kind, rules.hint(tolerance))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::head::record::Field;
    use crate::leniency::{RequestLeniency, ResponseLeniency};
    use proptest::prelude::*;

    const MAX_TARGET: usize = 64;

    /// Each party with its tolerances: strict, the defaults, all on, and
    /// `skip_invalid_fields` alone.
    fn sides() -> Vec<Rules> {
        let mut skip = ResponseLeniency::strict();
        skip.skip_invalid_fields = true;
        vec![
            Rules::from(RequestLeniency::strict()),
            Rules::from(RequestLeniency::all()),
            Rules::from(ResponseLeniency::strict()),
            Rules::from(ResponseLeniency::default()),
            Rules::from(ResponseLeniency::all()),
            Rules::from(skip),
        ]
    }

    /// What reading `input` in pieces cut at `cuts` gives: the outcome
    /// and, unless refused, the field lines recorded (without what the
    /// name cache found).
    /// With `warm`, the name cache knows some of the names and values of
    /// the heads tried, in their order.
    fn in_pieces(
        input: &[u8],
        cuts: &[usize],
        rules: &Rules,
        trailers: bool,
        warm: bool,
    ) -> (Result<Option<usize>, Error>, Vec<Field>) {
        let options = Options {
            trailers,
            rules,
            max_target: MAX_TARGET,
            max_bytes: usize::MAX,
            max_lines: 64,
            eof: false,
        };
        let mut reader = Reader::default();
        let mut names = NameCache::default();
        if warm {
            names.keep_names();
            for (name, value) in [("Host", "a"), ("X-Y", "z"), ("A", "b"), ("X-A", "1")] {
                let entry = names.get(name.as_bytes()).unwrap().1.unwrap();
                names.learn_value(entry, value.as_bytes());
            }
        }
        let mut outcome = Ok(None);
        for &to in cuts.iter().chain([&input.len()]) {
            outcome = reader.read(&input[..to], &options, &mut names);
            if !matches!(outcome, Ok(None)) {
                break;
            }
        }
        if let Some(fault) = reader.take_fault() {
            outcome = Err(fault);
        }
        // The record of a refused section is never read.
        let mut fields = match outcome {
            Err(_) => Vec::new(),
            Ok(_) => reader.record().fields.clone(),
        };
        for field in &mut fields {
            field.entry = NO_ENTRY;
            field.value_known = false;
        }
        (outcome, fields)
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
            b"X-A: 1\r\nX-B:\t2 \r\n\r\n",
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
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// However the bytes arrive, the reader reaches the same outcome
        /// and records the same field lines, whether the name cache knows
        /// some of them or not.
        #[test]
        fn the_reading_does_not_depend_on_the_reads(
            head in heads(),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
        ) {
            let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(head.len() + 1)).collect();
            cuts.sort_unstable();
            let bytewise: Vec<usize> = (1..head.len()).collect();
            for rules in sides() {
                for (trailers, warm) in [(false, false), (false, true), (true, false), (true, true)] {
                    let whole = in_pieces(&head, &[], &rules, trailers, false);
                    let read = |cuts: &[usize]| in_pieces(&head, cuts, &rules, trailers, warm);
                    prop_assert_eq!(&read(&[]), &whole);
                    prop_assert_eq!(&read(&cuts), &whole);
                    prop_assert_eq!(&read(&bytewise), &whole);
                }
            }
        }
    }

    #[test]
    fn a_fault_is_found_at_its_byte() {
        let request = Rules::from(RequestLeniency::strict());
        let response = Rules::from(ResponseLeniency::strict());
        // (input, side, bytes after which the fault is known, kind)
        let cases: &[(&[u8], &Rules, usize, ErrorKind)] = &[
            (b"G\x01", &request, 2, ErrorKind::InvalidMethod),
            (b"GET /a\rb", &request, 8, ErrorKind::InvalidTarget),
            (b"GET / HTTX", &request, 10, ErrorKind::InvalidVersion),
            (
                b"GET / HTTP/1.1\r\nX\x01y:",
                &request,
                20,
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
            let before = in_pieces(&input[..known - 1], &[], rules, false, false).0;
            assert_eq!(before, Ok(None), "{input:?}");
            let error = in_pieces(&input[..known], &[], rules, false, false)
                .0
                .unwrap_err();
            assert_eq!(error.kind(), kind, "{input:?}");
        }
    }
}
