//! Records the commit this program is built from, for `bench --json`
//! (`src/cli/bench/run_info.rs`): `LSM_DEMO_GIT_COMMIT` when set, else the
//! source tree's `git rev-parse HEAD`, with `-dirty` when tracked files
//! differ from it, else `unknown` (a build from the published crate).
//! Captured at build time, so that a binary run later, or elsewhere, names
//! the code it holds rather than wherever the tree has moved since.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=LSM_DEMO_GIT_COMMIT");
    // Sources edited without a commit make the build dirty: look again.
    println!("cargo:rerun-if-changed=src");
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(args)
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && !text.is_empty()).then_some(text)
    };
    if let Some(git_dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        // A new commit or a switched branch. Not the index: git rewrites
        // it on a mere `git status`, and staging changes nothing here
        // (dirty compares the files with HEAD). Only paths that exist: a
        // missing one would rerun every build.
        let branch = git(&["symbolic-ref", "-q", "HEAD"]);
        for file in ["HEAD", "packed-refs"].into_iter().chain(branch.as_deref()) {
            let path = Path::new(&git_dir).join(file);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    let commit = match std::env::var("LSM_DEMO_GIT_COMMIT") {
        Ok(c) if !c.is_empty() => c,
        _ => match git(&["rev-parse", "HEAD"]) {
            Some(head) => {
                let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some();
                if dirty { format!("{head}-dirty") } else { head }
            }
            None => "unknown".into(),
        },
    };
    println!("cargo:rustc-env=LSM_DEMO_BUILD_COMMIT={commit}");
}
