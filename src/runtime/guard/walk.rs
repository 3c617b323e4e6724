//! Walks a parsed command line the way bash will run it: lists, pipelines, compound commands and
//! functions, keeping track of what the command itself changes — variables, the working folder
//! after `cd` — and of what each command reads on stdin, and hands every simple command, with
//! its words expanded, to the program rules.

use super::call::{Piped, Scope, Scripts, Stdin, harmful_write};
use super::paths::Places;
use super::words::{Arg, Value};
use super::{Verdict, programs};
use brush_parser::ParserOptions;
use brush_parser::ast;
use std::cell::Cell;

/// How deep substitutions, `bash -c` and `eval` may nest before the command counts as unreadable.
const MAX_NESTING: usize = 12;

impl Scripts for Checker<'_> {
    fn places(&self) -> &Places {
        self.places
    }

    fn nested(&self, script: &str, scope: &mut Scope) -> Verdict {
        Checker::nested(self, script, scope)
    }
}

/// Checks scripts against the places that matter.
pub struct Checker<'a> {
    pub places: &'a Places,
    pub depth: usize,
    /// How many words brace expansions have added so far, in the whole command.
    pub brace_words: &'a Cell<usize>,
}

impl Checker<'_> {
    /// Parses and checks `text`, run within `scope`.
    pub fn script(&self, text: &str, scope: &mut Scope) -> Verdict {
        if self.depth > MAX_NESTING {
            return Err(
                "the command nests substitutions and inner shells too deeply to check".into()
            );
        }
        let mut parser = brush_parser::Parser::new(
            std::io::Cursor::new(text.as_bytes()),
            &ParserOptions::default(),
        );
        let program = parser.parse_program().map_err(|err| {
            format!(
                "keel cannot read this command line as bash would ({err}), so it cannot check it"
            )
        })?;
        for list in &program.complete_commands {
            self.list(list, scope)?;
        }
        Ok(())
    }

    /// Checks a script that runs inside this one (`$(…)`, `bash -c`, `eval`).
    pub fn nested(&self, text: &str, scope: &mut Scope) -> Verdict {
        Checker { places: self.places, depth: self.depth + 1, brace_words: self.brace_words }
            .script(text, scope)
    }

    fn list(&self, list: &ast::CompoundList, scope: &mut Scope) -> Verdict {
        for ast::CompoundListItem(and_or, separator) in &list.0 {
            let background = matches!(separator, ast::SeparatorOperator::Async);
            let certain = scope.certain;
            self.pipeline(&and_or.first, background, scope)?;
            scope.certain = false;
            for next in &and_or.additional {
                let (ast::AndOr::And(pipeline) | ast::AndOr::Or(pipeline)) = next;
                self.pipeline(pipeline, background, scope)?;
            }
            scope.certain = certain;
        }
        Ok(())
    }

    fn pipeline(&self, pipeline: &ast::Pipeline, background: bool, scope: &mut Scope) -> Verdict {
        if let [only] = pipeline.seq.as_slice() {
            self.command(only, background, scope)?;
            return Ok(());
        }
        // Each part runs in a subshell: what it changes stays there.
        let mut stdin = scope.stdin.clone();
        for command in &pipeline.seq {
            let mut part = scope.clone();
            part.stdin = stdin;
            stdin = self.command(command, true, &mut part)?;
        }
        Ok(())
    }

    /// Checks one command; returns what it prints, for the next command of a pipeline.
    fn command(&self, command: &ast::Command, concurrent: bool, scope: &mut Scope) -> Piped {
        match command {
            ast::Command::Simple(simple) => self.simple(simple, concurrent, scope),
            ast::Command::Compound(compound, redirects) => {
                for redirect in redirects.iter().flat_map(|list| &list.0) {
                    if let Some(stdin) = self.redirect(redirect, scope)? {
                        scope.stdin = stdin;
                    }
                }
                self.compound(compound, concurrent, scope)?;
                Ok(Stdin::Unseen("a compound command".into()))
            }
            ast::Command::Function(definition) => {
                let mut body = scope.uncertain();
                body.vars.in_function = true;
                body.function = Some(definition.fname.value.clone());
                self.compound(&definition.body.0, false, &mut body)?;
                Ok(Stdin::Null)
            }
            ast::Command::ExtendedTest(test, _) => {
                self.test(&test.expr, scope)?;
                Ok(Stdin::Null)
            }
        }
    }

    fn compound(
        &self,
        compound: &ast::CompoundCommand,
        concurrent: bool,
        scope: &mut Scope,
    ) -> Verdict {
        use ast::CompoundCommand as C;
        match compound {
            C::BraceGroup(group) => self.list(&group.list, scope),
            C::Subshell(subshell) => self.list(&subshell.list, &mut scope.clone()),
            C::ForClause(clause) => {
                let mut values = Vec::new();
                for word in clause.values.iter().flatten() {
                    values.extend(self.expand(word, scope)?);
                }
                let known: Option<Vec<String>> = values.iter().map(Arg::text).collect();
                let mut body = scope.uncertain();
                body.vars.assign(
                    &clause.variable_name,
                    known.map_or(Value::Unknown, Value::Known),
                    false,
                );
                self.list(&clause.body.list, &mut body)?;
                self.merge(scope, &body);
                Ok(())
            }
            C::ArithmeticForClause(clause) => {
                for expr in
                    [&clause.initializer, &clause.condition, &clause.updater].into_iter().flatten()
                {
                    self.text(&expr.value, scope)?;
                }
                self.uncertain_list(&clause.body.list, scope)
            }
            C::CaseClause(clause) => {
                self.expand(&clause.value, scope)?;
                for case in &clause.cases {
                    if let Some(body) = &case.cmd {
                        self.uncertain_list(body, scope)?;
                    }
                }
                Ok(())
            }
            C::IfClause(clause) => {
                self.list(&clause.condition, scope)?;
                self.uncertain_list(&clause.then, scope)?;
                for branch in clause.elses.iter().flatten() {
                    if let Some(condition) = &branch.condition {
                        self.uncertain_list(condition, scope)?;
                    }
                    self.uncertain_list(&branch.body, scope)?;
                }
                Ok(())
            }
            C::WhileClause(clause) | C::UntilClause(clause) => {
                self.list(&clause.0, scope)?;
                self.uncertain_list(&clause.1.list, scope)
            }
            C::Coprocess(coprocess) => self.command(&coprocess.body, concurrent, scope).map(drop),
            C::Arithmetic(arithmetic) => self.text(&arithmetic.expr.value, scope),
        }
    }

    fn uncertain_list(&self, list: &ast::CompoundList, scope: &mut Scope) -> Verdict {
        let mut branch = scope.uncertain();
        self.list(list, &mut branch)?;
        self.merge(scope, &branch);
        Ok(())
    }

    /// What a branch that may or may not run leaves behind: its values become possible too.
    fn merge(&self, scope: &mut Scope, branch: &Scope) {
        scope.vars.merge(&branch.vars);
        let certain = scope.certain;
        scope.certain = false;
        scope.change_dir(branch.cwds.clone());
        scope.certain = certain;
    }

    fn test(&self, expr: &ast::ExtendedTestExpr, scope: &Scope) -> Verdict {
        use ast::ExtendedTestExpr as T;
        match expr {
            T::And(a, b) | T::Or(a, b) => {
                self.test(a, scope)?;
                self.test(b, scope)
            }
            T::Not(inner) | T::Parenthesized(inner) => self.test(inner, scope),
            T::UnaryTest(_, word) => self.expand(word, scope).map(drop),
            T::BinaryTest(_, left, right) => {
                self.expand(left, scope)?;
                self.expand(right, scope).map(drop)
            }
        }
    }

    /// Checks where a redirection writes; returns the stdin it gives, if it gives one.
    fn redirect(&self, redirect: &ast::IoRedirect, scope: &Scope) -> Result<Option<Stdin>, String> {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T, IoRedirect as R};
        let reads_stdin = |fd: &Option<ast::IoFd>| fd.is_none_or(|fd| fd == 0);
        match redirect {
            R::File(fd, kind, target) => match target {
                T::Filename(word) | T::Duplicate(word) => {
                    let writes = !matches!(kind, K::Read | K::DuplicateInput);
                    for arg in self.expand(word, scope)? {
                        if writes && let Some(reason) = harmful_write(&arg, scope, self.places) {
                            return Err(format!(
                                "redirecting output to `{}` is refused: {reason}",
                                arg.source
                            ));
                        }
                    }
                    Ok((matches!(kind, K::Read) && reads_stdin(fd)).then_some(Stdin::File))
                }
                T::Fd(_) => Ok(None),
                T::ProcessSubstitution(_, subshell) => {
                    self.list(&subshell.list, &mut scope.clone())?;
                    Ok(Some(Stdin::Unseen("a process substitution".into())))
                }
            },
            R::OutputAndError(word, _) => {
                for arg in self.expand(word, scope)? {
                    if let Some(reason) = harmful_write(&arg, scope, self.places) {
                        return Err(format!(
                            "redirecting output to `{}` is refused: {reason}",
                            arg.source
                        ));
                    }
                }
                Ok(None)
            }
            R::HereDocument(fd, doc) => {
                if doc.requires_expansion {
                    // Its substitutions run; a value keel cannot know makes the text unknown.
                    let pieces = brush_parser::word::parse_heredoc(
                        &doc.doc.value,
                        &ParserOptions::default(),
                    )
                    .map(|pieces| pieces.into_iter().map(|p| p.piece).collect::<Vec<_>>())
                    .unwrap_or_default();
                    let expanded = self.pieces(&pieces, "a here-document", scope)?;
                    if expanded.iter().any(Arg::has_unknown) {
                        return Ok(reads_stdin(fd).then(|| Stdin::Unseen("a here-document".into())));
                    }
                }
                Ok(reads_stdin(fd).then(|| Stdin::Visible(doc.doc.value.clone())))
            }
            R::HereString(fd, word) => {
                let args = self.expand(word, scope)?;
                let text: Option<Vec<String>> = args.iter().map(Arg::text).collect();
                Ok(reads_stdin(fd).then(|| match text {
                    Some(text) => Stdin::Visible(text.join(" ")),
                    None => Stdin::Unseen("a here-string".into()),
                }))
            }
        }
    }

    fn simple(&self, simple: &ast::SimpleCommand, concurrent: bool, scope: &mut Scope) -> Piped {
        use ast::CommandPrefixOrSuffixItem as Item;
        let prefix = simple.prefix.iter().flat_map(|prefix| &prefix.0);
        let suffix = simple.suffix.iter().flat_map(|suffix| &suffix.0);
        let mut words = Vec::new();
        let mut assignments = Vec::new();
        let mut stdin = scope.stdin.clone();
        let name = simple.word_or_name.iter().map(|word| Item::Word(word.clone()));
        let prefix: Vec<Item> = prefix.cloned().collect();
        let rest: Vec<Item> = name.chain(suffix.cloned()).collect();
        for (in_prefix, item) in
            prefix.iter().map(|i| (true, i)).chain(rest.iter().map(|i| (false, i)))
        {
            match item {
                Item::IoRedirect(redirect) => {
                    if let Some(given) = self.redirect(redirect, scope)? {
                        stdin = given;
                    }
                }
                Item::Word(word) => words.extend(self.expand(word, scope)?),
                Item::AssignmentWord(assignment, word) => {
                    let value = self.assignment_value(&assignment.value, scope)?;
                    if in_prefix {
                        if let ast::AssignmentName::VariableName(name) = &assignment.name {
                            assignments.push((name.clone(), value));
                        }
                    } else {
                        words.extend(self.expand(word, scope)?);
                    }
                }
                Item::ProcessSubstitution(_, subshell) => {
                    self.list(&subshell.list, &mut scope.clone())?;
                    words.push(Arg::unknown("<(…)"));
                }
            }
        }
        if words.is_empty() {
            for (name, value) in assignments {
                scope.vars.assign(&name, value, scope.certain);
            }
            return Ok(Stdin::Null);
        }
        if let Some(function) = &scope.function
            && concurrent
            && words.first().is_some_and(|word| word.is(function))
        {
            return Err(format!(
                "`{function}` calls itself in a pipe or in the background: a fork bomb, which would \
                 exhaust the machine's processes"
            ));
        }
        programs::run(self, words, stdin, scope)
    }
}
