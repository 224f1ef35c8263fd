//! Field names seen before on the same connection.
//!
//! A peer sends the same field names, spelt the same way and mostly in the
//! same order, in every message of a connection. [`NameCache`] keeps the
//! names it has turned into `HeaderName`s together with the bytes they were
//! spelt with, so the next message's names are found by one byte comparison
//! instead of being lowercased, matched against the standard names and, for
//! the names `http` does not know, copied into a new allocation.
//!
//! The search starts after the entry that matched last, so a peer that sends
//! its fields in a fixed order finds each name at the first try.
//!
//! Each entry also keeps the first value the name came with (up to
//! [`MAX_VALUE_LEN`] bytes, [`VALUE_BUDGET`] bytes in all), copied: a peer
//! repeats most values too (`Host`, `User-Agent`, `Accept`), and a line
//! whose value is byte for byte the kept one gets a clone of it, where
//! checking the value's bytes again and slicing it out of the head cost
//! several times more ([`NameCache::value_at`]).

use http::header::{HeaderName, HeaderValue};

use crate::framing::FieldRole;

/// Entries kept at most.
const CAPACITY: usize = 32;
/// Longer names are not kept: the cache holds at most `CAPACITY * MAX_LEN`
/// bytes of spellings.
const MAX_LEN: usize = 32;
/// Longer values are not kept.
const MAX_VALUE_LEN: usize = 256;
/// The bytes of values kept at most, all entries together.
const VALUE_BUDGET: usize = 1024;
// The indices and counts of the cache are kept as `u16`.
const _: () = assert!(CAPACITY < u16::MAX as usize);
const _: () = assert!(VALUE_BUDGET <= u16::MAX as usize);

#[derive(Debug)]
struct Entry {
    name: HeaderName,
    role: FieldRole,
    /// Where the name as the peer spelt it sits in `NameCache::spellings`.
    start: u16,
    len: u8,
    /// The first value a line of the name came with, if kept: a copy,
    /// since a slice of a head would hold that head's read buffer.
    value: Option<HeaderValue>,
}

/// Field names already parsed on this connection (see the module docs).
///
/// Two allocations, made by the first name kept (the entries and one
/// buffer holding every spelling), one for each value kept, and a few
/// more only for a peer with more than 16 names or 256 bytes of them.
#[derive(Debug, Default)]
pub(crate) struct NameCache {
    entries: Vec<Entry>,
    spellings: Vec<u8>,
    /// Where the next search starts: after the last match. The indices
    /// and counts here are `u16` (at most [`CAPACITY`] entries,
    /// [`VALUE_BUDGET`] bytes): every connection's decoder holds a cache.
    next: u16,
    /// Whether new names are kept: from a connection's second message on.
    keeping: bool,
    /// The bytes of the values kept.
    value_bytes: u16,
    /// How many times the cache started over: an entry's index stands
    /// for the same name while this stays the same.
    generation: u32,
}

impl NameCache {
    /// Keeps the names of the messages to come. A decoder calls it when a
    /// message ends and another may follow: a connection that carries one
    /// message never pays for the cache.
    pub(crate) fn keep_names(&mut self) {
        self.keeping = true;
    }

    /// Gives back the entries, their spellings and the values kept, as an
    /// idle connection lets its buffers go: the names are learnt again
    /// from the next message on. Only between heads: the fields of a head
    /// being read name entries by index.
    pub(crate) fn release(&mut self) {
        if self.entries.capacity() != 0 {
            *self = NameCache {
                keeping: self.keeping,
                generation: self.generation.wrapping_add(1),
                ..NameCache::default()
            };
        }
    }

    /// Whether names (and values) are kept: from a connection's second
    /// message on.
    #[inline(always)]
    pub(crate) fn keeping(&self) -> bool {
        self.keeping
    }

    #[inline(always)]
    fn spelling(&self, entry: &Entry) -> &[u8] {
        &self.spellings[usize::from(entry.start)..][..usize::from(entry.len)]
    }

    /// The entry tried first (the one after the last match), if `line`
    /// starts with its spelling and a colon: its index, and the length of
    /// the name. When the peer repeats its order, one comparison finds the
    /// name and its colon. The entry after it is tried next.
    #[inline]
    pub(crate) fn predict(&mut self, line: &[u8]) -> Option<(u32, usize)> {
        let i = if usize::from(self.next) < self.entries.len() {
            self.next
        } else {
            0
        };
        let entry = self.entries.get(usize::from(i))?;
        let n = usize::from(entry.len);
        if line.get(n) == Some(&b':') && same(&line[..n], self.spelling(entry)) {
            self.next = i + 1;
            return Some((u32::from(i), n));
        }
        None
    }

    /// The role of entry `i` ([`predict`](Self::predict)).
    #[inline(always)]
    pub(crate) fn role_at(&self, i: u32) -> FieldRole {
        self.entries[i as usize].role
    }

    /// The value kept for entry `i`, if any.
    #[inline(always)]
    pub(crate) fn value_at(&self, i: u32) -> Option<&HeaderValue> {
        self.entries.get(i as usize)?.value.as_ref()
    }

    /// The name of entry `i`.
    #[inline(always)]
    pub(crate) fn name_at(&self, i: u32) -> HeaderName {
        self.entries[i as usize].name.clone()
    }

    /// Changes when the cache starts over: indices from before no longer
    /// stand for the same names.
    #[inline(always)]
    pub(crate) fn generation(&self) -> u32 {
        self.generation
    }

    /// The `HeaderName` for `raw` (the bytes before a colon), with its
    /// entry if the cache keeps it, or `None` when `raw` is not a valid
    /// field name. The entry spelt `raw` is looked for from the one after
    /// the last match.
    #[inline]
    pub(crate) fn get(&mut self, raw: &[u8]) -> Option<(HeaderName, Option<u32>)> {
        let n = self.entries.len();
        let mut i = usize::from(self.next);
        for _ in 0..n {
            if i >= n {
                i = 0;
            }
            let entry = &self.entries[i];
            if usize::from(entry.len) == raw.len() && same(self.spelling(entry), raw) {
                // Below CAPACITY: the casts keep every bit.
                self.next = i as u16 + 1;
                return Some((entry.name.clone(), Some(i as u32)));
            }
            i += 1;
        }
        self.insert(raw)
    }

    #[cold]
    fn insert(&mut self, raw: &[u8]) -> Option<(HeaderName, Option<u32>)> {
        let name = HeaderName::from_bytes(raw).ok()?;
        if self.keeping && raw.len() <= MAX_LEN {
            if self.entries.len() == CAPACITY {
                // Full: a peer with this many names starts over (rare, and
                // it keeps the memory bounded without bookkeeping).
                self.release();
            }
            if self.entries.capacity() == 0 {
                // Room for a browser's names at once; more grows as needed.
                self.entries.reserve_exact(16);
                self.spellings.reserve_exact(256);
            }
            let start = u16::try_from(self.spellings.len()).ok()?;
            self.spellings.extend_from_slice(raw);
            self.entries.push(Entry {
                name: name.clone(),
                role: FieldRole::of_name(name.as_str().as_bytes()),
                start,
                len: u8::try_from(raw.len()).ok()?,
                value: None,
            });
            self.next = self.entries.len() as u16;
            return Some((name, Some(u32::from(self.next) - 1)));
        }
        Some((name, None))
    }

    /// Keeps `value`, valid, for entry `i`, if it has no value yet and
    /// the value fits the bounds. Only values of heads
    /// the decoder accepted are kept: a `Host` value that repeats one is
    /// valid without a second check (the head reader's `known_value`).
    #[inline(never)]
    pub(crate) fn learn_value(&mut self, i: u32, value: &[u8]) {
        if let Some(Entry { value: slot, .. }) = self.entries.get_mut(i as usize)
            && slot.is_none()
            && value.len() <= MAX_VALUE_LEN
            && usize::from(self.value_bytes) + value.len() <= VALUE_BUDGET
        {
            // Within VALUE_BUDGET: the cast keeps every bit.
            self.value_bytes += value.len() as u16;
            *slot = HeaderValue::from_bytes(value).ok();
        }
    }
}

/// The `N` bytes of `s` at `at`, compared as one word.
#[inline(always)]
fn word<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
    let mut w = [0; N];
    w.copy_from_slice(&s[at..at + N]);
    w
}

/// `a == b` (names, and the values kept with them): up to sixteen bytes
/// at a time (the last word may overlap the ones before), without a call
/// to libc's `memcmp`, which costs more than a name.
#[inline(always)]
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0..4 => a.iter().zip(b).all(|(x, y)| x == y),
        4..8 => word::<4>(a, 0) == word(b, 0) && word::<4>(a, n - 4) == word(b, n - 4),
        8..=16 => word::<8>(a, 0) == word(b, 0) && word::<8>(a, n - 8) == word(b, n - 8),
        _ => {
            let mut i = 0;
            while i + 16 < n {
                if word::<16>(a, i) != word(b, i) {
                    return false;
                }
                i += 16;
            }
            word::<16>(a, n - 16) == word(b, n - 16)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As the build of a field line: its name's entry learns the value
    /// if it has none.
    fn learn(cache: &mut NameCache, name: &[u8], value: &[u8]) {
        if let Some((_, Some(entry))) = cache.get(name) {
            cache.learn_value(entry, value);
        }
    }

    /// The value kept for `name`, if it is `value`.
    fn known(cache: &mut NameCache, name: &[u8], value: &[u8]) -> Option<HeaderValue> {
        let entry = cache.get(name)?.1?;
        let known = cache.value_at(entry)?;
        same(known.as_bytes(), value).then(|| known.clone())
    }

    #[test]
    fn a_name_is_the_same_whether_cached_or_not() {
        let mut cache = NameCache::default();
        cache.keep_names();
        for raw in [
            &b"Host"[..],
            b"X-Custom",
            b"host",
            b"HOST",
            b"X-Custom",
            b"Host",
        ] {
            let (name, entry) = cache.get(raw).unwrap();
            assert_eq!(name, HeaderName::from_bytes(raw).unwrap());
            let role = cache.role_at(entry.unwrap());
            assert_eq!(role, FieldRole::of_name(name.as_str().as_bytes()));
        }
        // Each spelling is kept once.
        assert_eq!(cache.entries.len(), 4);
    }

    #[test]
    fn nothing_is_kept_before_a_second_message_may_come() {
        let mut cache = NameCache::default();
        let (name, entry) = cache.get(b"X-Custom").unwrap();
        assert_eq!((name.as_str(), entry), ("x-custom", None));
        assert!(cache.entries.is_empty() && cache.spellings.capacity() == 0);
        cache.keep_names();
        cache.get(b"X-Custom").unwrap();
        assert_eq!(cache.entries.len(), 1);
    }

    #[test]
    fn invalid_names_are_refused_and_not_kept() {
        let mut cache = NameCache::default();
        cache.keep_names();
        assert!(cache.get(b"Bad Name").is_none());
        assert!(cache.get(b"").is_none());
        assert!(cache.entries.is_empty());
    }

    #[test]
    fn the_cache_stays_bounded() {
        let mut cache = NameCache::default();
        cache.keep_names();
        for i in 0..1000 {
            let raw = format!("x-name-{i}");
            let (name, _) = cache.get(raw.as_bytes()).unwrap();
            assert_eq!(name.as_str(), raw);
        }
        assert!(cache.entries.len() <= CAPACITY);
        assert!(cache.spellings.len() <= CAPACITY * MAX_LEN);
        let long = vec![b'a'; MAX_LEN + 1];
        assert!(cache.get(&long).is_some());
        assert!(cache.entries.iter().all(|e| usize::from(e.len) <= MAX_LEN));
        // Recent names are still found after the cache started over.
        let (name, _) = cache.get(b"x-name-999").unwrap();
        assert_eq!(name.as_str(), "x-name-999");
    }

    #[test]
    fn a_value_is_known_only_byte_for_byte_and_for_its_own_name() {
        let mut cache = NameCache::default();
        // Nothing is kept before a second message may come.
        learn(&mut cache, b"Host", b"a");
        assert!(known(&mut cache, b"Host", b"a").is_none());
        cache.keep_names();
        learn(&mut cache, b"Host", b"a");
        learn(&mut cache, b"Accept", b"*/*");
        assert!(known(&mut cache, b"Host", b"b").is_none());
        // The first value stays.
        learn(&mut cache, b"Host", b"b");
        assert_eq!(known(&mut cache, b"Host", b"a").unwrap(), "a");
        assert!(known(&mut cache, b"Host", b"*/*").is_none());
        assert!(known(&mut cache, b"Host", b"A").is_none());
        assert!(known(&mut cache, b"Host", b"a ").is_none());
        assert_eq!(known(&mut cache, b"Accept", b"*/*").unwrap(), "*/*");
        // A name that is not kept has no value.
        let long = [b'x'; MAX_LEN + 1];
        assert!(cache.get(&long).is_some());
        learn(&mut cache, &long, b"*/*");
        assert!(known(&mut cache, &long, b"*/*").is_none());
    }

    #[test]
    fn release_gives_the_memory_back_and_names_are_learnt_again() {
        let mut cache = NameCache::default();
        cache.keep_names();
        learn(&mut cache, b"Host", b"a");
        let generation = cache.generation();
        cache.release();
        assert_eq!(cache.entries.capacity(), 0);
        assert_eq!(cache.spellings.capacity(), 0);
        assert_eq!(cache.value_bytes, 0);
        // Indices from before stand for nothing now.
        assert_ne!(cache.generation(), generation);
        assert!(cache.predict(b"Host: a").is_none());
        // Still keeping: the next message teaches the names again.
        assert_eq!(cache.get(b"Host").unwrap().0, http::header::HOST);
        assert_eq!(cache.predict(b"Host: a"), Some((0, 4)));
        // A cache that holds nothing is left as it is.
        let mut empty = NameCache::default();
        empty.release();
        assert_eq!(empty.generation(), 0);
    }

    #[test]
    fn kept_values_stay_bounded() {
        let mut cache = NameCache::default();
        cache.keep_names();
        let long = [b'v'; MAX_VALUE_LEN + 1];
        learn(&mut cache, b"x-long", &long);
        assert!(known(&mut cache, b"x-long", &long).is_none());
        assert_eq!(cache.value_bytes, 0);
        for i in 0..1000 {
            let name = format!("x-name-{i}");
            let value = vec![b'a' + (i % 26) as u8; MAX_VALUE_LEN];
            learn(&mut cache, name.as_bytes(), &value);
            assert!(usize::from(cache.value_bytes) <= VALUE_BUDGET);
            let values = cache.entries.iter().filter_map(|e| e.value.as_ref());
            let kept: usize = values.map(HeaderValue::len).sum();
            assert_eq!(kept, usize::from(cache.value_bytes));
        }
    }

    #[test]
    fn same_is_slice_equality() {
        let base = b"x-forwarded-for-and-then-some-more-bytes";
        for n in 0..=base.len() {
            let a = &base[..n];
            assert!(same(a, a));
            for i in 0..n {
                let mut b = a.to_vec();
                b[i] ^= 0x20;
                assert!(!same(a, &b), "{n} {i}");
            }
            assert!(!same(a, &base[..n.saturating_sub(1)]) || n == 0);
        }
    }

    #[test]
    fn roles() {
        let mut cache = NameCache::default();
        cache.keep_names();
        for (raw, role) in [
            (&b"Host"[..], FieldRole::Host),
            (b"content-length", FieldRole::ContentLength),
            (b"Transfer-Encoding", FieldRole::TransferEncoding),
            (b"CONNECTION", FieldRole::Connection),
            (b"Accept", FieldRole::Other),
        ] {
            // Decided for a name when it is kept, and kept with it.
            for _ in 0..2 {
                let entry = cache.get(raw).unwrap().1.unwrap();
                assert_eq!(cache.role_at(entry), role);
            }
        }
    }
}
