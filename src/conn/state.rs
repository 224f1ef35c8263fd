//! The state of each direction of a connection, and every transition, in
//! one table.
//!
//! Both connection types keep one [`State`] for the messages they receive
//! and one for the messages they send, and move them only through
//! [`State::next`], which reads [`TRANSITIONS`]. `docs/state-machine.md`
//! shows the same table and a diagram; a test regenerates both from
//! [`TRANSITIONS`] and fails if the document differs.

use std::fmt;

/// Where one direction of a connection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// No message in progress and none due.
    Idle,
    /// A head is due or partly transferred: the peer started sending one,
    /// or (for the side that answers) a request is waiting for its response.
    Head,
    /// The head is through; body bytes are being transferred.
    Body,
    /// The message is complete; the other direction may still be busy.
    Done,
    /// The exchange is over and the connection cannot carry another one.
    MustClose,
    /// The connection is closed in this direction.
    Closed,
    /// The connection was handed to another protocol (101 Switching
    /// Protocols, or a 2xx answer to CONNECT).
    Switched,
    /// A protocol error (received) or a failed send: nothing more passes.
    Error,
}

/// What moves a direction from one [`State`] to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Input {
    /// A head became due or started to arrive.
    HeadDue,
    /// An interim (1xx) response passed; the final head is still due.
    Interim,
    /// A head whose message has a body.
    HeadWithBody,
    /// A head whose message has no body.
    HeadOnly,
    /// The last byte of the body (or its trailers) passed.
    BodyEnd,
    /// Both directions are done and the verdict is to keep the connection:
    /// the next exchange starts.
    Reuse,
    /// The verdict is to close.
    MustClose,
    /// The exchange switched protocols.
    Switch,
    /// The connection closed (the peer's EOF, or the local side closing).
    Close,
    /// A protocol error or a failed send.
    Fail,
    /// A response queued but not yet drained was withdrawn (to be
    /// replaced by an error response): its head is due again.
    Withdraw,
}

use Input as I;
use State as S;

/// Every allowed transition: (from, input, to). A pair not listed is not
/// allowed; for the local side that is a usage error.
pub const TRANSITIONS: &[(State, Input, State)] = &[
    (S::Idle, I::HeadDue, S::Head),
    (S::Idle, I::HeadWithBody, S::Body),
    (S::Idle, I::HeadOnly, S::Done),
    (S::Idle, I::MustClose, S::MustClose),
    (S::Idle, I::Close, S::Closed),
    (S::Idle, I::Switch, S::Switched),
    (S::Head, I::Interim, S::Head),
    (S::Head, I::HeadWithBody, S::Body),
    (S::Head, I::HeadOnly, S::Done),
    (S::Head, I::Switch, S::Switched),
    (S::Head, I::MustClose, S::MustClose),
    (S::Body, I::BodyEnd, S::Done),
    (S::Body, I::Withdraw, S::Head),
    (S::Done, I::Withdraw, S::Head),
    (S::Body, I::MustClose, S::MustClose),
    (S::Done, I::Reuse, S::Idle),
    (S::Done, I::MustClose, S::MustClose),
    (S::Done, I::Switch, S::Switched),
    (S::Done, I::Close, S::Closed),
    (S::MustClose, I::Close, S::Closed),
    (S::Idle, I::Fail, S::Error),
    (S::Head, I::Fail, S::Error),
    (S::Body, I::Fail, S::Error),
    (S::Done, I::Fail, S::Error),
    (S::MustClose, I::Fail, S::Error),
];

impl State {
    /// The state after `input`, or `None` if the table has no such
    /// transition.
    pub fn next(self, input: Input) -> Option<State> {
        TRANSITIONS
            .iter()
            .find(|(from, on, _)| *from == self && *on == input)
            .map(|&(_, _, to)| to)
    }

    /// Moves along the table. The connection code asks only for listed
    /// transitions; an unlisted one is a bug, caught by a debug assertion
    /// (release builds leave the state unchanged).
    pub(crate) fn go(&mut self, input: Input) {
        let moved = self.try_go(input);
        debug_assert!(moved, "no transition from {self} on {input}");
    }

    /// Moves along the table if it lists `input` for this state.
    pub(crate) fn try_go(&mut self, input: Input) -> bool {
        match self.next(input) {
            Some(next) => {
                *self = next;
                true
            }
            None => false,
        }
    }

    /// `true` in the states after which no further message passes.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            State::MustClose | State::Closed | State::Switched | State::Error
        )
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// The transition table as a Markdown table, as `docs/state-machine.md`
/// shows it.
pub fn table_markdown() -> String {
    let mut out = String::from("| from | input | to |\n|---|---|---|\n");
    for (from, input, to) in TRANSITIONS {
        out.push_str(&format!("| {from} | {input} | {to} |\n"));
    }
    out
}

/// The transition table as a Mermaid state diagram, as
/// `docs/state-machine.md` shows it.
pub fn diagram_mermaid() -> String {
    let mut out = String::from("stateDiagram-v2\n    [*] --> Idle\n");
    for (from, input, to) in TRANSITIONS {
        out.push_str(&format!("    {from} --> {to}: {input}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_a_function() {
        for (i, (from, input, _)) in TRANSITIONS.iter().enumerate() {
            for (from2, input2, _) in &TRANSITIONS[i + 1..] {
                assert!(
                    !(from == from2 && input == input2),
                    "({from}, {input}) listed twice"
                );
            }
        }
    }

    #[test]
    fn final_states_have_no_way_back_to_idle() {
        for (from, _, to) in TRANSITIONS {
            if from.is_final() {
                assert!(to.is_final(), "{from} leads back to {to}");
            }
        }
    }
}
