//! Reading a trusted program's options as it will read them: GNU `getopt_long`'s rules, checked
//! against an allow-list.
//!
//! What a program does with a word depends on how its option parser reads it, not on how it
//! looks: `sort --outp=x` is `--output=x` (GNU `getopt_long` takes any unambiguous prefix of a
//! long option), `sort -uox` is `-u -o x` (short options bundle, and one that takes a value takes
//! the rest of the word), and after `--` nothing is an option. So a program whose options matter
//! is read word by word with its [`Options`]: every option must resolve to one the table allows;
//! one it does not know, one that could be several, and one that resolves to a refused option are
//! refused, with the name it resolved to.
//!
//! One liberty is taken, always toward refusing: a value given as the next word (`sort -k 2`) is
//! not skipped but read like any other word. A table that mistook an option's value for optional
//! or required then cannot let a word through that the program reads as an option. The same word
//! after an option that may take it cannot be the `--` that ends the options either
//! (`git log --grep -- --output=x` greps for `--`, then writes).

use super::Verdict;

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    Nothing,
    /// A value it must have: the rest of the word (`-k2`, `--key=2`) or the next word.
    Value,
    /// A value it may have, only within the word (`--check=quiet`, `-M50%`).
    OptionalValue,
}

/// What one program accepts, as its parser reads it.
#[derive(Debug)]
pub struct Options {
    /// The program (and subcommand) as messages name it.
    pub program: &'static str,
    /// Short options allowed that take no value.
    pub flags: &'static str,
    /// Short options allowed that take a value.
    pub with_value: &'static str,
    /// Short options allowed that may take a value within the word.
    pub optional_value: &'static str,
    /// Long options allowed, without their `--`, a word each in groups: `NAME` takes no value,
    /// `NAME=` a value, `NAME=?` a value only within the word (`getopt_long`'s `no_argument`,
    /// `required_argument`, `optional_argument`).
    pub long: &'static [&'static str],
    /// Short options refused: they write files or run another program.
    pub refused_short: &'static str,
    /// Long options refused, listed so that a prefix of one is known for what it is.
    pub refused_long: &'static [&'static str],
    /// The parser takes unambiguous prefixes of long options (GNU `getopt_long`).
    pub abbreviations: bool,
    /// `-NUMBER` is an option (`git log -5`).
    pub numbers: bool,
}

/// Why an option writes, for every refusal.
const WRITES: &str = "writes files or runs another program";

impl Options {
    /// `Ok` when every word of `args` (after the program's name) is an allowed option, a value of
    /// one, or an operand. A word keel cannot know (`None`) is refused where it could be an
    /// option.
    pub fn check(&self, args: &[Option<String>]) -> Verdict {
        let mut operands_only = false;
        let mut value_may_follow = false;
        for arg in args {
            if operands_only {
                continue;
            }
            let Some(arg) = arg else {
                return Err(format!(
                    "an argument of `{}` is computed, so keel cannot tell its options",
                    self.program
                ));
            };
            let after_option = std::mem::take(&mut value_may_follow);
            if arg == "--" {
                operands_only = !after_option;
                continue;
            }
            if arg == "-" || !arg.starts_with('-') {
                continue;
            }
            value_may_follow = match arg.strip_prefix("--") {
                Some(long) => self.long_option(arg, long)?,
                None => self.short_options(arg)?,
            };
        }
        Ok(())
    }

    /// Checks `--NAME[=VALUE]`; says whether the next word may be its value.
    fn long_option(&self, arg: &str, long: &str) -> Result<bool, String> {
        let (name, value) = match long.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (long, None),
        };
        let allowed = self.long.iter().flat_map(|group| group.split_whitespace());
        let allowed = allowed.map(|word| {
            let (option, takes) = match word.split_once('=') {
                Some((option, "?")) => (option, Takes::OptionalValue),
                Some((option, _)) => (option, Takes::Value),
                None => (word, Takes::Nothing),
            };
            (option, Some(takes))
        });
        let refused = self.refused_long.iter().map(|option| (*option, None));
        let known: Vec<(&str, Option<Takes>)> = allowed.chain(refused).collect();
        let exact = known.iter().find(|(option, _)| *option == name);
        let matched = match exact {
            Some(found) => *found,
            None if self.abbreviations && !name.is_empty() => {
                let prefixed: Vec<&(&str, Option<Takes>)> =
                    known.iter().filter(|(option, _)| option.starts_with(name)).collect();
                match prefixed.as_slice() {
                    [one] => **one,
                    [] => return Err(self.unknown(arg)),
                    many => {
                        let names: Vec<String> =
                            many.iter().map(|(option, _)| format!("--{option}")).collect();
                        return Err(format!(
                            "`{} {arg}` could be any of {}, so keel cannot tell what it does",
                            self.program,
                            names.join(", ")
                        ));
                    }
                }
            }
            None => return Err(self.unknown(arg)),
        };
        match matched {
            (option, None) if option == name => Err(format!("`{} {arg}` {WRITES}", self.program)),
            (option, None) => {
                Err(format!("`{} {arg}` is `--{option}`, which {WRITES}", self.program))
            }
            (_, Some(takes)) => Ok(takes == Takes::Value && value.is_none()),
        }
    }

    /// Checks a word of bundled short options (`-uok`); says whether the next word may be the
    /// value of its last one.
    fn short_options(&self, arg: &str) -> Result<bool, String> {
        let letters = &arg[1..];
        if self.numbers && letters.bytes().all(|byte| byte.is_ascii_digit()) {
            return Ok(false);
        }
        for (at, letter) in letters.char_indices() {
            if self.refused_short.contains(letter) {
                let shown = if at == 0 { arg.to_owned() } else { format!("-{letter}") };
                let whole = if at == 0 { String::new() } else { format!(" (in `{arg}`)") };
                return Err(format!("`{} {shown}`{whole} {WRITES}", self.program));
            }
            if self.flags.contains(letter) {
                continue;
            }
            if self.with_value.contains(letter) {
                return Ok(at + letter.len_utf8() == letters.len());
            }
            if self.optional_value.contains(letter) {
                return Ok(false);
            }
            return Err(self.unknown(&format!("-{letter}")));
        }
        Ok(false)
    }

    fn unknown(&self, option: &str) -> String {
        format!(
            "`{} {option}` is not an option keel knows to only read, and it lets only those through",
            self.program
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: Options = Options {
        program: "tool",
        flags: "ab",
        with_value: "k",
        optional_value: "M",
        long: &["alpha key= check=? compare"],
        refused_short: "o",
        refused_long: &["output", "compress"],
        abbreviations: true,
        numbers: false,
    };

    fn check(words: &[&str]) -> Verdict {
        let args: Vec<Option<String>> = words.iter().map(|word| Some((*word).to_owned())).collect();
        SAMPLE.check(&args)
    }

    #[test]
    fn prefixes_resolve_as_getopt_long_resolves_them() {
        assert_eq!(check(&["--al", "--ke=1", "--che=quiet", "--compa"]), Ok(()));
        let err = check(&["--outp=x"]).unwrap_err();
        assert!(err.contains("`tool --outp=x` is `--output`, which writes"), "{err}");
        let err = check(&["--compr=sh"]).unwrap_err();
        assert!(err.contains("is `--compress`"), "{err}");
        let err = check(&["--comp"]).unwrap_err();
        assert!(err.contains("could be any of --compare, --compress"), "{err}");
        assert!(check(&["--output"]).unwrap_err().contains("`tool --output` writes"));
        assert!(check(&["--beta"]).unwrap_err().contains("not an option keel knows"));
        assert!(check(&["--"]).is_ok() && check(&["--="]).is_err());
    }

    #[test]
    fn bundled_short_options_and_their_values_are_read_in_place() {
        assert_eq!(check(&["-ab", "-ko", "-k", "2", "-Mo", "file"]), Ok(()));
        let err = check(&["-abo", "x"]).unwrap_err();
        assert!(err.contains("`tool -o` (in `-abo`) writes"), "{err}");
        assert!(check(&["-o", "x"]).unwrap_err().contains("`tool -o` writes"));
        assert!(check(&["-z"]).unwrap_err().contains("`tool -z` is not an option"));
        assert!(check(&["-5"]).is_err(), "numbers are options only where the table says");
    }

    #[test]
    fn a_double_dash_ends_the_options_unless_it_may_be_a_value() {
        assert_eq!(check(&["--", "-o", "--output"]), Ok(()));
        assert!(check(&["-k", "--", "-o"]).is_err());
        assert!(check(&["--key", "--", "--output=x"]).is_err());
        assert_eq!(check(&["--key=1", "--", "-o"]), Ok(()));
        // A value given as the next word is read as a word of its own.
        assert!(check(&["-k", "-o"]).is_err());
        assert_eq!(check(&["-", "file"]), Ok(()));
    }

    #[test]
    fn a_computed_word_is_refused_until_the_options_end() {
        assert!(SAMPLE.check(&[None]).unwrap_err().contains("computed"));
        assert_eq!(SAMPLE.check(&[Some("--".into()), None]), Ok(()));
    }
}
