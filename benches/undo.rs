#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What an undo snapshot costs: of a workspace just as the last snapshot left it, and of one
//! where a file changed (`git add`, `git write-tree`), in a workspace of 1,000 files, small
//! enough to be looked at without git, and in one of 20,000, which is left to git. Needs `git`.

use criterion::{Criterion, criterion_group, criterion_main};
use keel::runtime::undo::Shadow;
use std::time::Duration;

/// Files per folder, and the workspaces' sizes in folders.
const FILES_PER_FOLDER: usize = 10;
const SIZES: [usize; 2] = [100, 2_000];
/// Files written this long before the first snapshot, as in a workspace people work in: git's
/// times vouch for them (files changed within the second the index is written in are read).
const SETTLED: Duration = Duration::from_millis(1_100);

fn snapshots(c: &mut Criterion) {
    for folders in SIZES {
        let (work, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for folder in 0..folders {
            let path = work.path().join(format!("d{}/e{folder}", folder % 50));
            std::fs::create_dir_all(&path).unwrap();
            for file in 0..FILES_PER_FOLDER {
                let content = format!("// {folder} {file}\n");
                std::fs::write(path.join(format!("f{file}.rs")), content).unwrap();
            }
        }
        let shadow = Shadow::new(
            state.path().join("shadow.git"),
            work.path().to_owned(),
            state.path().join("index"),
        );
        std::thread::sleep(SETTLED);
        let first = shadow.snapshot().unwrap();
        let name = format!("undo snapshot, {} files in {folders} folders", folders * 10);
        let mut group = c.benchmark_group(name);
        group.sample_size(20);
        group.bench_function("unchanged", |b| {
            b.iter(|| assert_eq!(shadow.snapshot().unwrap(), first))
        });
        let changed = work.path().join("d7/e7/f7.rs");
        let mut round = 0u64;
        group.bench_function("one file changed", |b| {
            b.iter(|| {
                round += 1;
                std::fs::write(&changed, format!("// round {round}\n")).unwrap();
                shadow.snapshot().unwrap()
            })
        });
        group.finish();
    }
}

criterion_group!(benches, snapshots);
criterion_main!(benches);
