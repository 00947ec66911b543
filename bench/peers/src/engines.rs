//! The same M/M/c station in each engine. `Station` holds the model and its
//! draws; each engine only schedules its events and calls it.

use sim_core::random::Stream;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// M/M/c: `c` slots, Poisson arrivals at `lambda` per second, exponential
/// service of mean `mean_s`, arrivals for `duration_s` (the horizon too).
pub struct Spec {
    pub c: u32,
    pub lambda: f64,
    pub mean_s: f64,
    pub duration_s: f64,
    pub seed: u64,
}

/// Events processed before the horizon, and services completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub events: u64,
    pub completed: u64,
}

/// The station's state and draws, with the project's streams and rounding:
/// the arrival gap is an exponential of mean 1 times the mean gap, the
/// service an exponential of the mean in nanoseconds, each rounded to the
/// nanosecond.
pub struct Station {
    c: u32,
    busy: u32,
    queued: u64,
    arrivals: Stream,
    service: Stream,
    mean_gap: f64,
    mean_service: f64,
    horizon: u64,
    outcome: Outcome,
}

impl Station {
    pub fn new(spec: &Spec) -> Station {
        Station {
            c: spec.c,
            busy: 0,
            queued: 0,
            arrivals: Stream::new(spec.seed, "arrivals"),
            service: Stream::new(spec.seed, "service.server"),
            mean_gap: 1e9 / spec.lambda,
            mean_service: spec.mean_s * 1e9,
            horizon: (spec.duration_s * 1e9) as u64,
            outcome: Outcome {
                events: 0,
                completed: 0,
            },
        }
    }

    /// Is an event at `at` past the end (not processed, not counted)?
    #[inline]
    pub fn past(&self, at: u64) -> bool {
        at >= self.horizon
    }

    /// The next arrival after one at `now`, unless arrivals have ended.
    #[inline]
    pub fn next_arrival(&mut self, now: u64) -> Option<u64> {
        let at = now + (self.arrivals.exponential(1.0) * self.mean_gap).round() as u64;
        (at < self.horizon).then_some(at)
    }

    #[inline]
    fn service_time(&mut self) -> u64 {
        self.service.exponential(self.mean_service).round() as u64
    }

    /// A customer arrives at `now`: the next arrival's time, and its own
    /// service time if it starts at once.
    #[inline]
    pub fn arrive(&mut self, now: u64) -> (Option<u64>, Option<u64>) {
        self.outcome.events += 1;
        let next = self.next_arrival(now);
        let service = if self.busy < self.c {
            self.busy += 1;
            Some(self.service_time())
        } else {
            self.queued += 1;
            None
        };
        (next, service)
    }

    /// A service ends: the service time of the queued customer that starts.
    #[inline]
    pub fn depart(&mut self) -> Option<u64> {
        self.outcome.events += 1;
        self.outcome.completed += 1;
        if self.queued > 0 {
            self.queued -= 1;
            Some(self.service_time())
        } else {
            self.busy -= 1;
            None
        }
    }
}

/// The project: a one-tier scenario with the queue unbounded, no timeout
/// within the run and no retries (the queueing tests' M/M/c).
pub fn project(spec: &Spec) -> Outcome {
    let text = format!(
        r#"
name = "mmc"
horizon_s = {d}
[client]
rate_per_s = {lambda}
duration_s = {d}
[client.call]
attempt_timeout_s = 1e6
max_retries = 0
backoff = "fixed"
backoff_base_s = 0.0
[[tiers]]
name = "server"
slots = {c}
service = {{ dist = "exponential", mean_s = {mean} }}
"#,
        d = spec.duration_s,
        lambda = spec.lambda,
        c = spec.c,
        mean = spec.mean_s,
    );
    let scenario = sim_core::Scenario::from_toml(&text, "mmc").expect("a valid scenario");
    let r = sim_core::run(&scenario, spec.seed).expect("the run");
    Outcome {
        events: r.events,
        completed: r.tiers[0].completed,
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Arrival,
    Departure,
}

/// A minimal event loop: one binary heap of `(time, insertion number)`.
pub fn heap(spec: &Spec) -> Outcome {
    let mut station = Station::new(spec);
    let mut events = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |events: &mut BinaryHeap<_>, at: u64, kind: Kind| {
        seq += 1;
        events.push(Reverse((at, seq, kind)));
    };
    if let Some(at) = station.next_arrival(0) {
        push(&mut events, at, Kind::Arrival);
    }
    while let Some(Reverse((now, _, kind))) = events.pop() {
        if station.past(now) {
            break;
        }
        match kind {
            Kind::Arrival => {
                let (next, service) = station.arrive(now);
                if let Some(at) = next {
                    push(&mut events, at, Kind::Arrival);
                }
                if let Some(s) = service {
                    push(&mut events, now + s, Kind::Departure);
                }
            }
            Kind::Departure => {
                if let Some(s) = station.depart() {
                    push(&mut events, now + s, Kind::Departure);
                }
            }
        }
    }
    station.outcome
}

mod des {
    use super::{Outcome, Spec, Station};
    use descartes_core::{Component, Execute, Executor, Key, Scheduler, SimTime, Simulation};

    #[derive(Debug)]
    pub enum Ev {
        Arrival,
        Departure,
    }

    pub struct Mmc(pub Station);

    impl Component for Mmc {
        type Event = Ev;

        fn process_event(&mut self, me: Key<Ev>, event: &Ev, scheduler: &mut Scheduler) {
            let now = scheduler.time().as_nanos();
            if self.0.past(now) {
                return;
            }
            match event {
                Ev::Arrival => {
                    let (next, service) = self.0.arrive(now);
                    if let Some(at) = next {
                        scheduler.schedule(SimTime::from_nanos(at - now), me, Ev::Arrival);
                    }
                    if let Some(s) = service {
                        scheduler.schedule(SimTime::from_nanos(s), me, Ev::Departure);
                    }
                }
                Ev::Departure => {
                    if let Some(s) = self.0.depart() {
                        scheduler.schedule(SimTime::from_nanos(s), me, Ev::Departure);
                    }
                }
            }
        }
    }

    pub fn run(spec: &Spec) -> Outcome {
        let mut sim = Simulation::default();
        let mut station = Station::new(spec);
        let first = station.next_arrival(0);
        let horizon = station.horizon;
        let key = sim.add_component(Mmc(station));
        if let Some(at) = first {
            sim.schedule(SimTime::from_nanos(at), key, Ev::Arrival);
        }
        Executor::timed(SimTime::from_nanos(horizon)).execute(&mut sim);
        let station: Mmc = sim.remove_component(key).expect("the station");
        station.0.outcome
    }
}

/// DesCartes: one component, its events scheduled through the scheduler.
pub fn descartes(spec: &Spec) -> Outcome {
    des::run(spec)
}

mod nexo {
    use super::{Outcome, Spec, Station};
    use nexosim::model::{BuildContext, Context, Model, ProtoModel, schedulable};
    use nexosim::ports::EventSource;
    use nexosim::simulation::{Mailbox, SimInit};
    use nexosim::time::MonotonicTime;
    use serde::{Deserialize, Serialize};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    /// The station lives in the model's environment (its state is not
    /// serialisable); the model itself is empty.
    #[derive(Default, Serialize, Deserialize)]
    pub struct Mmc;

    pub struct Env {
        station: Station,
        first: Option<u64>,
        out: Arc<Mutex<Option<Outcome>>>,
    }

    fn nanos(cx: &Context<Mmc>) -> u64 {
        let t = cx.time();
        t.as_secs() as u64 * 1_000_000_000 + t.subsec_nanos() as u64
    }

    #[Model(type Env = Env)]
    impl Mmc {
        #[nexosim(init)]
        async fn init(&mut self, cx: &Context<Self>, env: &mut Env) {
            if let Some(at) = env.first {
                cx.schedule_event(Duration::from_nanos(at), schedulable!(Self::arrival), ())
                    .expect("in the future");
            }
        }

        #[nexosim(schedulable)]
        fn arrival(&mut self, _: (), cx: &Context<Self>, env: &mut Env) {
            let now = nanos(cx);
            if env.station.past(now) {
                return;
            }
            let (next, service) = env.station.arrive(now);
            if let Some(at) = next {
                if at == now {
                    self.arrival((), cx, env);
                } else {
                    cx.schedule_event(
                        Duration::from_nanos(at - now),
                        schedulable!(Self::arrival),
                        (),
                    )
                    .expect("in the future");
                }
            }
            if let Some(s) = service {
                self.start(s, cx, env);
            }
        }

        #[nexosim(schedulable)]
        fn departure(&mut self, _: (), cx: &Context<Self>, env: &mut Env) {
            if env.station.past(nanos(cx)) {
                return;
            }
            if let Some(s) = env.station.depart() {
                self.start(s, cx, env);
            }
        }

        /// A service of `s` ns starts now (NeXosim refuses an event that
        /// is not in the future: a zero service ends at once).
        fn start(&mut self, s: u64, cx: &Context<Self>, env: &mut Env) {
            if s == 0 {
                self.departure((), cx, env);
            } else {
                cx.schedule_event(Duration::from_nanos(s), schedulable!(Self::departure), ())
                    .expect("in the future");
            }
        }

        /// After the run: hands the counts out.
        pub fn report(&mut self, _: (), _: &Context<Self>, env: &mut Env) {
            *env.out.lock().expect("not poisoned") = Some(env.station.outcome);
        }
    }

    pub struct Proto {
        station: Station,
        out: Arc<Mutex<Option<Outcome>>>,
    }

    impl ProtoModel for Proto {
        type Model = Mmc;

        fn build(mut self, _: &mut BuildContext<Self>) -> (Mmc, Env) {
            let first = self.station.next_arrival(0);
            let env = Env {
                station: self.station,
                first,
                out: self.out,
            };
            (Mmc, env)
        }
    }

    pub fn run(spec: &Spec) -> Outcome {
        let out = Arc::new(Mutex::new(None));
        let station = Station::new(spec);
        let horizon = station.horizon;
        let mbox = Mailbox::new();
        let mut bench = SimInit::with_num_threads(1);
        let report = EventSource::new()
            .connect(Mmc::report, &mbox)
            .register(&mut bench);
        let proto = Proto {
            station,
            out: out.clone(),
        };
        let mut simu = bench
            .add_model(proto, mbox, "mmc")
            .init(MonotonicTime::EPOCH)
            .expect("init");
        simu.step_until(Duration::from_nanos(horizon))
            .expect("the run");
        simu.process_event(&report, ()).expect("the report");
        out.lock().expect("not poisoned").expect("reported")
    }
}

/// NeXosim on one thread: one model scheduling its own events.
pub fn nexosim(spec: &Spec) -> Outcome {
    nexo::run(spec)
}
