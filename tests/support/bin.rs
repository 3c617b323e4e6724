//! Running the `keel` binary in tests: a clean environment, a private home, a hang guard on
//! every run, and reading what it printed.

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Variables that would let the machine's own settings leak into a test.
const SCRUBBED: [&str; 8] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "KEEL_PROVIDER",
    "KEEL_MODEL",
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
];

/// The sessions keel run with [`keel`]`(home)` keeps for workspace `work`.
pub fn sessions(home: &Path, work: &Path) -> keel::agent::journal::SessionStore {
    keel::agent::journal::SessionStore::new(
        &home.join(".local/state/keel"),
        &work.canonicalize().unwrap(),
    )
}

/// Where a copy of the binary goes when an unprivileged user could not reach the built one.
const REACHABLE_COPY: &str = "/var/tmp/keel-tests";
/// Search permission for others on a folder, and a program anyone may run.
const OTHERS_SEARCH: u32 = 0o001;
const RUNNABLE_BY_ALL: u32 = 0o755;

/// The keel binary the tests run: the one Cargo built, or a copy anyone can run where a folder
/// above it is closed to other users ([`reachable`]).
pub fn program() -> &'static Path {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM.get_or_init(|| reachable(Path::new(env!("CARGO_BIN_EXE_keel")), "keel"))
}

/// This test binary, as [`program`] is keel's: the stdio MCP test server is this binary.
pub fn this_test_binary() -> &'static Path {
    static THIS: OnceLock<PathBuf> = OnceLock::new();
    THIS.get_or_init(|| reachable(&std::env::current_exe().unwrap(), "tests"))
}

/// `built`, or — when a folder above it is closed to other users (a checkout in a private
/// folder, as `mktemp -d` makes) — a copy of it named `name-…` anyone can run, made once per
/// build: several tests run keel, and the servers it starts, as `nobody`.
fn reachable(built: &Path, name: &str) -> PathBuf {
    let open = built.ancestors().skip(1).all(|folder| {
        folder.metadata().is_ok_and(|meta| meta.permissions().mode() & OTHERS_SEARCH != 0)
    });
    if open {
        return built.to_path_buf();
    }
    let meta = built.metadata().unwrap();
    let stamp = meta.modified().unwrap().duration_since(std::time::UNIX_EPOCH).unwrap();
    let folder = Path::new(REACHABLE_COPY);
    std::fs::create_dir_all(folder).unwrap();
    std::fs::set_permissions(folder, std::fs::Permissions::from_mode(RUNNABLE_BY_ALL)).unwrap();
    let copy = folder.join(format!("{name}-{}-{}", stamp.as_nanos(), meta.len()));
    if !copy.exists() {
        // Copies of earlier builds go; this one is written whole, then renamed into place.
        for old in std::fs::read_dir(folder).unwrap().flatten() {
            if old.file_name().to_string_lossy().starts_with(&format!("{name}-")) {
                let _ = std::fs::remove_file(old.path());
            }
        }
        let partial = folder.join(format!(".partial-{name}-{}", std::process::id()));
        std::fs::copy(built, &partial).unwrap();
        std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(RUNNABLE_BY_ALL))
            .unwrap();
        std::fs::rename(&partial, &copy).unwrap();
    }
    copy
}

/// `keel` with a clean environment and a private home (so its state goes there too).
pub fn keel(home: &Path) -> Command {
    let mut command = Command::new(program());
    for name in SCRUBBED {
        command.env_remove(name);
    }
    command.env("HOME", home).stdin(Stdio::null());
    command
}

/// Hang guard for one run of keel: far past any real run on a loaded machine.
pub const HANG_GUARD: Duration = Duration::from_secs(30);
/// How often a waiting test looks at the child again.
pub const POLL: Duration = Duration::from_millis(20);

/// Waits for `child` to exit; kills it and fails, naming `what`, if it takes longer than `limit`.
pub fn wait_within(child: &mut Child, limit: Duration, what: &str) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what} did not exit within {limit:?}");
        }
        std::thread::sleep(POLL);
    }
}

/// Runs `command` to its end with stdout and stderr captured, under the hang guard.
pub fn output_within(command: &mut Command, what: &str) -> Output {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let (mut stdout, mut stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut bytes).map(|_| bytes)
    });
    let err = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut bytes).map(|_| bytes)
    });
    let status = wait_within(&mut child, HANG_GUARD, what);
    Output { status, stdout: out.join().unwrap().unwrap(), stderr: err.join().unwrap().unwrap() }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Parses every stdout line as JSON; fails on any line that is not.
pub fn json_lines(output: &Output) -> Vec<Value> {
    text(&output.stdout)
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"))
        })
        .collect()
}

pub fn last_result(events: &[Value]) -> &Value {
    let last = events.last().expect("no events");
    assert_eq!(last["type"], "result", "the last event is the result");
    last
}

/// `keel -p hello` against a server that refuses the key with Anthropic's 401.
pub async fn p_refused_with_401() -> Output {
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_string(
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
        ))
        .mount(&server)
        .await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut command = keel(home.path());
    command
        .args(["-p", "hello", "--workdir"])
        .arg(work.path())
        .env("ANTHROPIC_API_KEY", "wrong")
        .env("ANTHROPIC_BASE_URL", server.uri());
    output_within(&mut command, "keel -p against a server that says 401")
}
