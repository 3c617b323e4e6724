//! The lines keel and a supervisor exchange over their socket, one message per line.
//!
//! keel sends [`GO`] to let a held shell run, and [`KILL`]; closing its end means the same as
//! `kill`, whatever the reason (keel exited, was killed, or dropped the call). The supervisor
//! answers with [`Report`]s.

/// keel asks the supervisor to kill every process of the command and exit.
pub const KILL: &str = "kill";
/// keel lets a shell started held run.
pub const GO: &str = "go";

/// The byte a held shell's last step (`sandbox::confine`) writes once it is ready, and the one
/// the supervisor answers to let it go on.
pub const HELD_READY: u8 = b'r';
pub const HELD_GO: u8 = b'g';

/// How a command's shell ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Code(i32),
    Signal(i32),
}

/// What the supervisor tells keel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Report {
    /// `bash` runs with this pid, which is also its process group (held, when it was started so,
    /// until keel says [`GO`]).
    Started(i32),
    /// A held shell's sandbox is set up: only keel's [`GO`] keeps it from running.
    Ready,
    /// The command could not be started.
    Failed(String),
    /// `bash` ended; processes it left in the background may still run.
    Exited(Status),
    /// Every process of the command was sent SIGKILL; `survivors` were still alive at the deadline.
    Killed { killed: usize, survivors: Vec<i32> },
}

impl Report {
    /// The report as one line, without the newline.
    pub fn to_line(&self) -> String {
        match self {
            Self::Started(pid) => format!("started {pid}"),
            Self::Ready => "ready".to_owned(),
            // A message is one line: newlines would start a new report.
            Self::Failed(message) => format!("failed {}", message.replace(['\n', '\r'], " ")),
            Self::Exited(Status::Code(code)) => format!("exited code {code}"),
            Self::Exited(Status::Signal(signal)) => format!("exited signal {signal}"),
            Self::Killed { killed, survivors } => {
                let survivors: Vec<String> = survivors.iter().map(i32::to_string).collect();
                format!("killed {killed} {}", survivors.join(",")).trim_end().to_owned()
            }
        }
    }

    /// Reads a line written by [`Report::to_line`]; `None` for anything else.
    pub fn parse(line: &str) -> Option<Self> {
        let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
        match kind {
            "started" => rest.parse().ok().map(Self::Started),
            "ready" if rest.is_empty() => Some(Self::Ready),
            "failed" => Some(Self::Failed(rest.to_owned())),
            "exited" => match rest.split_once(' ')? {
                ("code", code) => code.parse().ok().map(|code| Self::Exited(Status::Code(code))),
                ("signal", signal) => {
                    signal.parse().ok().map(|signal| Self::Exited(Status::Signal(signal)))
                }
                _ => None,
            },
            "killed" => {
                let (killed, survivors) = rest.split_once(' ').unwrap_or((rest, ""));
                let survivors = survivors
                    .split(',')
                    .filter(|pid| !pid.is_empty())
                    .map(str::parse)
                    .collect::<Result<Vec<i32>, _>>()
                    .ok()?;
                Some(Self::Killed { killed: killed.parse().ok()?, survivors })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_survive_the_trip() {
        let reports = [
            Report::Started(42),
            Report::Ready,
            Report::Failed("no bash".into()),
            Report::Exited(Status::Code(3)),
            Report::Exited(Status::Signal(9)),
            Report::Killed { killed: 0, survivors: vec![] },
            Report::Killed { killed: 4, survivors: vec![7, 8] },
        ];
        for report in reports {
            assert_eq!(Report::parse(&report.to_line()), Some(report.clone()), "{report:?}");
        }
        assert_eq!(Report::parse("failed two\nlines"), Some(Report::Failed("two\nlines".into())));
        assert_eq!(Report::Failed("a\nb".into()).to_line(), "failed a b");
        assert_eq!(Report::parse("exited maybe 1"), None);
        assert_eq!(Report::parse("killed x"), None);
    }
}
