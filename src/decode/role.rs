//! What each role adds to the decoder: its start line, its framing
//! decision, and its switches.
//!
//! The trait is sealed: it is public only so that [`Role`](crate::role::Role)
//! can require it, and its methods use the decoder's private types.
#![allow(private_interfaces)]

use bytes::Bytes;
use http::{Request, Response};

use super::head::{request_head, response_head};
use super::{Core, Event, InFlight, MessageHead};
use crate::error::Error;
use crate::leniency::{RequestLeniency, ResponseLeniency, Rules};
use crate::role::{Client, Server};

/// The role's part of a [`Decoder`](super::Decoder). Sealed: it cannot be
/// named outside the crate.
pub trait Receive: Sized {
    /// The head of the messages the role receives.
    type Recv: MessageHead;
    /// The leniency switches of those messages.
    type Leniency: Copy + Default + std::fmt::Debug;
    #[doc(hidden)]
    type Pending: Default + std::fmt::Debug;
    #[doc(hidden)]
    const REQUESTS: bool;
    #[doc(hidden)]
    fn rules(leniency: Self::Leniency) -> Rules;
    #[doc(hidden)]
    fn leniency(rules: &Rules) -> Self::Leniency;
    #[doc(hidden)]
    fn head(
        core: &mut Core,
        pending: &mut Self::Pending,
        head: Bytes,
    ) -> Result<Event<Self::Recv>, Error>;
}

/// Seals [`Head`].
pub trait SealedHead {}

impl SealedHead for Request<()> {}
impl SealedHead for Response<()> {}

impl Receive for Server {
    type Recv = Request<()>;
    type Leniency = RequestLeniency;
    type Pending = ();
    const REQUESTS: bool = true;

    fn rules(leniency: RequestLeniency) -> Rules {
        Rules::of_requests(leniency)
    }

    fn leniency(rules: &Rules) -> RequestLeniency {
        let mut leniency = RequestLeniency::strict();
        leniency.bare_lf = rules.bare_lf;
        leniency.obs_fold = rules.obs_fold;
        leniency.chunked_with_content_length = rules.chunked_with_content_length;
        leniency
    }

    #[inline]
    fn head(core: &mut Core, (): &mut (), head: Bytes) -> Result<Event<Request<()>>, Error> {
        request_head(core, head)
    }
}

impl Receive for Client {
    type Recv = Response<()>;
    type Leniency = ResponseLeniency;
    type Pending = InFlight;
    const REQUESTS: bool = false;

    fn rules(leniency: ResponseLeniency) -> Rules {
        Rules::of_responses(leniency)
    }

    fn leniency(rules: &Rules) -> ResponseLeniency {
        let mut leniency = ResponseLeniency::strict();
        leniency.no_space_after_status = rules.no_space_after_status;
        leniency.space_before_colon = rules.space_before_colon;
        leniency.skip_invalid_fields = rules.skip_invalid_fields;
        leniency.bare_lf = rules.bare_lf;
        leniency
    }

    #[inline]
    fn head(
        core: &mut Core,
        pending: &mut InFlight,
        head: Bytes,
    ) -> Result<Event<Response<()>>, Error> {
        response_head(core, pending, head)
    }
}
