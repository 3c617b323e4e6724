//! The person's edits to the board: `/todo add|done|undo|rm|edit|move|check` typed in the
//! composer, or a key on the focused board pane, both become a [`BoardEdit`].
//!
//! An edit builds the new list and runs it through the same whole-list rules as a model's update
//! (`validate::check_board`); a failure, like a missing item or a position past the end, is an
//! error for the person and leaves the board as it was. A successful edit also says in a few
//! words what it did, for the note that tells the model.

use super::validate::check_board;
use super::{Board, BoardError, BoardItem, Status};
use thiserror::Error;

/// What `/todo` takes, for the usage message.
pub const USAGE: &str = "/todo add TEXT | done N | undo N | rm N | edit N TEXT | move N POS | \
     check N [CMD] (N is the item's id)";

/// One change the person makes to the board. Ids are the items' own (`2` or `#2`); positions
/// count from 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoardEdit {
    /// A new pending item at the end.
    Add { text: String },
    /// Mark an item completed.
    Done { id: String },
    /// Mark an item pending again.
    Undo { id: String },
    /// Take an item off the board (and out of every other item's `blocked_by`).
    Remove { id: String },
    /// Give an item new text.
    Edit { id: String, text: String },
    /// Put an item at another position.
    Move { id: String, to: usize },
    /// Give an item a check (`command`), or take its check away (`None`).
    Check { id: String, command: Option<String> },
}

/// Why an edit was not made. The text is for the person.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EditError {
    #[error("usage: {USAGE}")]
    Usage,
    #[error("/todo {verb} needs {what}; usage: {USAGE}")]
    Missing { verb: &'static str, what: &'static str },
    #[error("/todo move: the position must be a whole number from 1, not '{0}'")]
    BadPosition(String),
    #[error("there is no item #{0} on the board")]
    NoSuchItem(String),
    #[error("#{id} cannot move to position {to}: the board has {len} items")]
    PastTheEnd { id: String, to: usize, len: usize },
    #[error("#{id} is already {}", .status.as_str())]
    Already { id: String, status: Status },
    #[error("{0}")]
    Invalid(#[from] BoardError),
}

impl BoardEdit {
    /// Reads the words after `/todo`.
    pub fn parse(args: &str) -> Result<Self, EditError> {
        let args = args.trim();
        let (verb, rest) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
        let rest = rest.trim();
        let (first, tail) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let id = |verb| {
            let id = first.trim_start_matches('#');
            if id.is_empty() {
                Err(EditError::Missing { verb, what: "an item id" })
            } else {
                Ok(id.to_owned())
            }
        };
        let text = |verb, text: &str| {
            let text = text.trim();
            if text.is_empty() {
                Err(EditError::Missing { verb, what: "the item's text" })
            } else {
                Ok(text.to_owned())
            }
        };
        match verb.to_ascii_lowercase().as_str() {
            "add" => Ok(Self::Add { text: text("add", rest)? }),
            "done" => Ok(Self::Done { id: id("done")? }),
            "undo" => Ok(Self::Undo { id: id("undo")? }),
            "rm" | "remove" => Ok(Self::Remove { id: id("rm")? }),
            "edit" => Ok(Self::Edit { id: id("edit")?, text: text("edit", tail)? }),
            "check" => {
                let command = Some(tail.trim()).filter(|command| !command.is_empty());
                Ok(Self::Check { id: id("check")?, command: command.map(str::to_owned) })
            }
            "move" => {
                let id = id("move")?;
                let position = tail.trim();
                if position.is_empty() {
                    return Err(EditError::Missing { verb: "move", what: "a position" });
                }
                match position.parse::<usize>() {
                    Ok(to) if to >= 1 => Ok(Self::Move { id, to }),
                    _ => Err(EditError::BadPosition(position.to_owned())),
                }
            }
            _ => Err(EditError::Usage),
        }
    }

    /// The board after this edit, and what was done in a few words (`marked #2 completed`).
    /// The board passed in is left as it was.
    pub fn apply(&self, board: &Board) -> Result<(Board, String), EditError> {
        let mut items = board.items().to_vec();
        let find = |items: &[BoardItem], id: &str| {
            items
                .iter()
                .position(|item| item.id == id)
                .ok_or_else(|| EditError::NoSuchItem(id.to_owned()))
        };
        let said = match self {
            Self::Add { text } => {
                let id = next_id(&items);
                let said = format!("added #{id}: {text}");
                items.push(BoardItem { id, text: text.clone(), ..BoardItem::default() });
                said
            }
            Self::Done { id } => {
                let index = find(&items, id)?;
                set_status(&mut items[index], Status::Completed)?
            }
            Self::Undo { id } => {
                let index = find(&items, id)?;
                set_status(&mut items[index], Status::Pending)?
            }
            Self::Remove { id } => {
                let removed = items.remove(find(&items, id)?);
                for item in &mut items {
                    item.blocked_by.retain(|blocker| *blocker != removed.id);
                }
                format!("removed #{}: {}", removed.id, removed.text)
            }
            Self::Edit { id, text } => {
                let index = find(&items, id)?;
                let item = &mut items[index];
                let said = format!("changed #{id} from \"{}\" to \"{text}\"", item.text);
                item.text.clone_from(text);
                said
            }
            Self::Check { id, command } => {
                let index = find(&items, id)?;
                let item = &mut items[index];
                item.check_passed = false;
                item.check.clone_from(command);
                match command {
                    Some(command) => format!("set #{id}'s check to `{command}`"),
                    None => format!("removed #{id}'s check"),
                }
            }
            Self::Move { id, to } => {
                let from = find(&items, id)?;
                if *to > items.len() {
                    return Err(EditError::PastTheEnd {
                        id: id.clone(),
                        to: *to,
                        len: items.len(),
                    });
                }
                let item = items.remove(from);
                items.insert(to - 1, item);
                format!("moved #{id} to position {to}")
            }
        };
        check_board(&items)?;
        Ok((Board::from_items(items), said))
    }
}

fn set_status(item: &mut BoardItem, status: Status) -> Result<String, EditError> {
    if item.status == status {
        return Err(EditError::Already { id: item.id.clone(), status });
    }
    item.status = status;
    // A pass counts for the completion it allowed: reopened, the item is checked again.
    item.check_passed = false;
    Ok(format!("marked #{} {}", item.id, status.as_str()))
}

/// The id a new item gets: one more than the largest numeric id, which no item can have, so a
/// new item always goes after the others, gaps and all.
fn next_id(items: &[BoardItem]) -> String {
    let largest = items.iter().filter_map(|item| item.id.parse::<u64>().ok()).max().unwrap_or(0);
    match largest.checked_add(1) {
        Some(next) => next.to_string(),
        // Only a model's id at the very end of the range gets here: the first free number.
        None => {
            let taken = |id: u64| items.iter().any(|item| item.id == id.to_string());
            (1..).find(|&id| !taken(id)).unwrap_or_default().to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn board() -> Board {
        let mut board = Board::default();
        board
            .update(&json!({"items": [
                {"id": "1", "text": "Read", "status": "completed"},
                {"id": "2", "text": "Write", "status": "in_progress"},
                {"id": "3", "text": "Test", "status": "pending", "blocked_by": ["2"]},
            ]}))
            .unwrap();
        board
    }

    fn apply(text: &str) -> Result<(Board, String), EditError> {
        BoardEdit::parse(text)?.apply(&board())
    }

    fn ids(board: &Board) -> Vec<&str> {
        board.items().iter().map(|item| item.id.as_str()).collect()
    }

    #[test]
    fn each_command_parses() {
        assert_eq!(
            BoardEdit::parse("add  Write the docs "),
            Ok(BoardEdit::Add { text: "Write the docs".into() })
        );
        assert_eq!(BoardEdit::parse("done #2"), Ok(BoardEdit::Done { id: "2".into() }));
        assert_eq!(BoardEdit::parse("UNDO 2"), Ok(BoardEdit::Undo { id: "2".into() }));
        assert_eq!(BoardEdit::parse("rm 3"), Ok(BoardEdit::Remove { id: "3".into() }));
        assert_eq!(
            BoardEdit::parse("edit 2 Write it well"),
            Ok(BoardEdit::Edit { id: "2".into(), text: "Write it well".into() })
        );
        assert_eq!(BoardEdit::parse("move 3 1"), Ok(BoardEdit::Move { id: "3".into(), to: 1 }));
    }

    #[test]
    fn bad_commands_say_what_is_missing() {
        assert_eq!(BoardEdit::parse(""), Err(EditError::Usage));
        assert_eq!(BoardEdit::parse("finish 2"), Err(EditError::Usage));
        assert!(
            BoardEdit::parse("add   ").unwrap_err().to_string().contains("needs the item's text")
        );
        assert!(BoardEdit::parse("done").unwrap_err().to_string().contains("needs an item id"));
        assert!(
            BoardEdit::parse("edit 2").unwrap_err().to_string().contains("needs the item's text")
        );
        assert!(BoardEdit::parse("move 2").unwrap_err().to_string().contains("needs a position"));
        for bad in ["0", "-1", "two", "1.5"] {
            assert_eq!(
                BoardEdit::parse(&format!("move 2 {bad}")),
                Err(EditError::BadPosition(bad.into()))
            );
        }
    }

    #[test]
    fn add_appends_a_pending_item_with_the_next_free_id() {
        let (board, said) = apply("add Ship it").unwrap();
        assert_eq!(ids(&board), ["1", "2", "3", "4"]);
        assert_eq!(board.items()[3].status, Status::Pending);
        assert_eq!(said, "added #4: Ship it");
        let odd = Board::from_items(vec![BoardItem {
            id: u64::MAX.to_string(),
            text: "far".into(),
            status: Status::Pending,
            active_form: None,
            blocked_by: Vec::new(),
            ..BoardItem::default()
        }]);
        let (board, _) = BoardEdit::Add { text: "near".into() }.apply(&odd).unwrap();
        assert_eq!(board.items()[1].id, "1");
        // A gap is not filled: the new item's number says it came last.
        let (gapped, _) = apply("remove 2").unwrap();
        let (board, said) = BoardEdit::Add { text: "last".into() }.apply(&gapped).unwrap();
        assert_eq!(ids(&board), ["1", "3", "4"]);
        assert_eq!(said, "added #4: last");
    }

    #[test]
    fn done_and_undo_go_through_the_board_rules() {
        let (board, said) = apply("done 2").unwrap();
        assert_eq!(board.get("2").unwrap().status, Status::Completed);
        assert_eq!(said, "marked #2 completed");
        // #3 waits for #2: finishing it first breaks the dependency rule.
        assert_eq!(
            apply("done 3").unwrap_err().to_string(),
            "Item 3: cannot be completed while blocked by #2"
        );
        let (board, said) = apply("undo 1").unwrap();
        assert_eq!(board.get("1").unwrap().status, Status::Pending);
        assert_eq!(said, "marked #1 pending");
        assert_eq!(apply("undo 3").unwrap_err().to_string(), "#3 is already pending");
    }

    #[test]
    fn rm_takes_the_item_out_of_every_blocked_by() {
        let (board, said) = apply("rm 2").unwrap();
        assert_eq!(ids(&board), ["1", "3"]);
        assert!(board.get("3").unwrap().blocked_by.is_empty());
        assert_eq!(said, "removed #2: Write");
    }

    #[test]
    fn edit_and_move_change_text_and_order() {
        let (board, said) = apply("edit 3 Test everything").unwrap();
        assert_eq!(board.get("3").unwrap().text, "Test everything");
        assert_eq!(said, "changed #3 from \"Test\" to \"Test everything\"");
        let (board, said) = apply("move 3 1").unwrap();
        assert_eq!(ids(&board), ["3", "1", "2"]);
        assert_eq!(said, "moved #3 to position 1");
        let (board, _) = apply("move 1 3").unwrap();
        assert_eq!(ids(&board), ["2", "3", "1"]);
    }

    #[test]
    fn a_missing_item_or_a_position_past_the_end_is_an_error_and_changes_nothing() {
        let before = board();
        for (command, message) in [
            ("done 9", "there is no item #9 on the board"),
            ("rm x", "there is no item #x on the board"),
            ("edit 7 text", "there is no item #7 on the board"),
            ("move 2 4", "#2 cannot move to position 4: the board has 3 items"),
        ] {
            let edit = BoardEdit::parse(command).unwrap();
            assert_eq!(edit.apply(&before).unwrap_err().to_string(), message, "{command}");
        }
        assert_eq!(before, board());
    }

    #[test]
    fn a_full_board_takes_no_more() {
        let items: Vec<BoardItem> = (1..=super::super::MAX_ITEMS)
            .map(|i| BoardItem {
                id: i.to_string(),
                text: "step".into(),
                status: Status::Pending,
                active_form: None,
                blocked_by: Vec::new(),
                ..BoardItem::default()
            })
            .collect();
        let add = |items: &[BoardItem]| {
            BoardEdit::Add { text: "one more".into() }.apply(&Board::from_items(items.to_vec()))
        };
        let (last, _) = add(&items[1..]).unwrap();
        assert_eq!(last.items().len(), super::super::MAX_ITEMS, "the 20th item fits");
        let err = add(&items).unwrap_err();
        assert_eq!(err.to_string(), "Max 20 todos allowed");
    }
}
