# Everyday recipes. Optional: each one is a plain cargo or shell command.

default:
    @just --list

# The main job: the ch37 grid, results in out/ch37/
run grid="grids/ch37.toml":
    cargo run --release -p sweep -- run {{grid}}

# The metastability map of every protection (grids/maps/), results in out/map-*/
maps:
    for g in grids/maps/*.toml; do cargo run -q --release -p sweep -- run "$g"; done

# Estimate a grid's size and wall time
plan grid="grids/ch37-overnight.toml":
    cargo run --release -p sweep -- plan {{grid}}

# The four presets of ch37, one seed, as a table
one seed="1":
    cargo run --release -p sweep -- one --preset all --seed {{seed}}

test:
    cargo test --workspace

lint:
    cargo fmt --all --check
    cargo clippy --workspace --all-targets -- -D warnings

# Simulator speed (ms/run, events/s, memory) and sweep overhead, speed-up, peak RSS
bench:
    cargo bench -p sim-core
    bash bench/sweep.sh

# Regenerate docs/params.md
docs:
    cargo run -q -p sweep -- params --markdown > docs/params.md

# Everything CI runs (installs Python packages and a local Slurm cluster)
ci:
    bash .ci/run
