//! What the program rules share: the scope a point of the script knows, what a command reads on
//! stdin, and the simple command being judged ([`Call`]), which checks the command lines it runs
//! through [`Scripts`] — implemented by the walker — so the rules never import the walker back.

use super::Verdict;
use super::paths::{self, Cwd, Places};
use super::words::{Arg, MAX_ALTERNATIVES, Vars};

/// Checks the command lines a command runs (`bash -c`, `eval`, `$(…)`), against these places.
pub trait Scripts {
    fn places(&self) -> &Places;
    /// Checks `script`, run within `scope`, one level deeper.
    fn nested(&self, script: &str, scope: &mut Scope) -> Verdict;
}

/// What a checked command hands the next one of a pipeline (what it prints, as that one's
/// [`Stdin`]); `Err` carries why it is refused, written for the model to read.
pub type Piped = Result<Stdin, String>;

/// What a command reads on stdin, as far as keel can see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stdin {
    /// The null device: nothing.
    Null,
    /// Text keel can read: `echo …`, a here-document, a here-string.
    Visible(String),
    /// A file by name, like a script given as an argument.
    File,
    /// Paths inside these folders (`find`, `ls`).
    PathsUnder(Vec<Arg>),
    /// Output keel cannot see, from the named command.
    Unseen(String),
}

/// What a point of the script knows.
#[derive(Debug, Clone)]
pub struct Scope {
    pub vars: Vars,
    pub cwds: Vec<Cwd>,
    /// Whether this point runs whenever the script does (not behind `if`, `||`, a loop).
    pub certain: bool,
    pub stdin: Stdin,
    /// The function whose body this is, to recognise a fork bomb.
    pub function: Option<String>,
}

impl Scope {
    pub fn new(cwd: Cwd) -> Self {
        Self {
            vars: Vars::default(),
            cwds: vec![cwd],
            certain: true,
            stdin: Stdin::Null,
            function: None,
        }
    }

    /// Moves to `cwds` (or adds them as possible, when this point may not run).
    pub fn change_dir(&mut self, cwds: Vec<Cwd>) {
        if self.certain {
            self.cwds = cwds;
        } else {
            for cwd in cwds {
                if !self.cwds.contains(&cwd) {
                    self.cwds.push(cwd);
                }
            }
        }
        if self.cwds.len() > MAX_ALTERNATIVES {
            // More places than keel follows: judging only some of them would be a guess.
            self.cwds = vec![Cwd::Unknown];
        }
    }

    /// The same point, in a branch that may not run.
    pub fn uncertain(&self) -> Self {
        Self { certain: false, ..self.clone() }
    }
}

/// One simple command, as the rules see it.
pub struct Call<'c> {
    pub checker: &'c dyn Scripts,
    pub scope: &'c mut Scope,
    pub stdin: Stdin,
}

impl Call<'_> {
    /// Checks a command line that this one runs.
    pub fn nested(&mut self, script: &str) -> Verdict {
        let mut inner = self.scope.clone();
        inner.stdin = Stdin::Null;
        self.checker.nested(script, &mut inner)
    }

    /// Why `arg` names a place that must not be touched, if it does.
    pub fn precious(&self, arg: &Arg) -> Option<String> {
        paths::precious(arg, &self.scope.cwds, self.checker.places())
    }

    /// What running `what` of code keel cannot see reads as a reason.
    pub fn stdin_code(
        &mut self,
        who: &str,
        check: impl FnOnce(&mut Self, &str) -> Verdict,
    ) -> Verdict {
        match self.stdin.clone() {
            Stdin::Null | Stdin::File => Ok(()),
            Stdin::Visible(text) => check(self, &text),
            Stdin::Unseen(from) => Err(format!(
                "`{who}` would run what {from} gives it, which keel cannot see before it runs"
            )),
            Stdin::PathsUnder(_) => Err(format!("`{who}` would run a list of file names")),
        }
    }
}

/// Whether writing to `arg` would harm the machine, and why.
pub fn harmful_write(arg: &Arg, scope: &Scope, places: &Places) -> Option<String> {
    paths::special_write(arg, &scope.cwds, places)
}

/// The words after the options (`--` ends the options; `-` is an operand).
pub fn operands(args: &[Arg]) -> Vec<&Arg> {
    let mut out = Vec::new();
    let mut options_done = false;
    for arg in args {
        let text = arg.text().unwrap_or_default();
        if options_done || !text.starts_with('-') || text == "-" {
            out.push(arg);
        } else if text == "--" {
            options_done = true;
        }
    }
    out
}
