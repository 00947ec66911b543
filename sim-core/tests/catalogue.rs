//! The parameter catalogue cannot drift from the scenario's serde shape:
//! every field has a catalogue line and every line a field, in every scope;
//! every path writes exactly its own key; every choice is spelled as serde
//! spells it; every line has a doc, and docs/params.md is generated from
//! them.

use serde::de::{self, DeserializeOwned, Visitor};
use sim_core::Scenario;
use sim_core::params::{self, Kind, PARAMS, Scope};
use sim_core::scenario::{
    Branch, Cache, Call, Client, ClosedLoop, CrashWindow, Dist, ErrorWindow, Gc, ProfilePoint,
    Queue, RecoveryRule, RequestClass, Service, Sinusoid, SlowWindow, Tier,
};
use std::collections::{BTreeMap, BTreeSet};
use toml::Value;

/// The field names serde knows for `T` (Option fields included, which a
/// serialized default would leave out): taken from the list its derived
/// `Deserialize` hands to `deserialize_struct`.
fn fields<T: DeserializeOwned>() -> BTreeSet<String> {
    struct Grab<'a>(&'a mut BTreeSet<String>);
    impl<'de> de::Deserializer<'de> for Grab<'_> {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.extend(fields.iter().map(|f| f.to_string()));
            Err(de::Error::custom("fields taken"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let mut out = BTreeSet::new();
    let _ = T::deserialize(Grab(&mut out));
    assert!(
        !out.is_empty(),
        "{} is a struct",
        std::any::type_name::<T>()
    );
    out
}

/// `fields` less the structural ones (each a scope of its own), with the
/// nested tables expanded as `<key>.<field>`.
fn keys(
    mut fields: BTreeSet<String>,
    structural: &[&str],
    nested: &[(&str, BTreeSet<String>)],
) -> BTreeSet<String> {
    for s in structural {
        assert!(fields.remove(*s), "structural key `{s}` is a field");
    }
    for (table, inner) in nested {
        assert!(fields.remove(*table), "nested table `{table}` is a field");
        fields.extend(inner.iter().map(|f| format!("{table}.{f}")));
    }
    fields
}

fn catalogued(scopes: &[Scope]) -> BTreeSet<String> {
    PARAMS
        .iter()
        .filter(|p| scopes.contains(&p.scope))
        .map(|p| p.key.to_string())
        .collect()
}

#[test]
fn every_field_has_a_catalogue_line_and_every_line_a_field() {
    let service = fields::<Service>();
    let cases = [
        (
            "Scenario",
            vec![Scope::Top],
            keys(
                fields::<Scenario>(),
                &["client", "clients", "tiers", "presets"],
                &[("recovery", fields::<RecoveryRule>())],
            ),
        ),
        (
            "Client",
            vec![Scope::Client, Scope::ClientFile],
            keys(
                fields::<Client>(),
                &["call", "classes", "spike", "profile"],
                &[
                    (
                        "closed",
                        keys(fields::<ClosedLoop>(), &[], &[("think", service.clone())]),
                    ),
                    ("sinusoid", fields::<Sinusoid>()),
                    ("queue", fields::<Queue>()),
                ],
            ),
        ),
        (
            "ProfilePoint",
            vec![Scope::Profile],
            keys(fields::<ProfilePoint>(), &[], &[]),
        ),
        ("Call", vec![Scope::Call], keys(fields::<Call>(), &[], &[])),
        (
            "Branch",
            vec![Scope::Branch],
            keys(fields::<Branch>(), &["to", "call"], &[]),
        ),
        (
            "RequestClass",
            vec![Scope::Class],
            keys(fields::<RequestClass>(), &["name"], &[]),
        ),
        (
            "Tier",
            vec![Scope::Tier, Scope::TierClass],
            keys(
                fields::<Tier>(),
                &["name", "call", "fanout", "slow", "errors", "crash"],
                &[
                    ("service", service.clone()),
                    ("latency", service),
                    ("gc", fields::<Gc>()),
                    ("cache", fields::<Cache>()),
                ],
            ),
        ),
        (
            "SlowWindow (slow)",
            vec![Scope::Slow],
            keys(fields::<SlowWindow>(), &[], &[]),
        ),
        (
            "ErrorWindow",
            vec![Scope::Errors],
            keys(fields::<ErrorWindow>(), &[], &[]),
        ),
        (
            "CrashWindow",
            vec![Scope::Crash],
            keys(fields::<CrashWindow>(), &[], &[]),
        ),
        (
            "SlowWindow (spike)",
            vec![Scope::Spike],
            // A spike has no replicas (validation refuses them there).
            keys(fields::<SlowWindow>(), &["replicas"], &[]),
        ),
    ];
    for (what, scopes, fields) in cases {
        let lines = catalogued(&scopes);
        let no_line: Vec<_> = fields.difference(&lines).collect();
        let no_field: Vec<_> = lines.difference(&fields).collect();
        assert!(
            no_line.is_empty() && no_field.is_empty(),
            "{what}: fields without a catalogue line in sim-core/src/params.rs: {no_line:?}; \
             catalogue lines ({scopes:?}) without a field: {no_field:?}"
        );
    }
}

#[test]
fn keys_that_share_a_prefix_are_distinct() {
    for scopes in [
        vec![Scope::Client, Scope::Call],
        vec![Scope::Tier, Scope::TierClass, Scope::Call],
        vec![Scope::Branch, Scope::Call],
    ] {
        let all: Vec<&str> = PARAMS
            .iter()
            .filter(|p| scopes.contains(&p.scope))
            .map(|p| p.key)
            .collect();
        let unique: BTreeSet<&str> = all.iter().copied().collect();
        assert_eq!(all.len(), unique.len(), "a key repeats in {scopes:?}");
    }
}

#[test]
fn every_line_has_a_doc_and_the_doc_file_is_current() {
    for p in PARAMS {
        assert!(
            p.doc.len() > 10 && p.doc.ends_with('.'),
            "`{}` needs a one-line doc ending with a full stop",
            p.key
        );
    }
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/params.md"))
        .unwrap_or_default();
    assert!(
        doc == params::markdown(),
        "docs/params.md is stale: regenerate it with `cargo run -p sweep -- params --markdown > docs/params.md`"
    );
}

/// Every leaf of a serialized scenario by its dotted place (elements of
/// arrays of tables by index): `tiers.1.call.max_retries`.
fn leaves(s: &Scenario) -> BTreeMap<String, Value> {
    fn walk(prefix: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
        let join = |k: &str| {
            if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            }
        };
        match v {
            Value::Table(t) => t.iter().for_each(|(k, v)| walk(&join(k), v, out)),
            // Lists of values (a window's replicas) are one leaf.
            Value::Array(a) if a.iter().any(Value::is_table) => a
                .iter()
                .enumerate()
                .for_each(|(i, v)| walk(&join(&i.to_string()), v, out)),
            leaf => {
                out.insert(prefix.to_string(), leaf.clone());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk("", &Value::try_from(s).unwrap(), &mut out);
    out
}

/// Where a path's value lives in the serialized scenario, worked out here
/// from the documented shape, independently of the setter.
fn place(s: &Scenario, path: &str) -> String {
    let param = params::param_of(path).unwrap_or_else(|| panic!("{path} is catalogued"));
    let segs: Vec<&str> = path.split('.').collect();
    let tier = |name: &str| s.tiers.iter().position(|t| t.name == name).unwrap();
    match (param.scope, &segs[..]) {
        (Scope::Top, _) => path.to_string(),
        (Scope::Client, _) => path.to_string(),
        (Scope::Class, [_, _, class, key]) => {
            let i = s.client.classes.iter().position(|c| c.name == *class);
            format!("client.classes.{}.{key}", i.unwrap())
        }
        (Scope::Spike, ["client", "spike", key]) => format!("client.spike.0.{key}"),
        (Scope::Profile, ["client", "profile", key]) => format!("client.profile.0.{key}"),
        (Scope::Slow, [t, "slow", key]) => format!("tiers.{}.slow.0.{key}", tier(t)),
        (Scope::Errors, [t, "errors", key]) => format!("tiers.{}.errors.0.{key}", tier(t)),
        (Scope::Crash, [t, "crash", key]) => format!("tiers.{}.crash.0.{key}", tier(t)),
        (Scope::Call, ["client", key]) => format!("client.call.{key}"),
        (Scope::Call | Scope::Branch, [t, "fanout", to, key]) => {
            let i = tier(t);
            let j = s.tiers[i].fanout.iter().position(|b| b.to == *to).unwrap();
            let call = if param.scope == Scope::Branch {
                ""
            } else {
                "call."
            };
            format!("tiers.{i}.fanout.{j}.{call}{key}")
        }
        (Scope::Call, [t, key]) => format!("tiers.{}.call.{key}", tier(t)),
        (Scope::Tier | Scope::TierClass, [t, rest @ ..]) => {
            format!("tiers.{}.{}", tier(t), rest.join("."))
        }
        other => panic!("no place for {other:?}"),
    }
}

/// A value of `kind` other than `now` (`None`: the key is absent).
fn another(kind: Kind, now: Option<&Value>) -> Value {
    match (kind, now) {
        (Kind::Float, Some(Value::Float(x))) => Value::Float(x + 0.25),
        (Kind::Float, _) => Value::Float(0.5),
        (Kind::Int | Kind::Cap, Some(Value::Integer(i))) => Value::Integer(i + 1),
        (Kind::Int | Kind::Cap, _) => Value::Integer(3),
        (Kind::Bool, Some(Value::Boolean(b))) => Value::Boolean(!b),
        (Kind::Bool, _) => Value::Boolean(true),
        (Kind::Choice(names), now) => {
            let name = names
                .iter()
                .find(|n| now.and_then(Value::as_str) != Some(**n));
            Value::String(name.unwrap().to_string())
        }
        (Kind::Text, _) => Value::String("renamed".to_string()),
        (Kind::Indexes, _) => Value::Array(vec![Value::Integer(1)]),
        (Kind::Floats, _) => Value::Array(vec![Value::Float(0.5)]),
        (Kind::Choices(names), _) => Value::Array(vec![Value::String(names[0].to_string())]),
    }
}

/// ch37 with every optional part present (classes, caps, a bulkhead, an
/// event budget), and the fan-out scenario; both with a load spike, a slow
/// window at every tier, a profile point, a sinusoid and closed-loop users,
/// so that no path creates a window or a table. (Not valid together: the
/// setter does not validate.)
fn scenarios() -> Vec<Scenario> {
    let mut ch37 = sim_core::ch37();
    for (path, value) in [
        ("svc_b.queue_cap", 8),
        ("svc_a.max_in_flight", 8),
        ("max_events", 1_000_000),
    ] {
        params::set(&mut ch37, path, &Value::Integer(value)).unwrap();
    }
    ch37.client.classes = [("online", 3.0), ("batch", 1.0)]
        .map(|(name, share)| RequestClass {
            name: name.into(),
            share,
        })
        .to_vec();
    ch37.tiers[1].class_slots.insert("batch".into(), 4);
    let fan = sim_core::load_base(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../grids/scenarios/fan-out.toml"
    ))
    .unwrap();
    let mut all = vec![ch37, fan];
    for s in &mut all {
        let windows: Vec<String> = (s.tiers.iter().filter(|t| t.slow.is_empty()))
            .map(|t| format!("{}.slow.start_s", t.name))
            .chain(s.tiers.iter().map(|t| format!("{}.errors.start_s", t.name)))
            .chain(s.tiers.iter().map(|t| format!("{}.crash.start_s", t.name)))
            .chain(
                s.client
                    .spike
                    .is_empty()
                    .then(|| "client.spike.start_s".into()),
            )
            .collect();
        for path in windows.into_iter().chain(["client.profile.at_s".into()]) {
            params::set(s, &path, &Value::Integer(5)).unwrap();
        }
        s.client.sinusoid = Sinusoid {
            period_s: 60.0,
            amplitude: 0.5,
        };
        s.client.queue = Queue {
            consumers: 2,
            ..Queue::default()
        };
        s.client.closed = ClosedLoop {
            users: 10,
            think: Service {
                dist: Dist::Exponential,
                mean_s: 1.0,
                ..Service::default()
            },
        };
    }
    all
}

#[test]
fn every_path_writes_exactly_its_own_key() {
    for s in scenarios() {
        let before = leaves(&s);
        for path in params::paths(&s).into_iter().filter(|p| p != "strategy") {
            let at = place(&s, &path);
            let kind = params::param_of(&path).unwrap().kind;
            let value = another(kind, before.get(&at));
            let mut changed = s.clone();
            params::set(&mut changed, &path, &value).unwrap_or_else(|e| panic!("{e}"));
            let after = leaves(&changed);
            let moved: Vec<&String> = before
                .keys()
                .chain(after.keys())
                .filter(|k| before.get(*k) != after.get(*k))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            assert_eq!(moved, [&at], "setting {path} = {value}");
            assert_eq!(after[&at], value, "{path}");
        }
    }
}

#[test]
fn unbounded_removes_a_cap_and_nothing_else() {
    let s = scenarios().remove(0);
    for (path, at) in [
        ("svc_b.queue_cap", "tiers.2.queue_cap"),
        ("svc_a.max_in_flight", "tiers.1.call.max_in_flight"),
        ("svc_a.class_slots.batch", "tiers.1.class_slots.batch"),
    ] {
        let mut changed = s.clone();
        params::set(&mut changed, path, &Value::String("unbounded".into())).unwrap();
        let (before, after) = (leaves(&s), leaves(&changed));
        assert!(before.contains_key(at) && !after.contains_key(at), "{path}");
        assert_eq!(before.len(), after.len() + 1, "{path}");
    }
}

#[test]
fn every_choice_is_spelled_as_serde_spells_it() {
    // With every optional table present: a table that is off (closed-loop
    // users) is not serialized.
    let s = scenarios().remove(0);
    for path in params::paths(&s) {
        let Kind::Choice(names) = params::param_of(&path).unwrap().kind else {
            continue;
        };
        for name in names {
            let mut changed = s.clone();
            params::set(&mut changed, &path, &Value::String(name.to_string()))
                .unwrap_or_else(|e| panic!("{path} = {name}: {e}"));
            assert_eq!(
                leaves(&changed)[&place(&s, &path)].as_str(),
                Some(*name),
                "{path}"
            );
        }
    }
}

#[test]
fn a_window_is_created_by_naming_the_next_index() {
    let mut s = sim_core::ch37();
    params::set(&mut s, "svc_b.slow.1.start_s", &Value::Integer(40)).unwrap();
    params::set(&mut s, "svc_b.slow.1.factor", &Value::Integer(3)).unwrap();
    assert_eq!(s.tiers[2].slow.len(), 2);
    assert_eq!(
        (s.tiers[2].slow[1].start_s, s.tiers[2].slow[1].duration_s),
        (40.0, 0.0)
    );
    assert_eq!(s.tiers[2].slow[1].factor, 3.0);
    let e = params::set(&mut s, "svc_b.slow.5.start_s", &Value::Integer(40)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "svc_b.slow.5.start_s: `svc_b` has 2 slow window(s); the next one is index 2"
    );
    // Several overrides at once see the windows the earlier ones created.
    let mut s = sim_core::ch37();
    let overrides: Vec<(String, Value)> = [
        ("client.spike.0.start_s", 5),
        ("client.spike.1.start_s", 20),
    ]
    .map(|(k, v)| (k.to_string(), Value::Integer(v)))
    .to_vec();
    sim_core::apply_all(&mut s, &overrides).unwrap();
    assert_eq!(s.client.spike.len(), 2);
}

#[test]
fn deadline_parameters_at_the_client_need_its_total_deadline() {
    let reason = |key: &str| {
        format!(
            "client.{key}: acts on a deadline, and the client's requests have none unless client.deadline_s (a user's total patience) is set; set client.deadline_s, or set `{key}` on a tier that receives a deadline (`<tier>.{key}`)"
        )
    };
    let mut s = sim_core::ch37();
    for (key, value) in [
        ("deadline_margin_s", Value::Float(0.05)),
        ("budget_admission", Value::Boolean(true)),
        ("budget_share", Value::Float(0.5)),
    ] {
        params::set(&mut s, &format!("client.{key}"), &value).unwrap();
    }
    // Without a total deadline every one is refused, all at once; the
    // defaults (as `sweep scenario show` writes them) pass.
    let problems: Vec<String> = sim_core::validate(&s)
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        problems,
        [
            reason("deadline_margin_s"),
            reason("budget_admission"),
            reason("budget_share")
        ]
    );
    params::set(&mut s, "client.deadline_s", &Value::Float(2.0)).unwrap();
    sim_core::validate(&s).unwrap();
    sim_core::validate(&sim_core::ch37()).unwrap();
    assert!(params::paths(&s).contains(&"client.budget_share".to_string()));
}

#[test]
fn a_part_set_before_the_switch_survives_the_next_override() {
    // Each `set` serializes the scenario and reads it back: a sinusoid's
    // period (or closed-loop think time) set while it is off must stay.
    let mut s = sim_core::ch37();
    params::set(&mut s, "client.sinusoid.period_s", &Value::Float(4.0)).unwrap();
    params::set(&mut s, "client.sinusoid.amplitude", &Value::Float(0.5)).unwrap();
    assert_eq!(
        (s.client.sinusoid.period_s, s.client.sinusoid.amplitude),
        (4.0, 0.5)
    );
    params::set(&mut s, "client.closed.think.mean_s", &Value::Float(0.2)).unwrap();
    params::set(&mut s, "client.closed.users", &Value::Integer(10)).unwrap();
    assert_eq!(s.client.closed.think.mean_s, 0.2);
}
