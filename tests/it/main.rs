//! The integration tests, as one binary: each module tests one part of the
//! program against facts that do not come from it (published hashes, known
//! positions, hand-worked boards, independent algorithms, whole-level
//! invariants). `mpi` runs only with `--features mpi` (under a real
//! `mpirun`; `.ci/run` installs Open MPI).

mod common;

mod bench_script;
mod cli;
mod distributed;
mod encoder;
mod fixed_points;
mod fuzz;
mod hand_scripts;
mod invariants;
mod layers;
#[cfg(feature = "mpi")]
mod mpi;
mod omweso;
mod omweso_census;
mod openapi;
mod probe;
mod reliability;
mod resume;
mod retro;
mod rules;
mod run_script;
mod server;
mod solver;
mod storage;
mod verify;
