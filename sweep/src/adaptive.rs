//! The adaptive boundary design (`[sample] method = "boundary"`, run by
//! `sweep refine GRID`): where, over 2 to 4 continuous axes, does
//! P(not recovered) cross a threshold? Instead of a full grid, rounds of
//! points are picked where the boundary is least certain.
//!
//! Per combination of the grid's categories, one search over the
//! design's candidates (the first points of a scrambled Sobol' sequence,
//! the grid's last dimension, so every run is an ordinary run of the grid
//! with its `sample_index`):
//! 1. the first round runs the first `initial` candidates (space-filling);
//! 2. after each round, P(not recovered) at every candidate is estimated
//!    from the points run so far (nearest neighbours,
//!    [`analysis::contour::estimate`]);
//! 3. the next round takes up to `batch` candidates not yet run whose
//!    estimate is closest to the threshold, most uncertain first (ties by
//!    candidate order), skipping any within `spacing` of one already taken
//!    in the round, so that a round spreads along the boundary;
//! 4. it stops when `n` points have run (the budget), when two rounds in a
//!    row moved the boundary by less than `tolerance` (the share of
//!    candidates whose predicted side of the threshold changed: one quiet
//!    round can be luck), or when no candidate is left.
//!
//! Each pick depends only on the outcomes of the runs before it, which are
//! pure functions of their point and seed: the same points whatever
//! `--jobs`, and a second invocation after an interruption replays the
//! same rounds from the runs already written and runs only the rest.

use crate::error::RefineError;
use crate::grid::Grid;
use crate::records::{Layout, Outcome};
use crate::refine::{RefineArgs, Verdict, known_results, reused_versions, write_outcomes};
use crate::runner::{execute_point, finish_manifest, new_manifest, silence_panics, worker_pool};
use crate::store::{Shard, Store};
use analysis::IoError;
use analysis::contour::{Observed, estimate, unit};
use analysis::manifest::BoundarySearch;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

/// Why a search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// `n` points have run.
    Budget,
    /// The last two rounds moved the boundary by less than `tolerance`.
    Converged,
    /// Every candidate has run.
    Exhausted,
    /// No run of any point has given a verdict (failed, or cannot show
    /// recovery): the estimate has nothing to steer by.
    NoVerdict,
}

impl Stop {
    fn words(self) -> &'static str {
        match self {
            Stop::Budget => "the budget of points is spent",
            Stop::Converged => "two rounds in a row moved the boundary less than the tolerance",
            Stop::Exhausted => "every candidate has run",
            Stop::NoVerdict => {
                "no run gave a verdict (failed, or cannot show recovery): nothing to steer by"
            }
        }
    }
}

/// One round of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct Round {
    /// The candidates run, in the order picked.
    pub points: Vec<usize>,
    /// The share of candidates whose predicted side of the threshold this
    /// round changed (None after the first).
    pub moved: Option<f64>,
}

/// The search on one combination of categories.
pub struct Search {
    /// Each candidate's unit coordinates.
    pool: Vec<Vec<f64>>,
    /// Each candidate's first equal in the pool (itself if none is before
    /// it): integer axes round distinct draws to one point, which runs once.
    first_equal: Vec<usize>,
    rules: BoundarySearch,
    budget: usize,
    taken: Vec<bool>,
    /// The points run, with their counts, in the order picked.
    observed: Vec<Observed>,
    /// Every candidate's predicted side (>= threshold) after the last round.
    side: Option<Vec<bool>>,
    pub rounds: Vec<Round>,
    pub stop: Option<Stop>,
}

impl Search {
    pub fn new(pool: Vec<Vec<f64>>, rules: &BoundarySearch, budget: u64) -> Search {
        let mut seen: HashMap<Vec<u64>, usize> = HashMap::new();
        let first_equal = (pool.iter().enumerate())
            .map(|(i, x)| {
                *seen
                    .entry(x.iter().map(|v| v.to_bits()).collect())
                    .or_insert(i)
            })
            .collect();
        Search {
            taken: vec![false; pool.len()],
            first_equal,
            pool,
            rules: rules.clone(),
            budget: budget as usize,
            observed: Vec::new(),
            side: None,
            rounds: Vec::new(),
            stop: None,
        }
    }

    /// The points run so far (those without a verdict too, with 0 runs).
    pub fn observed(&self) -> &[Observed] {
        &self.observed
    }

    /// The candidates of the next round; empty once the search has stopped.
    pub fn next(&self) -> Vec<usize> {
        if self.stop.is_some() {
            return Vec::new();
        }
        let distinct = (0..self.pool.len()).filter(|i| self.first_equal[*i] == *i);
        if self.rounds.is_empty() {
            return distinct.take(self.rules.initial as usize).collect();
        }
        let want = (self.rules.batch as usize).min(self.budget - self.observed.len());
        let mut scored: Vec<(f64, usize)> = distinct
            .filter(|i| !self.taken[*i])
            .map(|i| {
                let p = estimate(&self.observed, &self.pool[i]).unwrap_or(self.rules.threshold);
                ((p - self.rules.threshold).abs(), i)
            })
            .collect();
        scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut picked: Vec<usize> = Vec::new();
        for (_, i) in scored {
            if picked.len() == want {
                break;
            }
            let far = picked.iter().all(|j| {
                analysis::contour::distance(&self.pool[*j], &self.pool[i]) >= self.rules.spacing
            });
            if far {
                picked.push(i);
            }
        }
        picked
    }

    /// Records a round: `counts[i]` is (runs with a verdict, runs that did
    /// not recover) at `points[i]`; then decides whether to stop.
    pub fn record(&mut self, points: &[usize], counts: &[(u64, u64)]) {
        for (&i, &(runs, not_recovered)) in points.iter().zip(counts) {
            self.taken[i] = true;
            self.observed.push(Observed {
                x: self.pool[i].clone(),
                runs,
                not_recovered,
            });
        }
        let side: Vec<bool> = (self.pool.iter())
            .map(|x| estimate(&self.observed, x).is_some_and(|p| p >= self.rules.threshold))
            .collect();
        let moved = self.side.as_ref().map(|old| {
            let changed = old.iter().zip(&side).filter(|(a, b)| a != b).count();
            changed as f64 / side.len() as f64
        });
        self.side = Some(side);
        self.rounds.push(Round {
            points: points.to_vec(),
            moved,
        });
        self.stop = if self.observed.len() >= self.budget {
            Some(Stop::Budget)
        } else if self.observed.iter().all(|o| o.runs == 0) {
            Some(Stop::NoVerdict)
        } else if self.rounds.len() >= 3
            && (self.rounds.iter().rev().take(2))
                .all(|r| r.moved.is_some_and(|m| m < self.rules.tolerance))
        {
            Some(Stop::Converged)
        } else if (0..self.pool.len()).all(|i| self.taken[i] || self.first_equal[i] != i)
            || points.is_empty()
        {
            Some(Stop::Exhausted)
        } else {
            None
        };
    }
}

/// Runs every search to its end, round by round (all searches' points of
/// a round at once); `evaluate` gives each (search, candidate)'s counts.
pub fn drive<E>(
    searches: &mut [Search],
    mut evaluate: impl FnMut(&[(usize, usize)]) -> Result<Vec<(u64, u64)>, E>,
) -> Result<(), E> {
    loop {
        let wanted: Vec<(usize, usize)> = (searches.iter().enumerate())
            .flat_map(|(s, search)| search.next().into_iter().map(move |c| (s, c)))
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let counts = evaluate(&wanted)?;
        for (s, search) in searches.iter_mut().enumerate() {
            let (points, counts): (Vec<usize>, Vec<(u64, u64)>) = (wanted.iter().zip(&counts))
                .filter(|((w, _), _)| *w == s)
                .map(|((_, c), n)| (*c, *n))
                .unzip();
            if search.stop.is_none() {
                search.record(&points, &counts);
            }
        }
    }
}

/// `sweep refine GRID` on a grid whose `[sample]` is a boundary search.
pub fn run(args: &RefineArgs, grid: &mut Grid) -> Result<ExitCode, RefineError> {
    let spec = grid.design.as_ref().expect("a boundary design");
    let rules = spec.boundary.clone().expect("a boundary design");
    let design = grid.dimensions.last().expect("the design's dimension");
    let pool: Vec<Vec<f64>> = (design.levels.iter())
        .map(|row| {
            (spec.axes.iter().zip(row))
                .map(|(a, v)| {
                    unit(
                        a,
                        v.as_float()
                            .or(v.as_integer().map(|i| i as f64))
                            .unwrap_or(0.0),
                    )
                })
                .collect()
        })
        .collect();
    let others: Vec<usize> = (0..grid.dimensions.len() - 1).collect();
    let categories = grid.points_of(&others) as usize;
    let mut searches: Vec<Search> = (0..categories)
        .map(|_| Search::new(pool.clone(), &rules, spec.n))
        .collect();

    let out = args
        .out
        .clone()
        .unwrap_or_else(|| crate::runner::default_out(grid));
    let store = Store::new(&out);
    store.refuse_not_ours()?;
    let _lock = crate::lock::Lock::writer(&out, Shard::WHOLE, true)
        .map_err(crate::error::DirError::from)?;
    grid.keep_layout_of(&store.manifests()?);
    let fingerprint = grid.fingerprint();
    let resume = crate::refine::refine_command(args, "");
    store.refuse_foreign(&fingerprint, "sweep or refinement", "", &|m| {
        crate::refine::differences(grid, &resume, m)
    })?;
    store.create_dirs()?;
    store.clean_incomplete(Shard::WHOLE)?;
    store.drop_uncommitted(Shard::WHOLE)?;
    let group = grid.report.group.as_deref();
    let mut known = known_results(&store, &grid.report)?;
    let (pool_threads, jobs) = worker_pool(args.jobs)?;
    let layout = Layout::new(
        grid.point_columns(),
        &*grid
            .scenario(&grid.point(0))
            .map_err(RefineError::InvalidPoint)?,
        grid.metrics.clone(),
    );
    let mut manifest = new_manifest(grid, Shard::WHOLE, jobs, 0);
    manifest.resume = Some(resume);
    manifest.earlier_versions = reused_versions(&store, args)?;
    manifest.status = "running".to_string();
    store.write_manifest(&manifest)?;
    let mut metadata = crate::runner::part_metadata(grid, &manifest, Shard::WHOLE);
    metadata.push((
        "sweep.refine".to_string(),
        format!("boundary search, threshold {}", rules.threshold),
    ));
    let metadata = layout.metadata(&metadata);
    silence_panics();
    crate::signals::install(crate::runner::resume_command(&manifest, &store.root));

    let seeds = grid.seeds.len() as u64;
    let candidates = pool.len() as u64;
    let mut round = 0;
    let searched = drive(&mut searches, |wanted| -> Result<_, RefineError> {
        round += 1;
        // Run indexes of the grid's own enumeration: point (category,
        // candidate), then its seeds.
        let run_indexes = |(s, c): (usize, usize)| {
            let point = s as u64 * candidates + c as u64;
            (0..seeds).map(move |k| point * seeds + k)
        };
        let todo: Vec<u64> = (wanted.iter())
            .flat_map(|w| run_indexes(*w))
            .filter(|i| {
                let (_, p, seed) = grid.run(*i);
                !known.contains_key(&Grid::run_id(&grid.point_id(&p), seed))
            })
            .collect();
        eprintln!(
            "boundary round {round}: {} points, {} new runs",
            wanted.len(),
            todo.len()
        );
        // After a stopping signal no run starts; those in progress finish
        // and are written below.
        let outcomes: Vec<Outcome> = pool_threads.install(|| {
            todo.par_iter()
                .with_max_len(1)
                .filter(|_| crate::signals::received().is_none())
                .map(|i| {
                    let (_, p, seed) = grid.run(*i);
                    execute_point(grid, *i, p, seed, false)
                })
                .collect()
        });
        for o in &outcomes {
            known.insert(o.run_id.clone(), Verdict::of_outcome(o, group));
        }
        write_outcomes(&store, &layout, &metadata, &outcomes)?;
        // A round cut short would move the boundary on partial verdicts:
        // the search stops, and running it again reuses every run written.
        if let Some(signal) = crate::signals::received() {
            return Err(RefineError::Interrupted(signal));
        }
        Ok(wanted
            .iter()
            .map(|w| {
                let verdicts: Vec<bool> = run_indexes(*w)
                    .filter_map(|i| {
                        let (_, p, seed) = grid.run(i);
                        // Failed runs and runs that cannot show recovery
                        // give no verdict.
                        match known.get(&Grid::run_id(&grid.point_id(&p), seed)) {
                            Some(Verdict::Recovered(r)) => Some(*r),
                            _ => None,
                        }
                    })
                    .collect();
                let not_recovered = verdicts.iter().filter(|r| !**r).count() as u64;
                (verdicts.len() as u64, not_recovered)
            })
            .collect())
    });
    if let Err(RefineError::Interrupted(signal)) = searched {
        return crate::refine::stopped(&store, &mut manifest, &out, signal);
    }
    searched?;

    let (_, failed_runs) = finish_manifest(&store, &mut manifest, "complete", true)?;
    let table = rounds_table(grid, &others, &searches, &rules, seeds);
    let dir = out.join("analysis");
    std::fs::create_dir_all(&dir).map_err(IoError::at(&dir))?;
    let path: PathBuf = dir.join("boundary_rounds.md");
    std::fs::write(&path, &table).map_err(IoError::at(&path))?;
    println!("{table}");
    println!(
        "rounds: {}; runs: {}/runs/*.parquet",
        path.display(),
        out.display()
    );
    if !args.no_report {
        crate::report::write_report(&out, false)?;
    }
    if failed_runs > 0 {
        eprintln!(
            "error: {} failed (their errors: `status` and `error` in {}/runs/*.parquet)",
            crate::progress::counted(failed_runs, "run", "runs"),
            out.display()
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Per combination of categories: each round's points, the boundary's
/// movement, the points and runs in all, and why the search stopped.
fn rounds_table(
    grid: &Grid,
    others: &[usize],
    searches: &[Search],
    rules: &BoundarySearch,
    seeds: u64,
) -> String {
    let mut md = format!(
        "Adaptive boundary of P(not recovered) = {} ({seeds} seeds per point; rounds of {} points after a first of {}, at least {} apart in unit coordinates; stops when two rounds in a row move the predicted side of fewer than {:.1}% of the {} candidates)\n\n",
        rules.threshold,
        rules.batch,
        rules.initial,
        rules.spacing,
        100.0 * rules.tolerance,
        rules.candidates
    );
    md.push_str("| category | rounds | points | runs with a verdict | runs left out (failed, or cannot show recovery) | moved by the last rounds | stopped because |\n|---|---|---|---|---|---|---|\n");
    for (c, s) in searches.iter().enumerate() {
        let label = grid
            .point_of(others, c as u64)
            .into_iter()
            .skip(grid.fixed.len())
            .map(|(k, v)| {
                format!(
                    "{k}={}",
                    v.as_str().map_or_else(|| v.to_string(), str::to_string)
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let moved: Vec<String> = (s.rounds.iter().rev().take(3).rev())
            .filter_map(|r| r.moved.map(|m| format!("{:.1}%", 100.0 * m)))
            .collect();
        let judged: u64 = s.observed().iter().map(|o| o.runs).sum();
        md.push_str(&format!(
            "| {} | {} | {} | {judged} | {} | {} | {} |\n",
            if label.is_empty() {
                "all".to_string()
            } else {
                label
            },
            s.rounds.len(),
            s.observed().len(),
            s.observed().len() as u64 * seeds - judged,
            if moved.is_empty() {
                "-".to_string()
            } else {
                moved.join(", ")
            },
            s.stop.map_or("-", Stop::words)
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> BoundarySearch {
        BoundarySearch {
            threshold: 0.5,
            initial: 16,
            batch: 8,
            spacing: 0.05,
            tolerance: 0.0,
            candidates: 1024,
        }
    }

    /// The candidates as `sweep` makes them: a 2-d scrambled Sobol'
    /// sequence's first points.
    fn pool(n: u32, k: u32) -> Vec<Vec<f64>> {
        (0..n)
            .map(|i| {
                (0..k)
                    .map(|d| f64::from(sobol_burley::sample(i, d, 3)))
                    .collect()
            })
            .collect()
    }

    /// The known boundary: not recovered above the curve y = 0.25 + 0.5 x^2.
    fn curve(x: f64) -> f64 {
        0.25 + 0.5 * x * x
    }

    fn distance_to_curve(p: (f64, f64)) -> f64 {
        (0..=10_000)
            .map(|i| {
                let x = i as f64 / 10_000.0;
                ((p.0 - x).powi(2) + (p.1 - curve(x)).powi(2)).sqrt()
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// A fake sweep: 4 seeds per point, all fail to recover above the
    /// curve, none below.
    fn fake(searches: &mut [Search], pool: &[Vec<f64>]) -> usize {
        let mut runs = 0;
        drive(searches, |wanted| -> Result<_, ()> {
            runs += wanted.len() * 4;
            Ok(wanted
                .iter()
                .map(|(_, c)| {
                    let x = &pool[*c];
                    (4, if x[1] > curve(x[0]) { 4 } else { 0 })
                })
                .collect())
        })
        .unwrap();
        runs
    }

    /// Equal candidates (an integer axis rounds draws together) run once:
    /// the search takes each point at most once and is exhausted when
    /// every distinct one has run.
    #[test]
    fn equal_candidates_run_once() {
        let pool: Vec<Vec<f64>> = (0..40).map(|i| vec![(i % 4) as f64 / 3.0, 0.5]).collect();
        let rules = BoundarySearch {
            spacing: 0.0,
            ..rules()
        };
        let mut searches = vec![Search::new(pool.clone(), &rules, 40)];
        fake(&mut searches, &pool);
        let s = &searches[0];
        let mut points: Vec<Vec<u64>> = (s.observed().iter())
            .map(|o| o.x.iter().map(|v| v.to_bits()).collect())
            .collect();
        assert_eq!(points.len(), 4, "{:?}", s.observed());
        points.sort();
        points.dedup();
        assert_eq!(points.len(), 4);
        assert_eq!(s.stop, Some(Stop::Exhausted));
    }

    /// A search whose first round gives no verdict stops there, rather
    /// than spend its budget in candidate order.
    #[test]
    fn a_search_without_any_verdict_stops_after_its_first_round() {
        let pool = pool(64, 2);
        let mut searches = vec![Search::new(pool.clone(), &rules(), 40)];
        drive(&mut searches, |wanted| -> Result<_, ()> {
            Ok(vec![(0, 0); wanted.len()])
        })
        .unwrap();
        let s = &searches[0];
        assert_eq!(s.stop, Some(Stop::NoVerdict));
        assert_eq!(s.rounds.len(), 1);
        assert_eq!(s.observed().len(), rules().initial as usize);
    }

    /// On a known curve, through the search and the contour the report
    /// draws: 160 points put the estimated boundary within 0.02 of the
    /// true one everywhere (measured 0.016, 0.007 on average); a full grid
    /// as fine (a spacing of 0.016) needs 63 x 63 = 3969 points.
    #[test]
    fn the_boundary_is_found_near_a_known_curve_with_fewer_points_than_a_grid() {
        let pool = pool(1024, 2);
        let mut searches = vec![Search::new(pool.clone(), &rules(), 160)];
        let runs = fake(&mut searches, &pool);
        let s = &searches[0];
        assert_eq!(s.stop, Some(Stop::Budget));
        assert_eq!(s.observed().len(), 160);
        assert_eq!(runs, 160 * 4);
        let map = analysis::contour::map(s.observed(), 0, 1, &[0.5, 0.5]);
        let segs = analysis::contour::contour(&map, 0.5);
        let d: Vec<f64> = (segs.iter())
            .map(|[a, b]| distance_to_curve(((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0)))
            .collect();
        let worst = d.iter().copied().fold(0.0, f64::max);
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        // The contour spans the whole curve (x from 0 to 1).
        let xs: Vec<f64> = segs.iter().flatten().map(|p| p.0).collect();
        let span = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            - xs.iter().copied().fold(f64::INFINITY, f64::min);
        eprintln!(
            "{} points, contour of {} segments: worst {worst:.4}, mean {mean:.4}, span {span:.3}",
            s.observed().len(),
            segs.len()
        );
        assert!(span > 0.95, "{span}");
        assert!(worst < 0.02, "worst {worst}");
        assert!(mean < 0.01, "mean {mean}");
        let grid_points = (1.0 / worst).ceil().powi(2) as usize;
        assert!(s.observed().len() * 5 < grid_points, "{grid_points}");
        // Most points after the first round sit near the boundary.
        let near = (s.observed().iter().skip(16))
            .filter(|o| distance_to_curve((o.x[0], o.x[1])) < 0.1)
            .count();
        assert!(near as f64 > 0.85 * 144.0, "{near} of 144");
    }

    /// The same space-filling points without the adaptive picks (the
    /// first 160 candidates) find the boundary less well: the picks are
    /// what makes it precise.
    #[test]
    fn the_first_candidates_alone_are_coarser() {
        let pool = pool(1024, 2);
        let observed: Vec<Observed> = (pool.iter().take(160))
            .map(|x| Observed {
                x: x.clone(),
                runs: 4,
                not_recovered: if x[1] > curve(x[0]) { 4 } else { 0 },
            })
            .collect();
        let map = analysis::contour::map(&observed, 0, 1, &[0.5, 0.5]);
        let worst = (analysis::contour::contour(&map, 0.5).iter())
            .map(|[a, b]| distance_to_curve(((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0)))
            .fold(0.0, f64::max);
        eprintln!("the first 160 candidates: worst {worst:.4}");
        assert!(worst > 0.03, "{worst}");
    }

    /// A round takes the most uncertain candidates, never two closer than
    /// the spacing, and none already run.
    #[test]
    fn a_round_picks_uncertain_candidates_apart() {
        let pool = pool(1024, 2);
        let mut rules = rules();
        rules.spacing = 0.2;
        let mut s = Search::new(pool.clone(), &rules, 100);
        let first = s.next();
        assert_eq!(first, (0..16).collect::<Vec<_>>());
        let counts: Vec<(u64, u64)> = (first.iter())
            .map(|c| (2, if pool[*c][0] > 0.5 { 2 } else { 0 }))
            .collect();
        s.record(&first, &counts);
        let second = s.next();
        assert_eq!(second.len(), 8);
        for (i, a) in second.iter().enumerate() {
            assert!(!first.contains(a));
            for b in &second[..i] {
                assert!(analysis::contour::distance(&pool[*a], &pool[*b]) >= 0.2);
            }
        }
        // Every pick is at least as uncertain as any candidate left out
        // that is far enough from the picks.
        let score = |c: usize| (estimate(s.observed(), &pool[c]).unwrap() - 0.5).abs();
        let worst_pick = second.iter().map(|c| score(*c)).fold(0.0, f64::max);
        for c in (0..1024).filter(|c| !first.contains(c) && !second.contains(c)) {
            let far =
                (second.iter()).all(|p| analysis::contour::distance(&pool[*p], &pool[c]) >= 0.2);
            if far {
                assert!(score(c) >= worst_pick, "{c}: {} < {worst_pick}", score(c));
            }
        }
    }

    /// With a tolerance, a search whose rounds no longer move the
    /// boundary stops before its budget; with none, it spends it.
    #[test]
    fn a_converged_boundary_stops_the_search() {
        let pool = pool(1024, 2);
        let mut converging = rules();
        converging.tolerance = 0.01;
        let mut searches = vec![
            Search::new(pool.clone(), &converging, 400),
            Search::new(pool.clone(), &rules(), 400),
        ];
        fake(&mut searches, &pool);
        assert_eq!(searches[0].stop, Some(Stop::Converged));
        for r in searches[0].rounds.iter().rev().take(2) {
            assert!(r.moved.unwrap() < 0.01, "{:?}", searches[0].rounds);
        }
        let before = &searches[0].rounds[searches[0].rounds.len() - 3];
        assert!(before.moved.is_none_or(|m| m >= 0.01), "{before:?}");
        assert!(searches[0].observed().len() < 400);
        assert_eq!(searches[1].stop, Some(Stop::Budget));
        assert_eq!(searches[1].observed().len(), 400);
    }

    /// The picks are a function of the outcomes alone: the same rounds
    /// whether the counts come in one call or replayed after a stop (an
    /// interrupted sweep resumed from the runs already written).
    #[test]
    fn an_interrupted_search_replays_the_same_rounds() {
        let pool = pool(512, 3);
        let outcome = |c: usize| {
            let x = &pool[c];
            (2, if x[0] + x[1] * x[2] > 0.8 { 2 } else { 0 })
        };
        let whole = {
            let mut s = vec![Search::new(pool.clone(), &rules(), 96)];
            drive(&mut s, |w| -> Result<_, ()> {
                Ok(w.iter().map(|(_, c)| outcome(*c)).collect())
            })
            .unwrap();
            s.remove(0).rounds
        };
        // Interrupted after three rounds: the cache holds their results.
        let mut cache = std::collections::HashMap::new();
        let mut calls = 0;
        let stopped = drive(&mut [Search::new(pool.clone(), &rules(), 96)], |w| {
            calls += 1;
            if calls > 3 {
                return Err(());
            }
            Ok(w.iter()
                .map(|(_, c)| *cache.entry(*c).or_insert(outcome(*c)))
                .collect())
        });
        assert!(stopped.is_err());
        let before = cache.len();
        let mut new_runs = 0;
        let mut resumed = vec![Search::new(pool.clone(), &rules(), 96)];
        drive(&mut resumed, |w| -> Result<_, ()> {
            Ok(w.iter()
                .map(|(_, c)| {
                    *cache.entry(*c).or_insert_with(|| {
                        new_runs += 1;
                        outcome(*c)
                    })
                })
                .collect())
        })
        .unwrap();
        assert_eq!(resumed[0].rounds, whole);
        assert_eq!(new_runs, 96 - before);
    }
}
