//! Finding the end of a head or a trailer section without rescanning.

/// Which bound a section ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overflow {
    /// More bytes than allowed before the empty line.
    Bytes,
    /// More lines than allowed.
    Lines,
}

/// Finds the lines of a section (a head, or a trailer section) that ends
/// with an empty line. Between calls it remembers where it stopped, so each
/// byte of a section is searched once however the section arrives.
#[derive(Debug, Default)]
pub(crate) struct LineScanner {
    /// Offset (from the start of the section) where the next search begins.
    pos: usize,
    /// Offsets of the LF ending each non-empty line found so far.
    ends: Vec<usize>,
}

impl LineScanner {
    /// Forgets the current section; keeps the allocation.
    pub(crate) fn reset(&mut self) {
        self.pos = 0;
        self.ends.clear();
    }

    /// Offsets of the LF of each non-empty line of the completed section.
    pub(crate) fn ends(&self) -> &[usize] {
        &self.ends
    }

    /// Looks for the empty line that ends the section starting at `buf[0]`.
    ///
    /// Returns the length of the section including its final empty line, or
    /// `None` when more input is needed. Only the first `max_bytes` bytes of
    /// the section are ever searched, and at most `max_lines` non-empty lines
    /// are accepted, so the outcome does not depend on how the bytes were
    /// split into reads.
    pub(crate) fn find_end(
        &mut self,
        buf: &[u8],
        max_bytes: usize,
        max_lines: usize,
    ) -> Result<Option<usize>, Overflow> {
        if self.ends.capacity() == 0 {
            // One allocation for the line offsets of most heads, instead
            // of growing 4, 8, 16, 32 in a new decoder.
            self.ends.reserve_exact(32);
        }
        let window = buf.len().min(max_bytes);
        let from = self.pos.min(window);
        // Where the line being searched starts.
        let mut start = self.ends.last().map_or(0, |&e| e + 1);
        for i in lf::iter(&buf[from..window]) {
            let lf = from + i;
            if lf == start || (lf == start + 1 && buf[start] == b'\r') {
                self.pos = lf + 1;
                return Ok(Some(lf + 1));
            }
            if self.ends.len() == max_lines {
                self.pos = lf + 1;
                return Err(Overflow::Lines);
            }
            self.ends.push(lf);
            start = lf + 1;
        }
        self.pos = window;
        if window == max_bytes && buf.len() >= max_bytes {
            return Err(Overflow::Bytes);
        }
        Ok(None)
    }

    /// How far the section has been searched: after `find_end` returned
    /// `Ok(None)` or an overflow, the bytes the section may still hold
    /// (up to the bound, or through the line over the bound of lines).
    pub(crate) fn searched(&self) -> usize {
        self.pos
    }

    /// `true` while no line of the current section has ended.
    pub(crate) fn in_first_line(&self) -> bool {
        self.ends.is_empty()
    }
}

/// The line feeds of a haystack, found with memchr's AVX2 searcher built
/// once (the crate's `memchr_iter` builds one and goes through a function
/// pointer for every line), or its portable one where AVX2 is not there:
/// which of the two is decided once per haystack, and the AVX2 searcher's
/// own iterator walks it.
mod lf {
    #[cfg(target_arch = "x86_64")]
    pub(super) fn iter(hay: &[u8]) -> impl Iterator<Item = usize> + '_ {
        use memchr::arch::x86_64::avx2::memchr::One;
        use std::sync::OnceLock;
        static AVX2: OnceLock<Option<One>> = OnceLock::new();
        let avx2 = AVX2.get_or_init(|| One::new(b'\n'));
        match avx2 {
            Some(one) => Either::Avx2(one.iter(hay)),
            None => Either::Fallback(memchr::memchr_iter(b'\n', hay)),
        }
    }

    /// One of two iterators, chosen once per haystack.
    #[cfg(target_arch = "x86_64")]
    enum Either<A, B> {
        Avx2(A),
        Fallback(B),
    }

    #[cfg(target_arch = "x86_64")]
    impl<A: Iterator<Item = usize>, B: Iterator<Item = usize>> Iterator for Either<A, B> {
        type Item = usize;

        #[inline(always)]
        fn next(&mut self) -> Option<usize> {
            match self {
                Either::Avx2(a) => a.next(),
                Either::Fallback(b) => b.next(),
            }
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    pub(super) fn iter(hay: &[u8]) -> impl Iterator<Item = usize> + '_ {
        memchr::memchr_iter(b'\n', hay)
    }
}
