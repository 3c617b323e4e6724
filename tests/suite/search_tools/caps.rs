//! The caps on an answer: long lines cut, the byte cap, and `glob`'s hundred files, each saying
//! where to go on.

use super::*;

#[tokio::test]
async fn a_long_line_is_cut_at_the_width_saying_how_much_more_there_was() {
    let (dir, tools) = workspace();
    let long = format!("needle {}", "x".repeat(5000));
    put(dir.path(), "min.js", &format!("{long}\n"), 0);
    let outcome = grep(&tools, json!({"pattern": "needle"})).await;
    let line = results(&outcome)[0];
    let text = line.strip_prefix("min.js:1:").unwrap();
    assert!(text.ends_with(&format!("…[+{} chars]", long.len() - MAX_LINE_CHARS)), "{line}");
    assert_eq!(text.chars().take_while(|c| *c != '…').count(), MAX_LINE_CHARS);
}

#[tokio::test]
async fn an_answer_stops_at_its_byte_cap_and_says_where_to_go_on() {
    let (dir, tools) = workspace();
    let group = format!(
        "needle {}\n{}\n{}\n",
        "y".repeat(MAX_LINE_CHARS),
        "z".repeat(400),
        "z".repeat(400)
    );
    put(dir.path(), "wide.txt", &group.repeat(150), 0);
    let outcome = grep(&tools, json!({"pattern": "needle", "context": 2})).await;
    assert!(outcome.for_model.len() <= MAX_ANSWER_BYTES + 200, "{}", outcome.for_model.len());
    let shown = results(&outcome).iter().filter(|line| line.starts_with("wide.txt:")).count();
    assert!(shown < MAX_RESULTS as usize, "{shown}");
    assert!(
        last_line(&outcome).ends_with(&format!("call grep again with offset: {shown}.]")),
        "{}",
        last_line(&outcome)
    );
}

#[tokio::test]
async fn glob_caps_at_a_hundred_files_and_pages_on() {
    let (dir, tools) = workspace();
    for n in 0..130 {
        put(dir.path(), &format!("gen/f{n:03}.rs"), "", 1000 - n);
    }
    let first = glob(&tools, json!({"pattern": "**/*.rs"})).await;
    let shown = results(&first);
    assert_eq!((shown.len(), shown[0]), (MAX_RESULTS as usize, "gen/f129.rs"));
    assert_eq!(
        last_line(&first),
        "[130 files; shown: 1–100, newest files first. For more, call glob again with offset: \
         100.]"
    );
    let rest = glob(&tools, json!({"pattern": "**/*.rs", "offset": 100})).await;
    assert_eq!((results(&rest).len(), results(&rest)[29]), (30, "gen/f000.rs"));
    let few = glob(&tools, json!({"pattern": "*.rs", "limit": 2, "offset": 1})).await;
    assert_eq!(results(&few), ["gen/f128.rs", "gen/f127.rs"]);
}
