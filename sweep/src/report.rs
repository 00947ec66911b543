//! The end of a sweep: the analysis crate's report, and where to find it.

use crate::store::Store;

pub fn write_report(store: &Store) -> Result<(), String> {
    let table = analysis::summarize(&store.root)?;
    println!("\n{table}");
    println!(
        "summary: {}/analysis/summary.md (.csv, .parquet)",
        store.root.display()
    );
    Ok(())
}
