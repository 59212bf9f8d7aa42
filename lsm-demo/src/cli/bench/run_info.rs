//! What `--json` records besides the results, so that a run can be told
//! apart and replayed: the program's version and commit, and the machine.

use serde::Serialize;

/// The program that ran.
#[derive(Debug, Clone, Serialize)]
pub struct Program {
    /// `lsm-demo`.
    pub name: &'static str,
    /// The crate's version.
    pub version: &'static str,
    /// The commit it was built from, read when it was built:
    /// `LSM_DEMO_GIT_COMMIT` if set, else `git rev-parse HEAD` in its source
    /// tree (with `-dirty` when tracked files had changes), else `unknown`.
    pub git_commit: String,
}

impl Program {
    /// This program.
    pub fn this() -> Program {
        Program {
            name: env!("CARGO_PKG_NAME"),
            version: env!("CARGO_PKG_VERSION"),
            git_commit: git_commit(),
        }
    }
}

fn git_commit() -> String {
    // Set by `build.rs`.
    env!("LSM_DEMO_BUILD_COMMIT").to_string()
}

/// The machine it ran on.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    /// Cores this process may run on.
    pub cores: usize,
    /// The CPU's model name from `/proc/cpuinfo` (`unknown` elsewhere).
    pub cpu: String,
    /// The kernel, from `uname`: name, release and version.
    pub kernel: String,
    /// The machine's hardware name, from `uname` (`x86_64`, ...).
    pub arch: String,
}

impl Machine {
    /// This machine.
    pub fn this() -> Machine {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| cpu_model(&s))
            .unwrap_or_else(|| "unknown".into());
        let (kernel, arch) = uname().unwrap_or_else(|| ("unknown".into(), "unknown".into()));
        Machine {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu,
            kernel,
            arch,
        }
    }
}

/// The first `model name` of a `/proc/cpuinfo`.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// `uname`'s `"<sysname> <release> <version>"` and its machine.
fn uname() -> Option<(String, String)> {
    // SAFETY: `utsname` is plain old data, for which all zeroes is a valid
    // value.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable `utsname` that outlives the call.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Some((
        format!(
            "{} {} {}",
            field(&u.sysname),
            field(&u.release),
            field(&u.version)
        ),
        field(&u.machine),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_model_is_the_first_model_name() {
        let info = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\nprocessor\t: 1\nmodel name\t: other\n";
        assert_eq!(
            cpu_model(info).as_deref(),
            Some("Intel(R) Xeon(R) Processor")
        );
        assert_eq!(cpu_model("processor\t: 0\n"), None);
    }

    #[test]
    fn this_machine_and_program_are_described() {
        let m = Machine::this();
        assert!(m.cores >= 1);
        assert!(!m.kernel.is_empty() && !m.arch.is_empty());
        if cfg!(target_os = "linux") {
            assert!(m.kernel.starts_with("Linux "), "{}", m.kernel);
        }
        let p = Program::this();
        assert_eq!(p.version, env!("CARGO_PKG_VERSION"));
        // As `build.rs` read it: a commit (possibly dirty), or `unknown`
        // outside a git checkout; an override is taken as given.
        if option_env!("LSM_DEMO_GIT_COMMIT").is_none_or(str::is_empty) {
            let commit = p.git_commit.strip_suffix("-dirty").unwrap_or(&p.git_commit);
            assert!(
                commit == "unknown"
                    || (commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
                "{}",
                p.git_commit
            );
        }
    }
}
