//! How a finished command reads: a headline that says how it ended (and, when it was killed,
//! whether every process it started is really gone), then its output within the limits.

use crate::runtime::supervisor::KillReport;
use crate::runtime::supervisor::protocol::Status;
use crate::tools::ToolOutcome;
use crate::tools::output::{self, CappedBuffer, DISPLAY_OUTPUT_LIMIT, MODEL_OUTPUT_LIMIT};
use std::time::Duration;

/// The most a section title (`--- stdout ---` and its newlines) adds to the output.
const SECTION_TITLE_BYTES: usize = 20;
/// How many surviving pids a headline lists.
const SURVIVORS_LISTED: usize = 8;

/// How the command ended.
#[derive(Debug)]
pub enum Ending {
    Exited {
        status: Status,
        /// Background processes held the output open past the grace period and were killed.
        stopped: Option<KillReport>,
    },
    TimedOut(Duration, KillReport),
    Interrupted(KillReport),
    /// The supervisor went away without a word.
    Lost(KillReport),
}

impl Ending {
    pub fn into_outcome(
        self,
        [stdout, stderr]: [&CappedBuffer; 2],
        elapsed: Duration,
    ) -> ToolOutcome {
        let (headline, exit_code, is_error) = match self {
            Ending::Exited { status, stopped } => {
                let (mut headline, code) = match status {
                    Status::Code(code) => (format!("Exit code {code}"), Some(code)),
                    Status::Signal(signal) => (format!("Killed by signal {signal}"), None),
                };
                if let Some(report) = stopped {
                    headline.push_str(&match report {
                        KillReport::AllDead => {
                            " (background processes still holding the output open were stopped)"
                                .to_owned()
                        }
                        other => format!(
                            " (background processes still held the output open; {})",
                            kill_clause(&other)
                        ),
                    });
                }
                (headline, code, code != Some(0))
            }
            Ending::TimedOut(timeout, report) => (
                format!(
                    "Command timed out after {}; {}",
                    human_duration(timeout),
                    kill_clause(&report)
                ),
                None,
                true,
            ),
            Ending::Interrupted(report) => (
                format!(
                    "Command interrupted by user after {}; {}",
                    human_duration(elapsed),
                    kill_clause(&report)
                ),
                None,
                true,
            ),
            Ending::Lost(report) => {
                (format!("Lost track of the command; {}", kill_clause(&report)), None, true)
            }
        };
        let display = render(&headline, stdout, stderr, DISPLAY_OUTPUT_LIMIT);
        let model = render(&headline, stdout, stderr, MODEL_OUTPUT_LIMIT);
        ToolOutcome {
            for_model: model,
            for_display: display,
            is_error,
            exit_code,
            ..ToolOutcome::default()
        }
    }
}

/// What a kill achieved, as the end of a sentence.
fn kill_clause(report: &KillReport) -> String {
    match report {
        KillReport::AllDead => "it was killed with every process it started".to_owned(),
        KillReport::Survivors(pids) => {
            let mut listed: Vec<String> =
                pids.iter().take(SURVIVORS_LISTED).map(i32::to_string).collect();
            if pids.len() > SURVIVORS_LISTED {
                listed.push("…".to_owned());
            }
            format!(
                "it was killed, but {} of the processes it started could not be stopped (pid {})",
                pids.len(),
                listed.join(", ")
            )
        }
        KillReport::Unconfirmed => "it was killed, but keel could not confirm that every process \
                                    it started is gone"
            .to_owned(),
    }
}

/// The headline, then each stream that printed something, within `limit` bytes of output.
fn render(headline: &str, stdout: &CappedBuffer, stderr: &CappedBuffer, limit: usize) -> String {
    let mut text = String::from(headline);
    text.push('\n');
    if stdout.is_empty() && stderr.is_empty() {
        text.push_str("(no output)\n");
        return text;
    }
    // What surrounds the output itself: the headline, two section titles and two omission
    // markers at most, so the whole text stays within `limit`.
    let overhead = text.len() + 2 * (SECTION_TITLE_BYTES + output::omitted_marker(u64::MAX).len());
    let budget = limit.saturating_sub(overhead);
    let shares = output::share_budget(budget, &[stdout.total(), stderr.total()]);
    for ((title, kept), share) in [("stdout", stdout), ("stderr", stderr)].into_iter().zip(shares) {
        if !kept.is_empty() {
            output::push_section(&mut text, title, &kept.render(share));
        }
    }
    // Invalid bytes grow threefold when replaced by U+FFFD; binary output may overshoot.
    output::truncate_at_char(&mut text, limit);
    text
}

/// `850 ms`, `2.5 s`, `2 min 5 s`.
fn human_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 1000 {
        format!("{millis} ms")
    } else if millis < 60_000 {
        format!("{:.1} s", duration.as_secs_f64())
    } else {
        let secs = duration.as_secs();
        format!("{} min {} s", secs / 60, secs % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(human_duration(Duration::from_millis(850)), "850 ms");
        assert_eq!(human_duration(Duration::from_millis(2_500)), "2.5 s");
        assert_eq!(human_duration(Duration::from_secs(125)), "2 min 5 s");
    }

    #[test]
    fn a_kill_that_left_survivors_says_so() {
        assert!(kill_clause(&KillReport::AllDead).contains("every process"));
        let survivors = kill_clause(&KillReport::Survivors(vec![7, 8]));
        assert!(survivors.contains("2 of the processes") && survivors.contains("7, 8"));
        assert!(kill_clause(&KillReport::Unconfirmed).contains("could not confirm"));
    }
}
