//! Errors that say what was wrong: a bad regex, wrong and unknown arguments, an interrupted search.

use super::*;

#[tokio::test]
async fn a_bad_regex_is_an_error_that_names_the_problem() {
    let (dir, tools) = workspace();
    project(dir.path());
    let outcome = grep(&tools, json!({"pattern": "fn main("})).await;
    assert!(outcome.is_error);
    assert!(outcome.for_model.starts_with("Invalid regex `fn main(`:"), "{}", outcome.for_model);
    assert!(outcome.for_model.contains("unclosed group"), "{}", outcome.for_model);
    assert!(outcome.for_model.contains("escape"), "says how: {}", outcome.for_model);
    assert_eq!(outcome.tally, None);
}

#[tokio::test]
async fn wrong_and_unknown_arguments_are_errors_that_say_which() {
    let (_dir, tools) = workspace();
    for (name, input, expected) in [
        ("grep", json!({}), "missing required argument `pattern` (a string)"),
        (
            "grep",
            json!({"pattern": "x", "ignore_case": "yes"}),
            "`ignore_case` must be true or false",
        ),
        ("grep", json!({"pattern": "x", "-i": true}), "unknown field `-i`"),
        ("glob", json!({"pattern": 3}), "argument `pattern` must be a string"),
        ("glob", json!({"pattern": "*", "offset": -1}), "`offset` must be a whole number"),
    ] {
        let outcome = run(&tools, name, input.clone()).await;
        assert!(outcome.is_error, "{input}");
        assert!(outcome.for_model.contains(expected), "{input}: {}", outcome.for_model);
    }
}

#[tokio::test]
async fn an_interrupted_search_stops_and_says_so() {
    let (dir, tools) = workspace();
    project(dir.path());
    let context = ctx();
    context.cancel.cancel();
    for name in ["grep", "glob"] {
        let input = json!({"pattern": "needle"});
        let outcome = tools.run(name, &input, &context).await;
        assert!(outcome.is_error, "{name}");
        assert_eq!(outcome.for_model, "The search was interrupted.");
    }
}
