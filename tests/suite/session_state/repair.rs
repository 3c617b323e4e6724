//! Logs written by hand into the store: `--continue` picks the one written last by its file time,
//! and a log damaged in the middle is repaired to its valid prefix, with what follows set aside in
//! a file of its own, never thrown away.

use super::*;

/// Writes a session log by hand: the lines given, in the store's sessions folder.
fn write_log(store: &SessionStore, id: &str, lines: &[Value]) -> PathBuf {
    // Creating (and dropping) a session makes the folders and claims them for the workspace.
    let made = store.create().unwrap();
    let made_path = made.path().to_owned();
    drop(made);
    std::fs::remove_file(made_path).unwrap();
    let path = store.sessions_dir().join(format!("{id}.jsonl"));
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn record(record: &Record) -> Value {
    serde_json::to_value(record).unwrap()
}

fn message(role: Role, content: Vec<ContentBlock>) -> Value {
    record(&Record::Message { message: Message { role, content } })
}

fn said(role: Role, text: &str) -> Value {
    message(role, vec![ContentBlock::Text { text: text.into() }])
}

#[tokio::test(flavor = "multi_thread")]
async fn continue_picks_the_session_written_last_by_its_file_time() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let store = sessions(home.path(), work.path());
    // The first says it started in the far future; the second was written last.
    let future = record(&Record::Start { id: "100-aaaa".into(), started_at: 9_999_999_999 });
    let a = write_log(
        &store,
        "100-aaaa",
        &[future, said(Role::User, "prompt A"), said(Role::Assistant, "A")],
    );
    let past = record(&Record::Start { id: "200-bbbb".into(), started_at: 1 });
    let b = write_log(
        &store,
        "200-bbbb",
        &[past, said(Role::User, "prompt B"), said(Role::Assistant, "B")],
    );
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options().write(true).open(&a).unwrap().set_modified(hour_ago).unwrap();
    std::fs::File::options().write(true).open(&b).unwrap().set_modified(SystemTime::now()).unwrap();

    let server = FakeLlm::start(vec![text("unused"), text("carried on")], Duration::ZERO).await;
    let output =
        run_p(&server, "anthropic", home.path(), work.path(), &["-p", "next", "--continue"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let sent = server.bodies().await[0].to_string();
    assert!(sent.contains("prompt B") && !sent.contains("prompt A"), "{sent}");
}

/// Every tool call in a request body has exactly one result.
fn assert_calls_answered(body: &Value) {
    let sent = body["messages"].as_array().unwrap();
    let ids = |key: &str, kind: &str| -> Vec<String> {
        sent.iter()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter(|b| b["type"] == kind)
            .map(|b| b[key].as_str().unwrap().to_owned())
            .chain(sent.iter().flat_map(|m| {
                let calls = m["tool_calls"].as_array().cloned().unwrap_or_default();
                let result = m["tool_call_id"].as_str().map(str::to_owned);
                match kind {
                    "tool_use" => {
                        calls.iter().map(|c| c["id"].as_str().unwrap().to_owned()).collect()
                    }
                    _ => result.into_iter().collect::<Vec<_>>(),
                }
            }))
            .collect()
    };
    let (calls, mut results) = (ids("id", "tool_use"), ids("tool_use_id", "tool_result"));
    results.sort();
    let mut expected = calls.clone();
    expected.sort();
    assert_eq!(results, expected, "every call has exactly one result: {body}");
}

async fn a_garbled_record_mid_log_is_repaired(provider: &str) {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let store = sessions(home.path(), work.path());
    let call = |id: &str| {
        message(
            Role::Assistant,
            vec![ContentBlock::ToolUse {
                id: id.into(),
                name: "bash".into(),
                input: json!({"command": "echo hi"}),
            }],
        )
    };
    let result = |id: &str| {
        message(
            Role::User,
            vec![ContentBlock::ToolResult {
                tool_use_id: id.into(),
                content: "hi".into(),
                is_error: false,
            }],
        )
    };
    let head = [
        record(&Record::Start { id: "300-cccc".into(), started_at: 300 }),
        said(Role::User, "go"),
        call("t1"),
        result("t1"),
        said(Role::Assistant, "first done"),
        said(Role::User, "more"),
    ];
    let path = write_log(&store, "300-cccc", &head);
    let valid = std::fs::read(&path).unwrap();
    // A record cut in half by a crash long ago, then what followed it.
    let mut tail = br#"{"type":"message","message":{"role":"assistant","content":[{"type":"tool_use","id":"t2""#.to_vec();
    tail.push(b'\n');
    for line in [call("t3"), result("t3"), said(Role::Assistant, "more done")] {
        tail.extend_from_slice(format!("{line}\n").as_bytes());
    }
    std::fs::write(&path, [valid.clone(), tail.clone()].concat()).unwrap();

    let server =
        FakeLlm::start(vec![text("-"), text("-"), text("carried on")], Duration::ZERO).await;
    let output = run_p(&server, provider, home.path(), work.path(), &["-p", "--continue"]);
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    assert!(said.contains("damaged at line 7"), "{said}");
    assert!(
        said.contains("set the 4 records from there on (3 messages among them) aside"),
        "{said}"
    );
    assert_eq!(last_result(&json_lines(&output))["text"], "carried on");
    let body = &server.bodies().await[0];
    assert_calls_answered(body);
    assert!(!body.to_string().contains("t3") && body.to_string().contains("more"), "{body}");

    // Nothing thrown away: the dropped bytes are beside the log, and the log is whole again.
    let aside: Vec<PathBuf> = std::fs::read_dir(store.sessions_dir())
        .unwrap()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "damaged"))
        .collect();
    assert_eq!(aside.len(), 1);
    assert_eq!(std::fs::read(&aside[0]).unwrap(), tail);
    assert!(std::fs::read(&path).unwrap().starts_with(&valid));
    let (_, reopened) = store.open("300-cccc").unwrap();
    assert!(reopened.warnings.is_empty(), "{:?}", reopened.warnings);
    assert_eq!(reopened.history.last().unwrap().text(), "carried on");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_garbled_record_mid_log_is_repaired_over_anthropic() {
    a_garbled_record_mid_log_is_repaired("anthropic").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_garbled_record_mid_log_is_repaired_over_openai() {
    a_garbled_record_mid_log_is_repaired("openai").await;
}

#[test]
fn a_repair_whose_file_name_is_taken_sets_the_records_aside_in_a_file_of_its_own() {
    let (state, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let store = SessionStore::new(state.path(), &work.path().canonicalize().unwrap());
    let id = "400-dddd";
    let start = record(&Record::Start { id: id.into(), started_at: 400 });
    let path = write_log(&store, id, &[start, said(Role::User, "go")]);
    let dropped = format!("not a record\n{}\n", said(Role::Assistant, "after the damage"));
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(dropped.as_bytes());
    std::fs::write(&path, bytes).unwrap();
    // The names a repair in the next few seconds would take, all taken already.
    let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs();
    let dir = store.sessions_dir();
    let taken: Vec<PathBuf> =
        (now - 1..=now + 3).map(|at| dir.join(format!("{id}.{at}.damaged"))).collect();
    for file in &taken {
        std::fs::write(file, "an earlier repair's").unwrap();
    }

    let (_log, restored) = store.open(id).unwrap();
    let warning = restored.warnings.join("\n");
    let aside = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .find(|name| name.ends_with(".damaged") && !taken.iter().any(|file| file.ends_with(name)))
        .unwrap_or_else(|| panic!("nothing set aside: {warning}"));
    let stamp = aside.strip_prefix(&format!("{id}.")).unwrap().strip_suffix(".damaged").unwrap();
    let (time, attempt) = stamp.split_once('-').unwrap();
    assert!(time.parse::<u64>().is_ok() && attempt == "1", "{aside}");
    assert!(warning.contains(&aside), "{warning}");
    assert_eq!(std::fs::read_to_string(dir.join(&aside)).unwrap(), dropped);
    for file in &taken {
        assert_eq!(std::fs::read_to_string(file).unwrap(), "an earlier repair's");
    }
}
