//! `State`'s record of the board's checks: each item's last check, as it starts and ends — told
//! (`check_start`, `check_end`), shown (the board pane's marks) and saved, so a resumed session
//! shows the same marks. A check's own running is the turn's (`turn::checks`).

use super::State;
use crate::agent::check_record::CheckRecord;
use crate::agent::event::AgentEvent;
use crate::agent::journal::Record;
use std::collections::BTreeMap;
use std::sync::Arc;

impl State {
    /// The failed runs in a row of item `id`'s check `command` so far: a check whose command
    /// changed starts again from none.
    pub fn check_failures(&self, id: &str, command: &str) -> u32 {
        self.view
            .checks
            .get(id)
            .filter(|last| last.command == command)
            .map_or(0, |last| last.failures_in_row)
    }

    /// Item `id`'s check `command` starts now.
    pub fn check_started(&mut self, id: &str, command: &str) {
        let failures = self.check_failures(id, command);
        self.view.checks.insert(id.to_owned(), Arc::new(CheckRecord::running(command, failures)));
        self.emit(AgentEvent::CheckStart { item: id.to_owned(), command: command.to_owned() });
    }

    /// Item `id`'s check ended as `record` says: kept, saved and told.
    pub fn check_ended(&mut self, id: &str, record: CheckRecord) {
        self.record(&Record::Check { item: id.to_owned(), record: record.clone() });
        self.emit(AgentEvent::CheckEnd {
            item: id.to_owned(),
            command: record.command.clone(),
            passed: record.passed(),
            exit_code: record.exit_code,
            exit: record.exit_words(),
            duration_ms: record.duration_ms(),
            output: record.output.clone(),
            failures_in_row: record.failures_in_row,
        });
        self.view.checks.insert(id.to_owned(), Arc::new(record));
    }

    /// Takes over the checks' records of a saved session.
    pub(super) fn restore_checks(&mut self, checks: BTreeMap<String, CheckRecord>) {
        self.view.checks = checks.into_iter().map(|(id, record)| (id, Arc::new(record))).collect();
    }
}
