//! The machine a report runs on.

use std::fmt;

/// The machine a report ran on.
///
/// # Examples
///
/// ```
/// use benches::report::Machine;
/// let m = Machine { cores: 2, model: "Intel(R) Xeon(R) Processor".into(), kernel: "Linux 6.1.0 x86_64".into() };
/// assert_eq!(m.to_string(), "2 cores, Intel(R) Xeon(R) Processor, Linux 6.1.0 x86_64");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// Cores this process may run on.
    pub cores: usize,
    /// The CPU's model name.
    pub model: String,
    /// Kernel name and release, and the architecture.
    pub kernel: String,
}

impl Machine {
    /// This machine: cores from the scheduler, model from `/proc/cpuinfo`
    /// (or `sysctl` elsewhere), kernel from `/proc/sys/kernel` (or
    /// `uname`).
    ///
    /// # Examples
    ///
    /// ```
    /// let m = benches::report::Machine::detect();
    /// assert!(m.cores >= 1);
    /// println!("{m}");
    /// ```
    pub fn detect() -> Machine {
        let run = |cmd: &str, args: &[&str]| {
            std::process::Command::new(cmd)
                .args(args)
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| cpu_model(&s))
            .or_else(|| run("sysctl", &["-n", "machdep.cpu.brand_string"]))
            .unwrap_or_else(|| "unknown CPU".into());
        let proc_kernel = |f: &str| {
            std::fs::read_to_string(format!("/proc/sys/kernel/{f}"))
                .ok()
                .map(|s| s.trim().to_string())
        };
        let kernel = match (proc_kernel("ostype"), proc_kernel("osrelease")) {
            (Some(t), Some(r)) => format!("{t} {r}"),
            _ => run("uname", &["-sr"]).unwrap_or_else(|| std::env::consts::OS.into()),
        };
        Machine {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            model,
            kernel: format!("{kernel} {}", std::env::consts::ARCH),
        }
    }
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = if self.cores == 1 { "" } else { "s" };
        write!(f, "{} core{s}, {}, {}", self.cores, self.model, self.kernel)
    }
}

/// The first `model name` of a `/proc/cpuinfo` text.
pub(super) fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .filter(|s| !s.is_empty())
}
