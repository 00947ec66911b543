//! A classification tree (CART, Breiman et al. 1984) for the same yes/no
//! outcome and parameters as [`crate::prim`]: the alternative view of
//! scenario discovery, as the EMA Workbench offers it (its `CART` wraps
//! scikit-learn's `DecisionTreeClassifier` with `min_samples_leaf` = 5% of
//! the runs and categorical columns as one-hot dummies).
//!
//! Each split is the one with the lowest weighted Gini impurity of the two
//! children among: per numeric column, `x <= t` with `t` the midpoint of two
//! adjacent values present in the node (scikit-learn's thresholds); per
//! categorical column, one category against the rest (a dummy). A node is
//! split while it is impure, a split leaves at least [`MIN_LEAF`] of all
//! runs on each side and lowers the impurity; the first best split is
//! taken. The leaves, each with its conditions, are the tree. On five
//! synthetic data sets (factorial and sampled, real, integer and
//! categorical columns) four give scikit-learn's leaves exactly (runs and
//! outcomes per leaf); the fifth differs where splits tie, which
//! scikit-learn breaks by a random order of the columns.

use crate::prim::{Param, PrimError, Values};

/// A leaf holds at least this share of all runs (the Workbench's
/// `mass_min`).
pub const MIN_LEAF: f64 = 0.05;

/// One condition on the path to a leaf.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    /// `param <= threshold` (`above` false) or `param > threshold`.
    Numeric {
        param: usize,
        threshold: f64,
        above: bool,
    },
    /// `param = category` (`is` true) or `param != category`.
    Category {
        param: usize,
        category: String,
        is: bool,
    },
}

/// A leaf of the tree: its conditions from the root, its runs and those
/// with the outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Leaf {
    pub conditions: Vec<Condition>,
    pub n: usize,
    pub k: usize,
    /// Per parameter, the categories its runs hold (none for a numeric
    /// one): the conditions leave those the splits excluded, and these
    /// are the ones of them the leaf has.
    pub present: Vec<Vec<String>>,
}

/// The leaves, depth first (the `<=` / `=` side first).
#[derive(Clone, Debug, PartialEq)]
pub struct Tree {
    /// Parameter names, as given.
    pub params: Vec<String>,
    /// Each parameter's categories, sorted (empty for a numeric one).
    pub categories: Vec<Vec<String>>,
    pub leaves: Vec<Leaf>,
}

/// A column as the tree reads it.
enum Column {
    Numeric(Vec<f64>),
    Categorical {
        codes: Vec<usize>,
        labels: Vec<String>,
    },
}

/// Grows the tree of `y` on `params`.
///
/// # Errors
///
/// As [`crate::prim::prim`]: no runs, a column of another length than `y`,
/// a number that is not finite.
pub fn cart(params: &[Param], y: &[bool]) -> Result<Tree, PrimError> {
    if y.is_empty() {
        return Err(PrimError::NoRuns);
    }
    let mut columns = Vec::new();
    for p in params {
        let len = match &p.values {
            Values::Numeric { values, .. } => values.len(),
            Values::Categorical(labels) => labels.len(),
        };
        if len != y.len() {
            return Err(PrimError::Length {
                column: p.name.clone(),
                values: len,
                runs: y.len(),
            });
        }
        columns.push(match &p.values {
            Values::Numeric { values, .. } => {
                if let Some((row, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite())
                {
                    return Err(PrimError::NotFinite {
                        column: p.name.clone(),
                        row,
                        value,
                    });
                }
                Column::Numeric(values.clone())
            }
            Values::Categorical(values) => {
                let mut labels = values.clone();
                labels.sort();
                labels.dedup();
                let codes = values
                    .iter()
                    .map(|v| labels.binary_search(v).expect("listed"))
                    .collect();
                Column::Categorical { codes, labels }
            }
        });
    }
    let min_leaf = (MIN_LEAF * y.len() as f64).ceil() as usize;
    let mut tree = Tree {
        params: params.iter().map(|p| p.name.clone()).collect(),
        categories: columns
            .iter()
            .map(|c| match c {
                Column::Categorical { labels, .. } => labels.clone(),
                Column::Numeric(_) => Vec::new(),
            })
            .collect(),
        leaves: Vec::new(),
    };
    grow(
        &columns,
        y,
        min_leaf,
        (0..y.len()).collect(),
        Vec::new(),
        &mut tree.leaves,
    );
    Ok(tree)
}

/// `n` times half the Gini impurity `2p(1 − p)` of `k` of `n`: the
/// children's weighted impurities then simply add.
fn impurity(n: usize, k: usize) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let p = k as f64 / n as f64;
    n as f64 * p * (1.0 - p)
}

fn grow(
    columns: &[Column],
    y: &[bool],
    min_leaf: usize,
    rows: Vec<usize>,
    conditions: Vec<Condition>,
    leaves: &mut Vec<Leaf>,
) {
    let n = rows.len();
    let k = rows.iter().filter(|r| y[**r]).count();
    let here = impurity(n, k);
    // The best split: (impurity of the children, condition of the left one).
    let mut best: Option<(f64, Condition)> = None;
    if k > 0 && k < n {
        for (j, c) in columns.iter().enumerate() {
            match c {
                Column::Numeric(values) => {
                    let mut sorted: Vec<(f64, bool)> =
                        rows.iter().map(|r| (values[*r], y[*r])).collect();
                    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
                    let (mut nl, mut kl) = (0, 0);
                    for i in 0..n - 1 {
                        nl += 1;
                        kl += usize::from(sorted[i].1);
                        if sorted[i].0 == sorted[i + 1].0 || nl < min_leaf || n - nl < min_leaf {
                            continue;
                        }
                        let split = impurity(nl, kl) + impurity(n - nl, k - kl);
                        if best.as_ref().is_none_or(|b| split < b.0) {
                            let threshold = (sorted[i].0 + sorted[i + 1].0) / 2.0;
                            best = Some((
                                split,
                                Condition::Numeric {
                                    param: j,
                                    threshold,
                                    above: false,
                                },
                            ));
                        }
                    }
                }
                Column::Categorical { codes, labels } => {
                    let mut counts = vec![(0usize, 0usize); labels.len()];
                    for r in &rows {
                        counts[codes[*r]].0 += 1;
                        counts[codes[*r]].1 += usize::from(y[*r]);
                    }
                    for (c, &(nl, kl)) in counts.iter().enumerate() {
                        if nl < min_leaf || n - nl < min_leaf {
                            continue;
                        }
                        let split = impurity(nl, kl) + impurity(n - nl, k - kl);
                        if best.as_ref().is_none_or(|b| split < b.0) {
                            best = Some((
                                split,
                                Condition::Category {
                                    param: j,
                                    category: labels[c].clone(),
                                    is: true,
                                },
                            ));
                        }
                    }
                }
            }
        }
    }
    let Some((split, left)) = best.filter(|(split, _)| *split < here) else {
        let present = (columns.iter())
            .map(|c| match c {
                Column::Numeric(_) => Vec::new(),
                Column::Categorical { codes, labels } => (labels.iter().enumerate())
                    .filter(|(code, _)| rows.iter().any(|r| codes[*r] == *code))
                    .map(|(_, label)| label.clone())
                    .collect(),
            })
            .collect();
        leaves.push(Leaf {
            conditions,
            n,
            k,
            present,
        });
        return;
    };
    debug_assert!(split < here);
    let goes_left = |r: usize| match &left {
        Condition::Numeric {
            param, threshold, ..
        } => match &columns[*param] {
            Column::Numeric(values) => values[r] <= *threshold,
            Column::Categorical { .. } => unreachable!("a numeric condition"),
        },
        Condition::Category {
            param, category, ..
        } => match &columns[*param] {
            Column::Categorical { codes, labels } => labels[codes[r]] == *category,
            Column::Numeric(_) => unreachable!("a categorical condition"),
        },
    };
    let (l, r): (Vec<usize>, Vec<usize>) = rows.into_iter().partition(|r| goes_left(*r));
    let right = match &left {
        Condition::Numeric {
            param, threshold, ..
        } => Condition::Numeric {
            param: *param,
            threshold: *threshold,
            above: true,
        },
        Condition::Category {
            param, category, ..
        } => Condition::Category {
            param: *param,
            category: category.clone(),
            is: false,
        },
    };
    let mut lc = conditions.clone();
    lc.push(left);
    grow(columns, y, min_leaf, l, lc, leaves);
    let mut rc = conditions;
    rc.push(right);
    grow(columns, y, min_leaf, r, rc, leaves);
}

impl Tree {
    /// A leaf's conditions in words, those on one parameter merged (a
    /// range, or the categories left): `` `x` > 4.5 and `s` in {a, b} ``.
    /// In Markdown: the categories, a user's text, escaped.
    pub fn describe(&self, leaf: &Leaf) -> String {
        let category = crate::tables::markdown_text;
        let mut parts: Vec<String> = Vec::new();
        let mut done = vec![false; leaf.conditions.len()];
        for (i, c) in leaf.conditions.iter().enumerate() {
            if done[i] {
                continue;
            }
            match c {
                Condition::Numeric { param, .. } => {
                    let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
                    for (j, d) in leaf.conditions.iter().enumerate() {
                        if let Condition::Numeric {
                            param: p,
                            threshold,
                            above,
                        } = d
                            && p == param
                        {
                            done[j] = true;
                            if *above {
                                lo = lo.max(*threshold);
                            } else {
                                hi = hi.min(*threshold);
                            }
                        }
                    }
                    let name = &self.params[*param];
                    let short = crate::prim::short;
                    parts.push(match (lo.is_finite(), hi.is_finite()) {
                        (true, true) => format!("{} < `{name}` <= {}", short(lo), short(hi)),
                        (true, false) => format!("`{name}` > {}", short(lo)),
                        _ => format!("`{name}` <= {}", short(hi)),
                    });
                }
                Condition::Category { param, .. } => {
                    // Every condition on the parameter: one category, or
                    // those left after the ones excluded that the leaf's
                    // runs hold (a zipped parameter may hold fewer).
                    let mut left = leaf.present[*param].clone();
                    for (j, d) in leaf.conditions.iter().enumerate() {
                        if let Condition::Category {
                            param: p,
                            category,
                            is,
                        } = d
                            && p == param
                        {
                            done[j] = true;
                            left.retain(|c| (c == category) == *is);
                        }
                    }
                    let name = &self.params[*param];
                    let left: Vec<String> = left.iter().map(|c| category(c)).collect();
                    parts.push(if left.len() == 1 {
                        format!("`{name}` = {}", left[0])
                    } else {
                        format!("`{name}` in {{{}}}", left.join(", "))
                    });
                }
            }
        }
        if parts.is_empty() {
            "every run".to_string()
        } else {
            parts.join(" and ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric(name: &str, values: Vec<f64>) -> Param {
        Param {
            name: name.to_string(),
            values: Values::Numeric {
                values,
                integer: false,
            },
        }
    }

    #[test]
    fn a_noiseless_rule_is_found_exactly() {
        // y exactly when x >= 5 and s != c, z does nothing: 10 x 10 x 3.
        let (mut x, mut z, mut s, mut y) = (vec![], vec![], vec![], vec![]);
        for xi in 0..10 {
            for zi in 0..10 {
                for si in ["a", "b", "c"] {
                    x.push(xi as f64);
                    z.push(zi as f64);
                    s.push(si.to_string());
                    y.push(xi >= 5 && si != "c");
                }
            }
        }
        let params = [
            numeric("x", x),
            numeric("z", z),
            Param {
                name: "s".to_string(),
                values: Values::Categorical(s),
            },
        ];
        let t = cart(&params, &y).unwrap();
        let leaves: Vec<(String, usize, usize)> =
            t.leaves.iter().map(|l| (t.describe(l), l.n, l.k)).collect();
        assert_eq!(
            leaves,
            [
                ("`x` <= 4.5".to_string(), 150, 0),
                ("`x` > 4.5 and `s` = c".to_string(), 50, 0),
                ("`x` > 4.5 and `s` in {a, b}".to_string(), 100, 100),
            ]
        );
    }

    /// A leaf names the categories it holds: a split that excludes one
    /// label of a zip leaves only those of its other side that the leaf's
    /// runs have.
    #[test]
    fn a_leaf_lists_only_the_categories_its_runs_hold() {
        let t = Tree {
            params: vec!["cap".into(), "name".into()],
            categories: vec![
                vec!["16".into(), "unbounded".into()],
                vec!["c".into(), "d".into(), "n".into(), "q".into(), "r".into()],
            ],
            leaves: Vec::new(),
        };
        let leaf = Leaf {
            conditions: vec![
                Condition::Category {
                    param: 1,
                    category: "d".into(),
                    is: false,
                },
                Condition::Category {
                    param: 0,
                    category: "unbounded".into(),
                    is: true,
                },
            ],
            n: 8,
            k: 8,
            present: vec![vec!["unbounded".into()], vec!["n".into(), "r".into()]],
        };
        assert_eq!(t.describe(&leaf), "`name` in {n, r} and `cap` = unbounded");
    }

    #[test]
    fn leaves_keep_the_minimum_share_of_runs_and_add_up() {
        // y at x > 0.97 only: a leaf of 3% would be pure, but leaves hold
        // at least 5% of the runs.
        let x: Vec<f64> = (0..100).map(|i| i as f64 / 100.0).collect();
        let y: Vec<bool> = x.iter().map(|v| *v > 0.97).collect();
        let t = cart(&[numeric("x", x)], &y).unwrap();
        assert!(t.leaves.iter().all(|l| l.n >= 5), "{t:?}");
        assert_eq!(t.leaves.iter().map(|l| l.n).sum::<usize>(), 100);
        assert_eq!(t.leaves.iter().map(|l| l.k).sum::<usize>(), 2);
        let t = cart(&[numeric("x", vec![1.0, 2.0])], &[true, true]).unwrap();
        assert_eq!(t.leaves.len(), 1);
        assert_eq!(t.describe(&t.leaves[0]), "every run");
    }
}
