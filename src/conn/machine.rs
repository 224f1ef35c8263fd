//! The connection state machine: both parties' states, the side flags,
//! and every transition, in tables.
//!
//! A connection (either role) keeps one [`Machine`]. It holds the state of
//! the **client's** messages (requests) and of the **server's** messages
//! (responses), whoever the local side is, and three side flags: the
//! connection's own reasons to close, a pending protocol switch, and a
//! client waiting for `100 Continue`. What the messages themselves say
//! (each one's keep-alive verdict, the requests still unanswered) is kept
//! where it is decided, by the decoder and the encoder, and handed to
//! every call as [`Facts`]. Two kinds of transitions move it, as in h11:
//!
//! - **event-triggered** ([`EVENTS`]): a message event of one party moves
//!   that party's state (a request head also makes a response due);
//! - **state-triggered** ([`TRIGGERS`]): whenever the joint configuration
//!   matches a rule, the rule fires, until none does. This is how the two
//!   directions meet: the next exchange starting, closing, switching.
//!
//! The machine does not know which party is local: a rule that would
//! differ by role is written as an explicit event instead (a client
//! withdrawing the rest of its body is [`Input::WithdrawBody`]). An input the table
//! does not list for the state it finds is a bug in the connection code,
//! caught by a debug assertion. `docs/state-machine.md` is generated from
//! the two tables, and a test keeps it so.

use std::fmt;

use crate::keep_alive::{CloseReason, KeepAlive};
use crate::role::Party;

/// Where one party's messages stand: the requests of the client or the
/// responses of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
#[repr(u8)]
pub enum State {
    /// No message in progress and none due: the default, a fresh
    /// connection's.
    #[default]
    Idle,
    /// A head is due or partly received: the first bytes of a request
    /// arrived, or (for the server) a request waits for its response.
    Head,
    /// The head is through; body bytes are being transferred.
    Body,
    /// The message is complete; the other party may still be busy.
    Done,
    /// Client only: the request offered a protocol switch (`Upgrade`, or
    /// CONNECT) and is complete; the response decides.
    MightSwitch,
    /// No further message of this party will pass; the connection closes.
    MustClose,
    /// The connection is closed for this party's messages.
    Closed,
    /// The connection was handed to another protocol (101, or a 2xx answer
    /// to CONNECT).
    Switched,
    /// A protocol error: nothing more passes.
    Error,
}

impl State {
    /// `true` in the states after which no further message of this party
    /// passes.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            State::MustClose | State::Closed | State::Switched | State::Error
        )
    }
}

/// What moves a party from one [`State`] to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Input {
    /// The first bytes of a head arrived (a request, on a server).
    HeadStarted,
    /// A head whose message has a body.
    Head,
    /// A head whose message has no body: complete with it.
    HeadOnly,
    /// Seen by the server party: a request head passed, so a response is
    /// due. The machine raises it itself.
    Requested,
    /// An interim (1xx, but 101) response.
    Interim,
    /// A 101, or a 2xx answer to CONNECT.
    Switch,
    /// The last byte of the body (or its trailers).
    EndOfMessage,
    /// A response queued but not yet drained was taken back (to be
    /// replaced by an error response).
    WithdrawResponse,
    /// The client withdraws the rest of its body: a final response came first.
    WithdrawBody,
    /// The connection closed for this party's messages.
    ConnectionClosed,
    /// A protocol error in this party's messages.
    Error,
    /// The local side ends the connection between exchanges (the last
    /// response, still queued whole, was amended to say so).
    Close,
}

impl Input {
    /// The input for a head: [`Input::Head`] when a body follows,
    /// [`Input::HeadOnly`] otherwise.
    pub(crate) fn head(body: bool) -> Input {
        if body { I::Head } else { I::HeadOnly }
    }
}

use Input as I;
use Party::{Client as C, Server as Sv};
use State as S;

/// The states without a message of the party in progress, from which
/// the connection closing ends its messages cleanly.
const AT_REST: &[State] = &[S::Idle, S::Done, S::MustClose];

/// Every event-triggered transition: (party, the states it moves the
/// party from, input, to), but those on [`Input::Error`], which [`NEXT`]
/// adds for every state where a party's messages may still pass.
pub(crate) const EVENTS: &[(Party, &[State], Input, State)] = &[
    (C, &[S::Idle], I::HeadStarted, S::Head),
    (C, &[S::Idle, S::Head, S::Done], I::Head, S::Body),
    (C, &[S::Idle, S::Head, S::Done], I::HeadOnly, S::Done),
    (C, &[S::Body], I::EndOfMessage, S::Done),
    (C, &[S::Body], I::WithdrawBody, S::MustClose),
    (C, AT_REST, I::ConnectionClosed, S::Closed),
    (C, &[S::Idle, S::Head], I::Close, S::MustClose),
    (Sv, &[S::Idle, S::Head], I::Requested, S::Head),
    (Sv, &[S::Body], I::Requested, S::Body),
    (Sv, &[S::Done], I::Requested, S::Done),
    (Sv, &[S::Idle, S::Head], I::Head, S::Body),
    (Sv, &[S::Idle, S::Head], I::HeadOnly, S::Done),
    (Sv, &[S::Idle], I::Close, S::MustClose),
    (Sv, &[S::Head], I::Interim, S::Head),
    (Sv, &[S::Head], I::Switch, S::Switched),
    (Sv, &[S::Body], I::EndOfMessage, S::Done),
    (Sv, &[S::Body, S::Done], I::WithdrawResponse, S::Head),
    (Sv, AT_REST, I::ConnectionClosed, S::Closed),
];

/// A side flag a rule reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flag {
    /// The verdict allows another exchange.
    KeepAlive,
    /// The request being answered offered a protocol switch.
    SwitchProposed,
    /// The client waits for `100 Continue`.
    ExpectContinue,
    /// Requests wait behind the one the response in progress (or just
    /// complete) answers: the client pipelined them.
    MoreDue,
    /// The server's own messages said the connection closes: no further
    /// response comes, whatever is still due.
    ResponsesEnd,
}

impl Flag {
    /// The flag's bit in [`Machine::flag_bits`].
    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// What a rule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Then {
    Client(State),
    Server(State),
    /// The verdict becomes to close, for this reason.
    Close(CloseReason),
    /// A flag the machine keeps is cleared: the switch proposal is over,
    /// or the client no longer waits for `100 Continue`.
    Forget(Flag),
}

/// A state-triggered rule: when the client's and the server's states are
/// among those listed (empty: any) and each flag has the value given, the
/// effects apply.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Trigger {
    pub(crate) client: &'static [State],
    pub(crate) server: &'static [State],
    pub(crate) flags: &'static [(Flag, bool)],
    pub(crate) then: &'static [Then],
    /// Why, for the document.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) why: &'static str,
}

const ANY: &[State] = &[];

/// Every state-triggered rule, tried in order until none applies.
pub(crate) const TRIGGERS: &[Trigger] = &[
    Trigger {
        client: &[S::Done],
        server: ANY,
        flags: &[(Flag::SwitchProposed, true)],
        then: &[Then::Client(S::MightSwitch)],
        why: "a complete request that offered a switch waits for the answer",
    },
    Trigger {
        client: &[S::MightSwitch],
        server: &[S::Switched],
        flags: &[],
        then: &[Then::Client(S::Switched)],
        why: "the switch was accepted",
    },
    Trigger {
        client: ANY,
        server: &[S::Switched],
        flags: &[(Flag::KeepAlive, true)],
        then: &[Then::Close(CloseReason::Switched)],
        why: "HTTP is over on a switched connection",
    },
    Trigger {
        client: ANY,
        server: &[S::Body, S::Done],
        flags: &[(Flag::SwitchProposed, true), (Flag::MoreDue, false)],
        then: &[Then::Forget(Flag::SwitchProposed)],
        why: "a final answer that does not switch refuses the switch",
    },
    Trigger {
        client: &[S::MightSwitch],
        server: ANY,
        flags: &[(Flag::SwitchProposed, false)],
        then: &[Then::Client(S::Done)],
        why: "the switch was refused: the request is simply complete",
    },
    Trigger {
        client: ANY,
        server: &[S::Done],
        flags: &[(Flag::ExpectContinue, true), (Flag::MoreDue, false)],
        then: &[
            Then::Forget(Flag::ExpectContinue),
            Then::Close(CloseReason::RejectedContinue),
        ],
        why: "a complete final answer to a client waiting for 100 Continue refuses its body: whether it is sent is unknown",
    },
    Trigger {
        client: &[S::Done],
        server: ANY,
        flags: &[(Flag::KeepAlive, false)],
        then: &[Then::Client(S::MustClose)],
        why: "no further request after one that closes",
    },
    Trigger {
        client: ANY,
        server: &[S::Done],
        flags: &[(Flag::KeepAlive, false), (Flag::MoreDue, false)],
        then: &[Then::Server(S::MustClose)],
        why: "no further response after the last one due, when the connection closes",
    },
    Trigger {
        client: ANY,
        server: &[S::Done],
        flags: &[(Flag::ResponsesEnd, true)],
        then: &[Then::Server(S::MustClose)],
        why: "no further response after one that closes the connection, even with requests still unanswered",
    },
    Trigger {
        client: &[S::Idle, S::Head, S::Body, S::MightSwitch],
        server: &[S::MustClose],
        flags: &[(Flag::KeepAlive, false)],
        then: &[Then::Client(S::MustClose)],
        why: "after a closing response no request is read or sent, not even the rest of one, and none waiting for a switch is answered",
    },
    Trigger {
        client: &[S::Closed],
        server: &[S::Idle, S::Done],
        flags: &[],
        then: &[Then::Server(S::MustClose)],
        why: "the requests ended: no response will be due",
    },
    Trigger {
        client: &[S::Error],
        server: &[S::Done],
        flags: &[],
        then: &[Then::Server(S::MustClose)],
        why: "a broken request after a complete response: nothing more to answer (a response still due may be the error response)",
    },
    Trigger {
        client: &[S::Idle, S::Done],
        server: &[S::Closed],
        flags: &[],
        then: &[Then::Client(S::MustClose)],
        why: "the responses ended: no request can be answered",
    },
    Trigger {
        client: &[S::Done],
        server: &[S::Error],
        flags: &[],
        then: &[Then::Client(S::MustClose)],
        why: "a broken response: no further request",
    },
    Trigger {
        client: ANY,
        server: &[S::Done],
        flags: &[(Flag::MoreDue, true), (Flag::ResponsesEnd, false)],
        then: &[Then::Server(S::Head)],
        why: "the response to the next pipelined request is due (a request that closes the connection closes it after its own response)",
    },
    Trigger {
        client: &[S::Done],
        server: &[S::Done],
        flags: &[
            (Flag::KeepAlive, true),
            (Flag::SwitchProposed, false),
            (Flag::MoreDue, false),
        ],
        then: &[Then::Client(S::Idle), Then::Server(S::Idle)],
        why: "the exchange is over and the connection is reused",
    },
];

/// Both parties' states and the side flags of one connection.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Machine {
    /// The client's and the server's, indexed by [`Party`].
    states: [State; 2],
    /// The connection's own reasons to close, beside its messages': a
    /// local decision, a body left unread, a refused switch or
    /// `100 Continue`, a protocol error.
    own: KeepAlive,
    /// The side flags it keeps, as their bits ([`Flag::bit`]): a switch
    /// proposed, a client waiting for `100 Continue`.
    flags: u8,
}

/// What the messages say, read where it is decided (the decoder, the
/// encoder) and handed to every call that may move the machine: it keeps
/// no copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Facts {
    /// The verdict of the requests: the last one sent or received.
    pub(crate) requests: KeepAlive,
    /// The verdict of the responses: the last final one.
    pub(crate) responses: KeepAlive,
    /// Requests wait behind the one the response in progress (or just
    /// complete) answers.
    pub(crate) behind: bool,
}

impl Machine {
    /// The state of the client's messages.
    pub(crate) fn client(&self) -> State {
        self.state(C)
    }

    /// The state of the server's messages.
    pub(crate) fn server(&self) -> State {
        self.state(Sv)
    }

    /// The state of one party's messages.
    pub(crate) fn state(&self, party: Party) -> State {
        self.states[party as usize]
    }

    /// The verdict so far: reusable, or the first reason to close (the
    /// requests', the connection's own, the responses', in that order).
    #[inline]
    pub(crate) fn verdict(&self, facts: Facts) -> KeepAlive {
        facts.requests.and(self.own).and(facts.responses)
    }

    /// `true` while the client waits for `100 Continue`.
    pub(crate) fn expects_continue(&self) -> bool {
        self.flags & Flag::ExpectContinue.bit() != 0
    }

    /// An event of `party`'s messages. Unlisted pairs are a bug in the
    /// connection code: caught in debug builds, ignored otherwise.
    #[inline]
    pub(crate) fn on(&mut self, party: Party, input: Input, facts: Facts) {
        self.step(party, input);
        if party == C && matches!(input, I::Head | I::HeadOnly) {
            self.step(Sv, I::Requested);
        }
        self.settle(facts);
    }

    /// The verdict becomes to close, for `reason` unless there was one.
    pub(crate) fn close(&mut self, reason: CloseReason, facts: Facts) {
        self.own = self.own.and(KeepAlive::Close(reason));
        self.settle(facts);
    }

    /// The request about to be noted offers a protocol switch: set before
    /// its head moves the machine, so that the rules find it waiting for
    /// the answer even when its own verdict is to close.
    pub(crate) fn propose_switch(&mut self) {
        self.flags |= Flag::SwitchProposed.bit();
    }

    /// The client waits for `100 Continue` before sending its body.
    pub(crate) fn expect_continue(&mut self) {
        self.flags |= Flag::ExpectContinue.bit();
    }

    /// `100 Continue` passed: the client no longer waits.
    pub(crate) fn continue_sent(&mut self) {
        self.flags &= !Flag::ExpectContinue.bit();
    }

    /// The final answer to a client waiting for `100 Continue` left the
    /// server before `100 Continue` did (the client received its head; the
    /// server drained part of it before the body was asked for): the body
    /// is refused, since whether the client sends it is unknown, and the
    /// connection closes. Only for the last request in flight, as the
    /// rule for a complete answer. When a final head left is known
    /// differs by role, so each role raises this itself.
    pub(crate) fn refuse_continue(&mut self, facts: Facts) {
        if self.expects_continue() && !facts.behind {
            self.continue_sent();
            self.close(CloseReason::RejectedContinue, facts);
        }
    }

    #[inline]
    fn step(&mut self, party: Party, input: Input) {
        let from = self.state(party);
        match next(party, from, input) {
            Some(to) => self.states[party as usize] = to,
            None => debug_assert!(
                false,
                "no transition for {party:?} from {from} on {input:?}"
            ),
        }
    }

    /// Applies the state-triggered rules, the first that matches first,
    /// until none matches (as h11's `_fire_state_triggered_transitions`):
    /// where they end from each joint state and flag value was worked out
    /// from the rules at compile time ([`SETTLED`]), so that this is one
    /// lookup.
    #[inline]
    pub(crate) fn settle(&mut self, facts: Facts) {
        let to = &SETTLED[self.client() as usize][self.server() as usize]
            [usize::from(self.flag_bits(facts))];
        self.states = [to.client, to.server];
        if let Some(reason) = to.close {
            self.own = self.own.and(KeepAlive::Close(reason));
        }
        self.flags &= !to.cleared;
    }

    /// [`settle`](Self::settle) rule by rule, as the rules read: what
    /// [`SETTLED`] is checked against.
    #[cfg(test)]
    fn settle_by_rules(&mut self, facts: Facts) {
        for _ in 0..4 * TRIGGERS.len() {
            match TRIGGERS.iter().find(|rule| self.matches(rule, facts)) {
                Some(rule) => self.apply(rule),
                None => return,
            }
        }
        panic!("the rules do not settle: {self:?}");
    }

    #[cfg(test)]
    fn apply(&mut self, rule: &Trigger) {
        for then in rule.then {
            match *then {
                Then::Client(s) => self.states[C as usize] = s,
                Then::Server(s) => self.states[Sv as usize] = s,
                Then::Close(reason) => self.own = self.own.and(KeepAlive::Close(reason)),
                Then::Forget(flag) => self.flags &= !flag.bit(),
            }
        }
    }

    /// The side flags as bits (see [`Flag::bit`]).
    #[inline]
    fn flag_bits(&self, facts: Facts) -> u8 {
        u8::from(self.verdict(facts).is_reusable())
            | self.flags
            | u8::from(facts.behind) << 3
            | u8::from(!facts.responses.is_reusable()) << 4
    }

    /// `true` when `rule` applies, read from the rule itself: both
    /// parties' states are among those it lists (none listed: any) and
    /// each flag has the value it gives. What the indexes are checked
    /// against.
    #[cfg(test)]
    fn matches(&self, rule: &Trigger, facts: Facts) -> bool {
        let flag = |flag| match flag {
            Flag::KeepAlive => self.verdict(facts).is_reusable(),
            Flag::SwitchProposed | Flag::ExpectContinue => self.flags & flag.bit() != 0,
            Flag::MoreDue => facts.behind,
            Flag::ResponsesEnd => !facts.responses.is_reusable(),
        };
        (rule.client.is_empty() || rule.client.contains(&self.client()))
            && (rule.server.is_empty() || rule.server.contains(&self.server()))
            && rule.flags.iter().all(|&(f, value)| flag(f) == value)
    }
}

/// The number of states and inputs, for the lookup tables.
const STATES: usize = 9;
const INPUTS: usize = 12;

/// Every state, in the order of their discriminants.
const ALL_STATES: [State; STATES] = [
    S::Idle,
    S::Head,
    S::Body,
    S::Done,
    S::MightSwitch,
    S::MustClose,
    S::Closed,
    S::Switched,
    S::Error,
];

/// [`EVENTS`] and the transitions on [`Input::Error`] as a lookup table,
/// built at compile time: the next state, or `None` for an unlisted pair.
static NEXT: [[[Option<State>; INPUTS]; STATES]; 2] = {
    let mut table = [[[None; INPUTS]; STATES]; 2];
    let mut i = 0;
    while i < EVENTS.len() {
        let (p, from, input, to) = EVENTS[i];
        let mut k = 0;
        while k < from.len() {
            table[p as usize][from[k] as usize][input as usize] = Some(to);
            k += 1;
        }
        i += 1;
    }
    // A protocol error moves either party to `Error` from every state
    // declared before `Closed`: those where its messages may still pass.
    let mut s = 0;
    while s < S::Closed as usize {
        table[0][s][I::Error as usize] = Some(S::Error);
        table[1][s][I::Error as usize] = Some(S::Error);
        s += 1;
    }
    table
};

/// Where the rules end from one joint state and flag value: the states,
/// the reason to close the first rule that closes gives, and the flags
/// cleared.
#[derive(Debug, Clone, Copy)]
struct Settled {
    client: State,
    server: State,
    close: Option<CloseReason>,
    /// The flags cleared, as their bits.
    cleared: u8,
}

/// For each joint state (client, server) and each value of the flag bits,
/// where the rules end, tried in order from the first that matches until
/// none does: worked out at compile time from [`TRIGGERS`] (a table that
/// does not settle does not compile).
static SETTLED: [[[Settled; 32]; STATES]; STATES] = {
    let mut table = [[[settled(0, 0, 0); 32]; STATES]; STATES];
    let mut c = 0;
    while c < STATES {
        let mut sv = 0;
        while sv < STATES {
            let mut bits = 0;
            while bits < 32 {
                table[c][sv][bits] = settled(c, sv, bits as u8);
                bits += 1;
            }
            sv += 1;
        }
        c += 1;
    }
    table
};

/// The rules applied from client state `c`, server state `sv` and flags
/// `bits` until none matches.
const fn settled(c: usize, sv: usize, mut bits: u8) -> Settled {
    let mut to = Settled {
        client: ALL_STATES[c],
        server: ALL_STATES[sv],
        close: None,
        cleared: 0,
    };
    // Each rule changes a state or clears a flag for good, so this ends;
    // the bound only guards against a table mistake.
    let mut round = 0;
    while round < 4 * TRIGGERS.len() {
        let mut r = 0;
        while r < TRIGGERS.len() && !fires(&TRIGGERS[r], to.client, to.server, bits) {
            r += 1;
        }
        if r == TRIGGERS.len() {
            return to;
        }
        let then = TRIGGERS[r].then;
        let mut k = 0;
        while k < then.len() {
            match then[k] {
                Then::Client(s) => to.client = s,
                Then::Server(s) => to.server = s,
                Then::Close(reason) => {
                    if to.close.is_none() {
                        to.close = Some(reason);
                    }
                    bits &= !Flag::KeepAlive.bit();
                }
                Then::Forget(flag) => {
                    to.cleared |= flag.bit();
                    bits &= !flag.bit();
                }
            }
            k += 1;
        }
        round += 1;
    }
    panic!("the rules do not settle")
}

/// `true` when `rule` fires from client state `c`, server state `sv` and
/// flags `bits`: both states are among those it lists (none listed: any)
/// and each flag has the value it gives.
const fn fires(rule: &Trigger, c: State, sv: State, bits: u8) -> bool {
    let mut k = 0;
    while k < rule.flags.len() {
        let (flag, value) = rule.flags[k];
        if (bits & flag.bit() != 0) != value {
            return false;
        }
        k += 1;
    }
    lists(rule.client, c) && lists(rule.server, sv)
}

/// `true` when `list` is empty (any state) or holds `state`.
const fn lists(list: &[State], state: State) -> bool {
    let mut k = 0;
    while k < list.len() {
        if list[k] as u8 == state as u8 {
            return true;
        }
        k += 1;
    }
    list.is_empty()
}

/// The state after `input` from `from`, if the table lists it.
#[inline]
fn next(party: Party, from: State, input: Input) -> Option<State> {
    NEXT[party as usize][from as usize][input as usize]
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// The document's generated sections, from the tables.
#[cfg(test)]
pub(crate) mod doc {
    use super::*;

    fn party(p: Party) -> &'static str {
        match p {
            C => "client",
            Sv => "server",
        }
    }

    fn states(list: &[State]) -> String {
        if list.is_empty() {
            "any".into()
        } else {
            list.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        }
    }

    /// The event-triggered transitions as a Markdown table.
    pub(crate) fn events_markdown() -> String {
        let mut out = String::from("| party | from | input | to |\n|---|---|---|---|\n");
        for &(p, from, input, to) in EVENTS {
            let from = states(from);
            out.push_str(&format!("| {} | {from} | {input:?} | {to} |\n", party(p)));
        }
        // The transitions on `Error` that `NEXT` adds, read back from it.
        let final_states: Vec<String> = ALL_STATES
            .iter()
            .filter(|&&s| next(C, s, I::Error).is_none() && next(Sv, s, I::Error).is_none())
            .map(|s| s.to_string())
            .collect();
        out.push_str(&format!(
            "| either | any but {} | Error | Error |\n",
            final_states.join(", ")
        ));
        out
    }

    /// A rule's name in the document: its place in [`TRIGGERS`], from `R1`.
    fn rule_name(index: usize) -> String {
        format!("R{}", index + 1)
    }

    /// A rule's flag conditions: "always" when it has none.
    fn flags(rule: &Trigger) -> String {
        if rule.flags.is_empty() {
            "always".to_string()
        } else {
            rule.flags
                .iter()
                .map(|&(f, v)| format!("{}{f:?}", if v { "" } else { "not " }))
                .collect::<Vec<_>>()
                .join(" and ")
        }
    }

    /// The state-triggered rules as a Markdown table.
    pub(crate) fn rules_markdown() -> String {
        let mut out = String::from(
            "| rule | client | server | when | then | why |\n|---|---|---|---|---|---|\n",
        );
        for (i, rule) in TRIGGERS.iter().enumerate() {
            let then = rule
                .then
                .iter()
                .map(|t| match t {
                    Then::Client(s) => format!("client → {s}"),
                    Then::Server(s) => format!("server → {s}"),
                    Then::Close(r) => format!("verdict → Close({r:?})"),
                    Then::Forget(Flag::SwitchProposed) => "switch proposal over".to_string(),
                    Then::Forget(Flag::ExpectContinue) => "no longer expecting 100".to_string(),
                    Then::Forget(flag) => format!("not {flag:?}"),
                })
                .collect::<Vec<_>>()
                .join("; ");
            out.push_str(&format!(
                "| {} | {} | {} | {} | {then} | {} |\n",
                rule_name(i),
                states(rule.client),
                states(rule.server),
                flags(rule),
                rule.why
            ));
        }
        out
    }

    /// [`EVENTS`] one state moved from at a time: (party, from, input, to).
    pub(crate) fn event_rows() -> impl Iterator<Item = (Party, State, Input, State)> {
        EVENTS
            .iter()
            .flat_map(|&(p, from, input, to)| from.iter().map(move |&f| (p, f, input, to)))
    }

    /// One edge of the diagram: (party, from, to, label).
    type Edge = (Party, State, State, String);

    /// Every transition the diagram draws, from both tables: each event
    /// but `Error` (labelled with its input), and each rule that moves a
    /// party (labelled with its name and what it asks of the other party
    /// and of the flags), once per state it moves the party from.
    fn edges() -> Vec<Edge> {
        let mut out: Vec<Edge> = event_rows()
            .map(|(p, from, input, to)| (p, from, to, format!("{input:?}")))
            .collect();
        for (i, rule) in TRIGGERS.iter().enumerate() {
            for then in rule.then {
                let (p, own, other, to) = match *then {
                    Then::Client(to) => (C, rule.client, rule.server, to),
                    Then::Server(to) => (Sv, rule.server, rule.client, to),
                    _ => continue,
                };
                let mut when = Vec::new();
                if !other.is_empty() {
                    let other_party = if p == C { Sv } else { C };
                    when.push(format!("{} {}", party(other_party), states(other)));
                }
                if !rule.flags.is_empty() || when.is_empty() {
                    when.push(flags(rule));
                }
                let label = format!("{} {}", rule_name(i), when.join(", "));
                let from: Vec<State> = if own.is_empty() {
                    ALL_STATES
                        .into_iter()
                        .filter(|s| !s.is_final() && *s != to)
                        .collect()
                } else {
                    own.to_vec()
                };
                for from in from {
                    out.push((p, from, to, label.clone()));
                }
            }
        }
        out
    }

    /// Both parties' transitions as a Mermaid state diagram: one box per
    /// party, the final states styled apart.
    pub(crate) fn diagram_mermaid() -> String {
        let edges = edges();
        let mut out = String::from("stateDiagram-v2\n");
        let mut finals = Vec::new();
        for p in [C, Sv] {
            let name = party(p);
            out.push_str(&format!("    state {name} {{\n"));
            for s in ALL_STATES {
                let drawn = edges
                    .iter()
                    .any(|&(q, from, to, _)| q == p && (from == s || to == s));
                if drawn {
                    out.push_str(&format!("        state \"{s}\" as {name}_{s}\n"));
                    if s.is_final() {
                        finals.push(format!("{name}_{s}"));
                    }
                }
            }
            out.push_str(&format!("        [*] --> {name}_{}\n", State::Idle));
            for (_, from, to, label) in edges.iter().filter(|e| e.0 == p) {
                out.push_str(&format!("        {name}_{from} --> {name}_{to}: {label}\n"));
            }
            out.push_str("    }\n");
        }
        out.push_str("    classDef final font-style:italic,stroke-width:3px\n");
        out.push_str(&format!("    class {} final\n", finals.join(",")));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [State; STATES] = ALL_STATES;

    #[test]
    fn the_lookup_tables_are_the_lists() {
        for (i, s) in ALL_STATES.iter().enumerate() {
            assert_eq!(*s as usize, i);
        }
        for (p, from, input, to) in doc::event_rows() {
            assert_eq!(next(p, from, input), Some(to));
        }
        let listed = |p, f, i| {
            doc::event_rows().any(|(q, g, j, _)| (q, g, j) == (p, f, i))
                || i == I::Error && !matches!(f, S::Closed | S::Switched | S::Error)
        };
        let mut unlisted = 0;
        for p in [C, Sv] {
            for f in ALL_STATES {
                for i in INPUT_LIST {
                    if !listed(p, f, i) {
                        assert_eq!(next(p, f, i), None);
                        unlisted += 1;
                    }
                }
            }
        }
        assert!(unlisted > 0);
        // The rules as compiled: for every joint state and flag value, the
        // rules that fire are those whose conditions hold.
        for client in ALL_STATES {
            for server in ALL_STATES {
                for bits in 0..32u8 {
                    let Some((m, facts)) = with_flags(client, server, bits) else {
                        continue;
                    };
                    assert_eq!(m.flag_bits(facts), bits);
                    for rule in TRIGGERS {
                        assert_eq!(
                            fires(rule, client, server, bits),
                            m.matches(rule, facts),
                            "{}",
                            rule.why
                        );
                    }
                }
            }
        }
    }

    /// A machine in `client` and `server` whose flags, with the facts
    /// returned, are `bits`; `None` for flags no machine has (responses
    /// that end the connection and a verdict that keeps it).
    fn with_flags(client: State, server: State, bits: u8) -> Option<(Machine, Facts)> {
        let on = |flag: Flag| bits & flag.bit() != 0;
        if on(Flag::ResponsesEnd) && on(Flag::KeepAlive) {
            return None;
        }
        let close = KeepAlive::Close(CloseReason::PeerClose);
        let m = Machine {
            states: [client, server],
            own: if on(Flag::KeepAlive) {
                KeepAlive::Reusable
            } else {
                KeepAlive::Close(CloseReason::LocalClose)
            },
            flags: bits & (Flag::SwitchProposed.bit() | Flag::ExpectContinue.bit()),
        };
        let facts = Facts {
            requests: KeepAlive::Reusable,
            responses: if on(Flag::ResponsesEnd) {
                close
            } else {
                KeepAlive::Reusable
            },
            behind: on(Flag::MoreDue),
        };
        Some((m, facts))
    }

    /// The facts of a connection whose messages all keep it open and that
    /// has no request waiting behind the one answered.
    const F: Facts = Facts {
        requests: KeepAlive::Reusable,
        responses: KeepAlive::Reusable,
        behind: false,
    };

    const INPUT_LIST: [Input; INPUTS] = [
        I::HeadStarted,
        I::Head,
        I::HeadOnly,
        I::Requested,
        I::Interim,
        I::Switch,
        I::EndOfMessage,
        I::WithdrawResponse,
        I::WithdrawBody,
        I::ConnectionClosed,
        I::Error,
        I::Close,
    ];

    #[test]
    fn the_event_table_is_a_function() {
        let rows: Vec<_> = doc::event_rows().collect();
        for (i, &(p, from, input, _)) in rows.iter().enumerate() {
            for &(p2, from2, input2, _) in &rows[i + 1..] {
                assert!(
                    !(p == p2 && from == from2 && input == input2),
                    "({p:?}, {from}, {input:?}) listed twice"
                );
            }
        }
    }

    #[test]
    fn final_states_stay_final() {
        for (p, from, input, to) in doc::event_rows() {
            assert!(
                !from.is_final() || to.is_final(),
                "{p:?} {from} --{input:?}--> {to}"
            );
        }
        for rule in TRIGGERS {
            for then in rule.then {
                if let Then::Client(to) | Then::Server(to) = then {
                    let from = match then {
                        Then::Client(_) => rule.client,
                        _ => rule.server,
                    };
                    assert!(
                        to.is_final() || from.iter().all(|s| !s.is_final()) && !from.is_empty(),
                        "{}: a final state left",
                        rule.why
                    );
                }
            }
        }
    }

    /// From every joint state and every value of the flags, the rules
    /// reach a fixed point (the debug assertion in `settle` would fire).
    #[test]
    fn the_rules_settle_everywhere() {
        for client in ALL {
            for server in ALL {
                for bits in 0..32u8 {
                    let Some((mut m, facts)) = with_flags(client, server, bits) else {
                        continue;
                    };
                    let mut by_rules = m.clone();
                    by_rules.settle_by_rules(facts);
                    assert!(TRIGGERS.iter().all(|r| !by_rules.matches(r, facts)));
                    m.settle(facts);
                    assert_eq!(m, by_rules, "from {client}, {server}, {bits:#07b}");
                }
            }
        }
    }

    #[test]
    fn an_exchange_on_a_server_connection() {
        let mut m = Machine::default();
        m.on(C, I::HeadStarted, F);
        assert_eq!((m.client(), m.server()), (S::Head, S::Idle));
        m.on(C, I::Head, F);
        assert_eq!((m.client(), m.server()), (S::Body, S::Head));
        m.on(C, I::EndOfMessage, F);
        // The request is complete; the response is due.
        assert_eq!((m.client(), m.server()), (S::Done, S::Head));
        m.on(Sv, I::Head, F);
        m.on(Sv, I::EndOfMessage, F);
        assert_eq!((m.client(), m.server()), (S::Idle, S::Idle));
    }

    #[test]
    fn an_early_response_waits_for_the_request_body() {
        let mut m = Machine::default();
        m.on(C, I::Head, F);
        m.on(Sv, I::HeadOnly, F);
        assert_eq!((m.client(), m.server()), (S::Body, S::Done));
        m.on(C, I::EndOfMessage, F);
        assert_eq!((m.client(), m.server()), (S::Idle, S::Idle));
        // Closing instead: the rest of the body is not read.
        let mut m = Machine::default();
        m.on(C, I::Head, F);
        m.on(Sv, I::HeadOnly, F);
        m.close(CloseReason::UnreadBody, F);
        assert_eq!((m.client(), m.server()), (S::MustClose, S::MustClose));
    }

    #[test]
    fn pipelined_requests_make_responses_due_in_turn() {
        let behind = Facts { behind: true, ..F };
        let mut m = Machine::default();
        m.on(C, I::HeadOnly, F);
        // A client pipelines from Done: the next request follows at once.
        m.on(C, I::HeadOnly, behind);
        assert_eq!((m.client(), m.server()), (S::Done, S::Head));
        // The first response begins: the second request waits behind it.
        m.on(Sv, I::Head, behind);
        m.on(Sv, I::EndOfMessage, behind);
        assert_eq!(m.server(), S::Head);
        m.on(Sv, I::HeadOnly, F);
        assert_eq!((m.client(), m.server()), (S::Idle, S::Idle));
        // Closing with a request behind: the responses go on to it.
        let mut m = Machine::default();
        m.on(C, I::HeadOnly, F);
        m.on(C, I::HeadOnly, behind);
        m.on(Sv, I::HeadOnly, behind);
        assert_eq!(m.server(), S::Head);
        // A response that closes ends the responses, whatever is due.
        let closing = Facts {
            responses: KeepAlive::Close(CloseReason::PeerClose),
            ..behind
        };
        let mut m = Machine::default();
        m.on(C, I::HeadOnly, F);
        m.on(C, I::HeadOnly, behind);
        m.on(Sv, I::HeadOnly, closing);
        assert_eq!((m.client(), m.server()), (S::MustClose, S::MustClose));
    }

    #[test]
    fn a_switch_offered_waits_then_switches_or_not() {
        let mut m = Machine::default();
        m.propose_switch();
        m.on(C, I::HeadOnly, F);
        assert_eq!(m.client(), S::MightSwitch);
        m.on(Sv, I::Interim, F);
        assert_eq!(m.client(), S::MightSwitch);
        m.on(Sv, I::Switch, F);
        assert_eq!((m.client(), m.server()), (S::Switched, S::Switched));
        // Refused: the request is simply complete.
        let mut m = Machine::default();
        m.propose_switch();
        m.on(C, I::HeadOnly, F);
        m.on(Sv, I::Head, F);
        assert_eq!(m.client(), S::Done);
        m.on(Sv, I::EndOfMessage, F);
        assert_eq!((m.client(), m.server()), (S::Idle, S::Idle));
        // A request that closes the connection may still be switched.
        let closing = Facts {
            requests: KeepAlive::Close(CloseReason::PeerClose),
            ..F
        };
        let mut m = Machine::default();
        m.propose_switch();
        m.on(C, I::HeadOnly, closing);
        assert_eq!(m.client(), S::MightSwitch);
        m.on(Sv, I::Switch, closing);
        assert_eq!((m.client(), m.server()), (S::Switched, S::Switched));
    }

    #[test]
    fn a_final_answer_to_a_waiting_client_closes() {
        let rejected = KeepAlive::Close(CloseReason::RejectedContinue);
        let mut m = Machine::default();
        m.expect_continue();
        m.on(C, I::Head, F);
        m.on(Sv, I::HeadOnly, F);
        assert_eq!(m.verdict(F), rejected);
        assert!(!m.expects_continue());
        // A streamed final head leaves the question open: `100 Continue`
        // may still go ahead of it, or the head left first.
        for left in [false, true] {
            let mut m = Machine::default();
            m.expect_continue();
            m.on(C, I::Head, F);
            m.on(Sv, I::Head, F);
            assert_eq!(m.verdict(F), KeepAlive::Reusable);
            assert!(m.expects_continue());
            if left {
                m.refuse_continue(F);
                assert_eq!(m.verdict(F), rejected);
            } else {
                m.continue_sent();
                m.on(C, I::EndOfMessage, F);
                m.on(Sv, I::EndOfMessage, F);
                assert_eq!((m.client(), m.server()), (S::Idle, S::Idle));
                assert_eq!(m.verdict(F), KeepAlive::Reusable);
            }
            assert!(!m.expects_continue());
        }
        // Finished without asking for the body: refused.
        let mut m = Machine::default();
        m.expect_continue();
        m.on(C, I::Head, F);
        m.on(Sv, I::Head, F);
        m.on(Sv, I::EndOfMessage, F);
        assert_eq!(m.verdict(F), rejected);
        let mut m = Machine::default();
        m.expect_continue();
        m.on(C, I::Head, F);
        m.on(Sv, I::Interim, F);
        m.continue_sent();
        m.on(C, I::EndOfMessage, F);
        m.on(Sv, I::HeadOnly, F);
        assert_eq!(m.verdict(F), KeepAlive::Reusable);
        // The answer to an earlier request, with the waiting one behind
        // it, refuses nothing.
        let behind = Facts { behind: true, ..F };
        let mut m = Machine::default();
        m.on(C, I::HeadOnly, F);
        m.expect_continue();
        m.on(C, I::Head, behind);
        m.on(Sv, I::HeadOnly, behind);
        assert_eq!(
            (m.verdict(behind), m.server()),
            (KeepAlive::Reusable, S::Head)
        );
        assert!(m.expects_continue());
    }

    #[test]
    fn the_peer_closing_between_exchanges_closes_both() {
        let mut m = Machine::default();
        m.on(C, I::ConnectionClosed, F);
        assert_eq!((m.client(), m.server()), (S::Closed, S::MustClose));
    }

    const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/state-machine.md");

    fn section(doc: &str, name: &str) -> (usize, usize) {
        let start = format!("<!-- {name}:start -->\n");
        let end = format!("<!-- {name}:end -->");
        let from = doc
            .find(&start)
            .unwrap_or_else(|| panic!("no {name} start marker"))
            + start.len();
        let to = doc[from..]
            .find(&end)
            .unwrap_or_else(|| panic!("no {name} end marker"))
            + from;
        (from, to)
    }

    /// `docs/state-machine.md` shows the tables and the diagram generated
    /// from the code. With `H1PROTO_BLESS_DOCS=1` the document is rewritten
    /// first (run that after changing a table, then review the diff).
    #[test]
    fn the_document_is_generated_from_the_tables() {
        let mut text = std::fs::read_to_string(DOC).unwrap();
        let generated = [
            ("events", doc::events_markdown()),
            ("rules", doc::rules_markdown()),
            (
                "diagram",
                format!("```mermaid\n{}```\n", doc::diagram_mermaid()),
            ),
        ];
        if std::env::var_os("H1PROTO_BLESS_DOCS").is_some() {
            for (name, body) in &generated {
                let (from, to) = section(&text, name);
                text.replace_range(from..to, body);
            }
            std::fs::write(DOC, &text).unwrap();
        }
        for (name, body) in &generated {
            let (from, to) = section(&text, name);
            assert_eq!(
                &text[from..to],
                body,
                "docs/state-machine.md section {name} is stale"
            );
        }
    }
}
