//! The yes/no outcome scenario discovery looks for (`[report] prim`): a
//! boolean expression over the `runs` metrics, e.g.
//! `success_rate_after < 0.9 and recovery_censored_s > 5`.
//!
//! Grammar (`or` binds loosest, then `and`, then `not`):
//!
//! ```text
//! expr  := and ("or" and)*
//! and   := not ("and" not)*
//! not   := "not" not | "(" expr ")" | metric [op number]
//! op    := < | <= | > | >= | == | !=
//! ```
//!
//! A bare metric is true when it is non-zero (`recovered`, `not recovered`).
//! A metric that is null in a run (a failed run; `recovery_s` of a run
//! that did not recover) makes its comparison unknown, and unknowns follow
//! SQL's three-valued logic: `true or unknown` is true, `false and unknown`
//! is false, anything else with an unknown is unknown, and a run whose
//! outcome is unknown has no verdict (left out, and counted, like a failed
//! run).

/// A parsed outcome expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Or(Box<Outcome>, Box<Outcome>),
    And(Box<Outcome>, Box<Outcome>),
    Not(Box<Outcome>),
    /// `metric op number`; a bare metric is `metric != 0`.
    Compare {
        metric: String,
        op: Op,
        value: f64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// Why an expression was refused, naming the token a user would fix.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum OutcomeError {
    #[error("unexpected `{token}` at character {at}: {expected}")]
    Unexpected {
        token: String,
        at: usize,
        expected: &'static str,
    },
    #[error("the expression ends early: {expected}")]
    End { expected: &'static str },
    /// Every name that is no metric, in order of first use.
    #[error("{} not {} of this scenario", quoted(.0), if .0.len() == 1 { "a metric" } else { "metrics" })]
    UnknownMetrics(Vec<String>),
    #[error("{0} tokens, more than the {MAX_TOKENS} an outcome may have")]
    TooLong(usize),
}

/// The most tokens an expression may have: far more than any outcome a
/// person writes, few enough that its nesting cannot exhaust the stack.
pub const MAX_TOKENS: usize = 1000;

fn quoted(names: &[String]) -> String {
    let all: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match all.as_slice() {
        [one] => format!("{one} is"),
        [first @ .., last] => format!("{} and {last} are", first.join(", ")),
        [] => unreachable!("an error names at least one metric"),
    }
}

/// The default outcome: the run did not recover.
pub const NOT_RECOVERED: &str = "not recovered";

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Word(String),
    Number(f64),
    Op(Op),
    Open,
    Close,
}

impl Outcome {
    /// Parses `text`; `metrics` are the names it may read (every unknown
    /// name is refused with the closest known one).
    pub fn parse(text: &str, metrics: &[&str]) -> Result<Outcome, OutcomeError> {
        let tokens = tokenize(text)?;
        if tokens.len() > MAX_TOKENS {
            return Err(OutcomeError::TooLong(tokens.len()));
        }
        let mut p = Parser {
            tokens: &tokens,
            next: 0,
            metrics,
            unknown: Vec::new(),
        };
        let e = p.or()?;
        if let Some((t, at)) = tokens.get(p.next) {
            return Err(OutcomeError::Unexpected {
                token: show(t),
                at: *at,
                expected: "expected `and`, `or` or the end",
            });
        }
        if !p.unknown.is_empty() {
            return Err(OutcomeError::UnknownMetrics(p.unknown));
        }
        Ok(e)
    }

    /// The metrics the expression reads, in order of first use.
    pub fn metrics(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Outcome::Or(a, b) | Outcome::And(a, b) => {
                a.collect(out);
                b.collect(out);
            }
            Outcome::Not(a) => a.collect(out),
            Outcome::Compare { metric, .. } => {
                if !out.contains(&metric.as_str()) {
                    out.push(metric);
                }
            }
        }
    }

    /// The outcome of one run; `value(metric)` is None where the metric is
    /// null. None: unknown (no verdict).
    pub fn eval(&self, value: &impl Fn(&str) -> Option<f64>) -> Option<bool> {
        match self {
            Outcome::Or(a, b) => match (a.eval(value), b.eval(value)) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            Outcome::And(a, b) => match (a.eval(value), b.eval(value)) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            Outcome::Not(a) => a.eval(value).map(|v| !v),
            Outcome::Compare {
                metric,
                op,
                value: x,
            } => {
                let v = value(metric)?;
                Some(match op {
                    Op::Lt => v < *x,
                    Op::Le => v <= *x,
                    Op::Gt => v > *x,
                    Op::Ge => v >= *x,
                    Op::Eq => v == *x,
                    Op::Ne => v != *x,
                })
            }
        }
    }
}

fn show(t: &Token) -> String {
    match t {
        Token::Word(w) => w.clone(),
        Token::Number(x) => x.to_string(),
        Token::Op(op) => match op {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Eq => "==",
            Op::Ne => "!=",
        }
        .to_string(),
        Token::Open => "(".to_string(),
        Token::Close => ")".to_string(),
    }
}

/// Tokens with the (1-based) character each starts at.
fn tokenize(text: &str) -> Result<Vec<(Token, usize)>, OutcomeError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let at = i + 1;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let word = |i: &mut usize, ok: &dyn Fn(char) -> bool| {
            let start = *i;
            while *i < chars.len() && ok(chars[*i]) {
                *i += 1;
            }
            chars[start..*i].iter().collect::<String>()
        };
        let token = match c {
            '(' => {
                i += 1;
                Token::Open
            }
            ')' => {
                i += 1;
                Token::Close
            }
            '<' | '>' | '=' | '!' => {
                let two = chars.get(i + 1) == Some(&'=');
                let op = match (c, two) {
                    ('<', false) => Op::Lt,
                    ('<', true) => Op::Le,
                    ('>', false) => Op::Gt,
                    ('>', true) => Op::Ge,
                    ('=', true) => Op::Eq,
                    ('!', true) => Op::Ne,
                    _ => {
                        return Err(OutcomeError::Unexpected {
                            token: c.to_string(),
                            at,
                            expected: "comparisons are <, <=, >, >=, == and !=",
                        });
                    }
                };
                i += 1 + usize::from(two);
                Token::Op(op)
            }
            c if c.is_ascii_digit() || c == '-' || c == '.' => {
                let w = word(&mut i, &|c| {
                    c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '+'
                });
                match w.parse::<f64>() {
                    Ok(x) if x.is_finite() => Token::Number(x),
                    _ => {
                        return Err(OutcomeError::Unexpected {
                            token: w,
                            at,
                            expected: "not a number",
                        });
                    }
                }
            }
            c if c.is_ascii_alphabetic() || c == '_' => Token::Word(word(&mut i, &|c| {
                c.is_ascii_alphanumeric() || c == '_' || c == '.'
            })),
            other => {
                return Err(OutcomeError::Unexpected {
                    token: other.to_string(),
                    at,
                    expected: "expected a metric, a number, a comparison, `and`, `or`, `not` or parentheses",
                });
            }
        };
        out.push((token, at));
    }
    Ok(out)
}

struct Parser<'a> {
    tokens: &'a [(Token, usize)],
    next: usize,
    metrics: &'a [&'a str],
    /// Names that are no metric, said together once the whole expression
    /// is read.
    unknown: Vec<String>,
}

impl Parser<'_> {
    fn peek_word(&self, w: &str) -> bool {
        matches!(self.tokens.get(self.next), Some((Token::Word(x), _)) if x == w)
    }

    fn or(&mut self) -> Result<Outcome, OutcomeError> {
        let mut e = self.and()?;
        while self.peek_word("or") {
            self.next += 1;
            e = Outcome::Or(Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }

    fn and(&mut self) -> Result<Outcome, OutcomeError> {
        let mut e = self.not()?;
        while self.peek_word("and") {
            self.next += 1;
            e = Outcome::And(Box::new(e), Box::new(self.not()?));
        }
        Ok(e)
    }

    fn not(&mut self) -> Result<Outcome, OutcomeError> {
        const EXPECTED: &str = "expected a metric, `not` or `(`";
        let Some((t, at)) = self.tokens.get(self.next) else {
            return Err(OutcomeError::End { expected: EXPECTED });
        };
        self.next += 1;
        match t {
            Token::Word(w) if w == "not" => Ok(Outcome::Not(Box::new(self.not()?))),
            Token::Open => {
                let e = self.or()?;
                match self.tokens.get(self.next) {
                    Some((Token::Close, _)) => {
                        self.next += 1;
                        Ok(e)
                    }
                    Some((t, at)) => Err(OutcomeError::Unexpected {
                        token: show(t),
                        at: *at,
                        expected: "expected `)`",
                    }),
                    None => Err(OutcomeError::End {
                        expected: "expected `)`",
                    }),
                }
            }
            Token::Word(w) if w != "and" && w != "or" => {
                if !self.metrics.contains(&w.as_str()) && !self.unknown.contains(w) {
                    self.unknown.push(w.clone());
                }
                let Some((Token::Op(op), _)) = self.tokens.get(self.next) else {
                    return Ok(Outcome::Compare {
                        metric: w.clone(),
                        op: Op::Ne,
                        value: 0.0,
                    });
                };
                self.next += 1;
                match self.tokens.get(self.next) {
                    Some((Token::Number(x), _)) => {
                        self.next += 1;
                        Ok(Outcome::Compare {
                            metric: w.clone(),
                            op: *op,
                            value: *x,
                        })
                    }
                    Some((t, at)) => Err(OutcomeError::Unexpected {
                        token: show(t),
                        at: *at,
                        expected: "a metric is compared with a number",
                    }),
                    None => Err(OutcomeError::End {
                        expected: "a metric is compared with a number",
                    }),
                }
            }
            t => Err(OutcomeError::Unexpected {
                token: show(t),
                at: *at,
                expected: EXPECTED,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const METRICS: &[&str] = &["recovered", "recovery_s", "success_rate_after", "goodput"];

    fn parse(text: &str) -> Result<Outcome, OutcomeError> {
        Outcome::parse(text, METRICS)
    }

    fn eval(text: &str, run: &[(&str, Option<f64>)]) -> Option<bool> {
        let get = |m: &str| run.iter().find(|(k, _)| *k == m).and_then(|(_, v)| *v);
        parse(text).unwrap().eval(&get)
    }

    /// `and` binds tighter than `or`, `not` tighter than both, parentheses
    /// override; each operator compares as written.
    #[test]
    fn precedence_and_comparisons() {
        let run = [
            ("recovered", Some(0.0)),
            ("goodput", Some(0.5)),
            ("success_rate_after", Some(0.95)),
        ];
        // false or (true and true): true; (false or true) and false: false.
        assert_eq!(
            eval(
                "recovered or goodput < 0.6 and success_rate_after > 0.9",
                &run
            ),
            Some(true)
        );
        assert_eq!(
            eval(
                "(recovered or goodput < 0.6) and success_rate_after > 0.96",
                &run
            ),
            Some(false)
        );
        assert_eq!(eval("not recovered", &run), Some(true));
        assert_eq!(eval("not not recovered", &run), Some(false));
        for (op, want) in [
            ("<", false),
            ("<=", true),
            (">", false),
            (">=", true),
            ("==", true),
            ("!=", false),
        ] {
            assert_eq!(eval(&format!("goodput {op} 0.5"), &run), Some(want), "{op}");
        }
        assert_eq!(eval("goodput > -1e3", &run), Some(true));
    }

    /// SQL's three-valued logic for a null metric.
    #[test]
    fn a_null_metric_is_unknown_unless_the_other_side_decides() {
        let run = [("recovered", Some(0.0)), ("recovery_s", None)];
        assert_eq!(eval("recovery_s > 5", &run), None);
        assert_eq!(eval("not recovery_s > 5", &run), None);
        assert_eq!(eval("not recovered or recovery_s > 5", &run), Some(true));
        assert_eq!(eval("recovered and recovery_s > 5", &run), Some(false));
        assert_eq!(eval("not recovered and recovery_s > 5", &run), None);
        assert_eq!(eval("recovered or recovery_s > 5", &run), None);
    }

    #[test]
    fn the_metrics_read_are_listed_once_in_order() {
        let e = parse("goodput < 1 or (recovered and goodput > 0)").unwrap();
        assert_eq!(e.metrics(), ["goodput", "recovered"]);
        assert_eq!(parse(NOT_RECOVERED).unwrap().metrics(), ["recovered"]);
    }

    /// The exact messages a user sees, each naming the token to fix.
    #[test]
    fn bad_expressions_name_the_token() {
        let msg = |t: &str| parse(t).unwrap_err().to_string();
        assert_eq!(
            msg("goodputt < 0.9"),
            "`goodputt` is not a metric of this scenario"
        );
        assert_eq!(
            msg("goodputt < 0.9 or recoverd or goodputt > 2"),
            "`goodputt` and `recoverd` are not metrics of this scenario"
        );
        assert_eq!(
            msg(&format!("{}recovered", "not ".repeat(1000))),
            "1001 tokens, more than the 1000 an outcome may have"
        );
        assert_eq!(
            msg("goodput < 0.9 and"),
            "the expression ends early: expected a metric, `not` or `(`"
        );
        assert_eq!(
            msg("goodput = 0.9"),
            "unexpected `=` at character 9: comparisons are <, <=, >, >=, == and !="
        );
        assert_eq!(
            msg("goodput < recovered"),
            "unexpected `recovered` at character 11: a metric is compared with a number"
        );
        assert_eq!(
            msg("(goodput < 1"),
            "the expression ends early: expected `)`"
        );
        assert_eq!(
            msg("goodput < 1 goodput"),
            "unexpected `goodput` at character 13: expected `and`, `or` or the end"
        );
        assert_eq!(
            msg("goodput < 1x"),
            "unexpected `1x` at character 11: not a number"
        );
        assert_eq!(
            msg("goodput < 1 & recovered"),
            "unexpected `&` at character 13: expected a metric, a number, a comparison, `and`, `or`, `not` or parentheses"
        );
        assert_eq!(
            msg("or recovered"),
            "unexpected `or` at character 1: expected a metric, `not` or `(`"
        );
    }
}
