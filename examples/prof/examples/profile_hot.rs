//! The cost of the profiler's hot path, ad hoc (the overhead against MPI calls is measured by
//! the benchmark in benches/): `cargo run --release -p mpit-prof --example profile_hot`.

use std::time::Instant;

use mpit_prof::{Config, Mode, Profiler};
use mpit_safe::Mpit;
// rsmpi in the native build; its names over the ABI library in the ABI build.
#[cfg(mpit_abi)]
use mpit_safe::mpi;

fn main() {
    let _universe = mpi::initialize().unwrap();
    let mpit = Mpit::init().unwrap();
    let s = mpit.session().unwrap();
    for mode in [Mode::Region, Mode::Call] {
        let config = Config {
            mode,
            functions: vec!["MPI_Send"],
            ..Config::default()
        };
        let p = Profiler::new(&s, config).unwrap();
        let n = 2_000_000;
        let t = Instant::now();
        for _ in 0..n {
            let c = p.call_enter(0);
            p.call_exit(c);
        }
        let call = t.elapsed().as_nanos() as f64 / n as f64;
        let t = Instant::now();
        for _ in 0..n / 10 {
            p.begin("r");
            p.end("r").unwrap();
        }
        let region = t.elapsed().as_nanos() as f64 / (n / 10) as f64;
        let r = p.finish().unwrap();
        let handles: usize = r.columns.iter().map(|c| c.handles).sum();
        println!(
            "{mode}: call enter+exit {call:.1} ns, region begin+end {region:.1} ns, {handles} handles"
        );
    }
}
