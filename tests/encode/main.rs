//! The encoders: framing chosen for each message form, the order and
//! segments of the output, forwarding decoded heads, and round trips through
//! the decoders.

mod encode_forwarding;
mod encode_framing;
mod encode_message_forms;
mod encode_order;
mod encode_segments;
mod roundtrip;
