//! Replays the committed seeds of the `token_room` fuzz target
//! (`fuzz/seeds/token_room/`) through the invariant it asserts
//! (`fuzz/checks/token_room.rs`), so `cargo test` runs them: a hostile
//! token file and bridge environment never give a user's agent another
//! user's variables, a token, a variable of the bridge's outside the
//! allow-list, or a path of another user's room or the bridge's own files.

use std::path::Path;

#[path = "../../../fuzz/checks/token_room.rs"]
mod check;

#[test]
fn token_room_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/token_room");
    let mut seeds: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    seeds.sort();
    assert!(seeds.len() >= 8, "too few seeds in {}", dir.display());
    for seed in seeds {
        eprintln!("{}", seed.display());
        check::check(&std::fs::read(&seed).unwrap());
    }
    std::fs::remove_dir_all(check::scratch_dir()).unwrap();
}
