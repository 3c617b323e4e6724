//! The tool registry — its specs, unknown tools, wrong arguments, one-line summaries — and that no
//! input makes a tool panic, against a real temporary workspace. `bash` has its own tests
//! (`tools_bash.rs`), and so do the file tools (`file_tools.rs`).

use crate::support::files::{ctx, run, workspace};
use keel::runtime::guard;
use keel::tools::ToolSet;
use keel::tools::call::summary;
use keel::tools::mcp::Hub;
use keel::tools::preview::preview_named;
use serde_json::{Value, json};

mod registry {
    use super::*;

    #[test]
    fn specs_name_the_tools_with_object_schemas() {
        let specs = ToolSet::new(false, Hub::default()).specs();
        let names: Vec<&str> = specs.iter().map(|spec| spec.name.as_str()).collect();
        assert_eq!(names, ["bash", "read_file", "write_file", "edit_file", "grep", "glob", "task"]);
        for spec in &specs {
            assert_eq!(spec.input_schema["type"], "object");
            assert!(spec.description.len() > 40, "{}", spec.name);
            for required in spec.input_schema["required"].as_array().unwrap() {
                let name = required.as_str().unwrap();
                assert!(spec.input_schema["properties"].get(name).is_some());
            }
        }
    }

    #[tokio::test]
    async fn unknown_tool_lists_the_available_ones() {
        let (_dir, tools) = workspace();
        let outcome = run(&tools, "delete_everything", json!({})).await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("delete_everything"));
        assert!(
            outcome.for_model.contains("bash, read_file, write_file, edit_file, grep, glob"),
            "{}",
            outcome.for_model
        );
    }

    #[tokio::test]
    async fn wrong_arguments_say_which_and_what_was_expected() {
        let (_dir, tools) = workspace();
        let cases = [
            (
                "bash",
                json!({"command": 5}),
                "argument `command` must be a string, got the number 5",
            ),
            ("bash", json!({}), "missing required argument `command` (a string)"),
            ("bash", json!({"command": null}), "missing required argument `command`"),
            (
                "bash",
                json!({"command": "ls", "timeout_ms": "10"}),
                "argument `timeout_ms` must be a whole number ≥ 0, got the string \"10\"",
            ),
            (
                "bash",
                json!({"command": "ls", "timeout_ms": -1}),
                "`timeout_ms` must be a whole number",
            ),
            (
                "read_file",
                json!({"path": "a", "offset": 0}),
                "argument `offset` must be a whole number ≥ 1, got the number 0",
            ),
            (
                "read_file",
                json!({"path": "a", "limit": 1.5}),
                "argument `limit` must be a whole number ≥ 1",
            ),
            ("read_file", json!(["a.txt"]), "takes a JSON object of arguments, got an array"),
            ("write_file", json!("a.txt"), "got the string \"a.txt\""),
            ("write_file", json!(null), "got null"),
            ("write_file", json!({"path": "a"}), "missing required argument `content`"),
            (
                "edit_file",
                json!({"path": "a", "old_text": {"x": 1}, "new_text": "b"}),
                "argument `old_text` must be a string, got an object",
            ),
        ];
        for (name, input, expected) in cases {
            let outcome = run(&tools, name, input.clone()).await;
            assert!(outcome.is_error, "{name} {input}");
            assert!(outcome.for_model.contains(expected), "{name} {input}: {}", outcome.for_model);
        }
    }

    #[tokio::test]
    async fn hostile_shapes_do_not_panic() {
        let (_dir, tools) = workspace();
        let mut deep = json!("bottom");
        for _ in 0..1000 {
            deep = json!([deep]);
        }
        let huge = "é".repeat(1_000_000);
        for name in ["bash", "read_file", "write_file", "edit_file", "grep", "glob", "nope"] {
            for input in [
                json!({"path": deep.clone(), "command": deep.clone()}),
                json!({"path": huge, "old_text": "", "new_text": "", "content": 1e308}),
                json!({"path": "x", "offset": u64::MAX, "limit": u64::MAX}),
                json!({"pattern": huge, "glob": huge, "path": huge}),
                json!(i64::MIN),
            ] {
                let outcome = run(&tools, name, input.clone()).await;
                assert!(outcome.is_error, "{name}");
                let _ = summary(name, &input);
                let _ = preview_named(&tools, name, &input);
            }
        }
    }

    #[test]
    fn summary_is_one_line() {
        assert_eq!(summary("bash", &json!({"command": "cargo test\ncargo fmt"})), "cargo test …");
        assert_eq!(summary("bash", &json!({"command": "ls -la"})), "ls -la");
        assert_eq!(summary("edit_file", &json!({"path": "src/lib.rs"})), "src/lib.rs");
        assert_eq!(summary("read_file", &json!(7)), "read_file");
        assert_eq!(summary("todo", &json!({"items": []})), "0 items, 0 completed");
        let search = json!({"pattern": "TODO", "path": "src/", "glob": "*.rs", "context": 2});
        assert_eq!(summary("grep", &search), "TODO src/ *.rs");
        assert_eq!(summary("glob", &json!({"pattern": "**/*.rs"})), "**/*.rs");
        assert_eq!(summary("glob", &json!({"path": "src"})), "glob");
        assert_eq!(summary("made_up", &json!({"path": "x"})), "made_up");
        let long = "x".repeat(1000);
        assert!(summary("bash", &json!({ "command": long })).chars().count() < 300);
    }
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    const KEYS: &[&str] = &[
        "command",
        "timeout_ms",
        "path",
        "offset",
        "limit",
        "content",
        "old_text",
        "new_text",
        "pattern",
        "glob",
        "context",
        "output",
    ];

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[a-z./ ]{0,12}".prop_map(Value::from),
            any::<String>().prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            let key =
                prop_oneof![proptest::sample::select(KEYS).prop_map(str::to_owned), "[a-z_]{1,8}",];
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::btree_map(key, inner, 0..6)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Decoding any JSON for any tool gives a call or an error, never a panic.
        #[test]
        fn argument_decoding_never_panics(
            name in proptest::sample::select(
                &["bash", "read_file", "write_file", "edit_file", "grep", "glob", "x"][..],
            ),
            input in json_value(),
        ) {
            let _ = keel::tools::registry::describe(name).map(|tool| tool.check_input(&input));
            let _ = summary(name, &input);
        }

        /// The guard reads any text, shell-like or not, without panicking.
        #[test]
        fn guard_never_panics(
            text in prop_oneof![any::<String>(), "[a-z /~$(){}`'\"\\;&|<>=*.:-]{0,60}"],
        ) {
            let _ = guard::check_command(&text);
        }

        /// Running the file tools (bash is left out: it would run random text) on any JSON ends in
        /// an outcome, never a panic, and never writes outside the workspace.
        #[test]
        fn running_file_tools_never_panics(
            name in proptest::sample::select(
                &["read_file", "write_file", "edit_file", "grep", "glob", "nope"][..],
            ),
            input in json_value(),
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let (_dir, tools) = workspace();
            let _ = preview_named(&tools, name, &input);
            let outcome = runtime.block_on(tools.run(name, &input, &ctx()));
            for change in &outcome.changes {
                prop_assert!(change.path.starts_with(tools.workspace().root()));
            }
        }
    }
}
