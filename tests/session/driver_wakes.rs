//! The runtime-neutral driver (`adapter::driver::Conn`) on a runtime whose
//! every wait is a registered waker and whose clock moves only from one
//! event to the next: input arriving in any pieces at any times, writes
//! that take any sizes and block for any time, the session's deadlines,
//! a graceful shutdown's signal, and work awaited through
//! `while_connected`, some of it never ending but by the client's close.
//! The task is polled again only when a waker it left was woken, so a
//! wait the driver forgets to register (the timer, the signal, the read
//! that watches the client) shows as a connection that never ends;
//! a poll that goes round for ever shows as one that never returns.
//! Whatever the schedule, every request is answered in order with its own
//! answer (up to the shutdown, if one came, or the client's close, if
//! that ended the work), and the connection closes.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes};
use h1proto::adapter::driver::{Conn, RuntimeIo};
use h1proto::{Config, ServerSession, Session};
use h1proto_test_support::schedule::{Req, Schedule, answers, pieces, schedule, waits};
use http::{Method, Response};
use proptest::prelude::*;

/// The peer and the clock, shared by the runtime, the work and the
/// signal.
struct World {
    now: Instant,
    /// Input still to come, each piece at its time.
    arrivals: VecDeque<(Instant, Vec<u8>)>,
    /// Input come and not read yet.
    input: VecDeque<u8>,
    /// The peer closes its side after its last piece.
    fin: bool,
    /// What the driver wrote.
    sent: Vec<u8>,
    /// Each write takes at most the next of these, in turn.
    write_sizes: Vec<usize>,
    writes: usize,
    /// After each write, the next one blocks this long (ms), in turn.
    write_gaps: Vec<u64>,
    write_ready_at: Instant,
    read_waker: Option<Waker>,
    write_waker: Option<Waker>,
    /// Timers: the driver's sleep, the work's, the shutdown's signal.
    timers: Vec<(Instant, Waker)>,
    closed: bool,
}

type Shared = Arc<Mutex<World>>;

fn lock(world: &Shared) -> std::sync::MutexGuard<'_, World> {
    world.lock().unwrap()
}

/// The runtime's four operations over the world.
struct Io(Shared);

impl RuntimeIo for Io {
    fn poll_read(&mut self, cx: &mut Context<'_>, s: &mut dyn Session) -> Poll<io::Result<usize>> {
        let mut w = lock(&self.0);
        if w.input.is_empty() {
            if w.fin && w.arrivals.is_empty() {
                return Poll::Ready(Ok(0));
            }
            w.read_waker = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let room = s.read_slice();
        let n = room.len().min(w.input.len());
        for (to, from) in room.iter_mut().zip(w.input.drain(..n)) {
            *to = from;
        }
        Poll::Ready(Ok(n))
    }

    fn poll_write(&mut self, cx: &mut Context<'_>, s: &mut dyn Session) -> Poll<io::Result<usize>> {
        let mut w = lock(&self.0);
        if w.now < w.write_ready_at {
            w.write_waker = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let out = s.output();
        let chunk = out.chunk();
        let k = w.writes;
        let n = chunk.len().min(w.write_sizes[k % w.write_sizes.len()]);
        w.sent.extend_from_slice(&chunk[..n]);
        let gap = w.write_gaps[k % w.write_gaps.len()];
        w.write_ready_at = w.now + Duration::from_millis(gap);
        w.writes += 1;
        Poll::Ready(Ok(n))
    }

    fn poll_shutdown_write(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_sleep_until(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()> {
        sleep_until(&self.0, cx, at)
    }

    fn now(&self) -> Instant {
        lock(&self.0).now
    }

    fn poll_close(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        lock(&self.0).closed = true;
        Poll::Ready(Ok(()))
    }
}

fn sleep_until(world: &Shared, cx: &Context<'_>, at: Instant) -> Poll<()> {
    let mut w = lock(world);
    if w.now >= at {
        return Poll::Ready(());
    }
    w.timers.push((at, cx.waker().clone()));
    Poll::Pending
}

/// A future ready at `at` on the world's clock.
struct Sleep(Shared, Instant);

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        sleep_until(&self.0, cx, self.1)
    }
}

/// The application of `h1proto_test_support::schedule`.
async fn serve(conn: &mut Conn<Io, ServerSession>, world: &Shared) -> io::Result<()> {
    while let Some(req) = conn.call(ServerSession::next_request).await? {
        let path = req.uri().path().to_owned();
        let body = if req.method() == Method::POST {
            conn.call(ServerSession::read_body).await?
        } else if path == "/wait" {
            conn.while_connected(std::future::pending::<()>()).await?;
            Bytes::new()
        } else if let Some(ms) = path.strip_prefix("/slow/") {
            let at = lock(world).now + Duration::from_millis(ms.parse().unwrap());
            conn.while_connected(Sleep(world.clone(), at)).await?;
            Bytes::from(path)
        } else if let Some(ms) = path.strip_prefix("/stream/") {
            let gap = Duration::from_millis(ms.parse().unwrap());
            conn.sender().send_head(Response::new(()))?;
            for piece in path.as_bytes().chunks(3) {
                let at = lock(world).now + gap;
                conn.while_connected(Sleep(world.clone(), at)).await?;
                conn.sender().send_data(Bytes::copy_from_slice(piece))?;
                conn.call(ServerSession::poll_write_all).await?;
            }
            conn.sender().finish(None)?;
            continue;
        } else {
            Bytes::from(path)
        };
        conn.sender().send_response(Response::new(body))?;
    }
    Ok(())
}

/// Wakes the task by setting its flag.
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A schedule, and how the runtime takes the driver's writes.
#[derive(Debug, Clone)]
struct Plan {
    schedule: Schedule,
    /// Each write takes at most the next of these, in turn.
    write_sizes: Vec<usize>,
    /// After each write, the next one blocks this long (ms), in turn.
    write_gaps: Vec<u64>,
}

fn plan() -> impl Strategy<Value = Plan> {
    (
        schedule(),
        proptest::collection::vec(1usize..300, 1..5),
        proptest::collection::vec(prop_oneof![3 => Just(0u64), 1 => 1u64..20], 1..5),
    )
        .prop_map(|(schedule, write_sizes, write_gaps)| Plan {
            schedule,
            write_sizes,
            write_gaps,
        })
}

/// Runs `plan`: what the driver wrote, whether the signal fired before
/// the connection ended, and whether the client's close ended the work.
fn run(plan: &Plan) -> (Vec<u8>, bool, bool) {
    let start = Instant::now();
    let input: Vec<u8> = plan.schedule.reqs.iter().flat_map(Req::bytes).collect();
    let mut arrivals = VecDeque::new();
    let (mut from, mut t) = (0, start);
    for (cut, gap) in pieces(input.len(), &plan.schedule.cuts) {
        t += Duration::from_millis(gap);
        if cut > from {
            arrivals.push_back((t, input[from..cut].to_vec()));
            from = cut;
        }
    }
    let world: Shared = Arc::new(Mutex::new(World {
        now: start,
        arrivals,
        input: VecDeque::new(),
        fin: plan.schedule.fin,
        sent: Vec::new(),
        write_sizes: plan.write_sizes.clone(),
        writes: 0,
        write_gaps: plan.write_gaps.clone(),
        write_ready_at: start,
        read_waker: None,
        write_waker: None,
        timers: Vec::new(),
        closed: false,
    }));
    let mut config = Config::default();
    // Long enough that no gap of a plan is a timeout; an idle connection
    // closes after its idle time, on the world's clock.
    config.timeouts.head = Some(Duration::from_secs(10));
    config.timeouts.body = Some(Duration::from_secs(10));
    let session = ServerSession::new(config, start);
    let mut conn = Conn::new(Io(world.clone()), session);
    conn.set_half_close(plan.schedule.half_close);
    let signalled = Arc::new(AtomicBool::new(false));
    if let Some(ms) = plan.schedule.shutdown {
        let (w, flag) = (world.clone(), signalled.clone());
        let at = start + Duration::from_millis(ms);
        conn.shutdown_on(async move {
            Sleep(w, at).await;
            flag.store(true, Ordering::SeqCst);
        });
    }
    let served = async {
        let result = serve(&mut conn, &world).await;
        let _ = conn.call(ServerSession::close).await;
        result
    };
    let mut served = pin!(served);
    let flag = Arc::new(Flag(AtomicBool::new(true)));
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut polls = 0;
    let result = loop {
        if flag.0.swap(false, Ordering::SeqCst) {
            polls += 1;
            assert!(polls < 10_000, "the driver goes round without end");
            if let Poll::Ready(result) = served.as_mut().poll(&mut cx) {
                break result;
            }
            continue;
        }
        // Nothing woke the task: the clock moves to the next event, and
        // the wakers waiting for it are woken.
        let mut w = lock(&world);
        let write_at = w.write_waker.as_ref().map(|_| w.write_ready_at);
        let next = [
            w.arrivals.front().map(|(t, _)| *t),
            write_at,
            w.timers.iter().map(|(t, _)| *t).min(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(next) = next else {
            panic!("the driver waits for nothing: it would never be woken");
        };
        assert!(
            next - start < Duration::from_secs(3600),
            "no end in an hour"
        );
        w.now = w.now.max(next);
        let now = w.now;
        while w.arrivals.front().is_some_and(|(t, _)| *t <= now) {
            let (_, piece) = w.arrivals.pop_front().unwrap();
            w.input.extend(piece);
            if let Some(waker) = w.read_waker.take() {
                waker.wake();
            }
        }
        if w.arrivals.is_empty() && w.fin {
            if let Some(waker) = w.read_waker.take() {
                waker.wake();
            }
        }
        if w.write_ready_at <= now {
            if let Some(waker) = w.write_waker.take() {
                waker.wake();
            }
        }
        let (due, later): (Vec<_>, Vec<_>) = w.timers.drain(..).partition(|(t, _)| *t <= now);
        w.timers = later;
        drop(w);
        due.into_iter().for_each(|(_, waker)| waker.wake());
    };
    // Only a close the work was given up for ends it early.
    let gone = match result {
        Ok(()) => false,
        Err(err) => {
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "{err}");
            assert!(plan.schedule.fin && !plan.schedule.half_close, "{err}");
            true
        }
    };
    let w = lock(&world);
    assert!(w.closed, "the connection was not closed");
    (w.sent.clone(), signalled.load(Ordering::SeqCst), gone)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_request_is_answered_and_the_connection_closes(plan in plan()) {
        let (sent, signalled, gone) = run(&plan);
        let got = answers(&sent, plan.schedule.reqs.len());
        let want: Vec<Vec<u8>> = plan.schedule.reqs.iter().map(Req::answer).collect();
        // Work that never ends was given up at the client's close, unless
        // a shutdown ended the connection before it began.
        prop_assert!(gone || !waits(&plan.schedule.reqs) || plan.schedule.shutdown.is_some());
        if signalled || gone {
            prop_assert!(got.len() <= want.len());
            prop_assert_eq!(&got[..], &want[..got.len()]);
        } else {
            prop_assert_eq!(got, want);
        }
    }
}
