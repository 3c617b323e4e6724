//! The scripted server with a finite context window: it refuses a body over a set size with the
//! very words of a real server's "too long" answer, counts a prompt's tokens as a quarter of its
//! bytes, answers keel's summary requests (the ones without tools), and finds the step to play
//! from the newest tool call's id — `toolu_7_0` asks for step 8 — since a compacted history holds
//! fewer answers than steps were played.

use super::{Protocol, Step, anthropic_sse_with, openai_sse_with, text, valid};
use serde_json::{Value, json};
use wiremock::ResponseTemplate;

/// The server's tokens: a quarter of the bytes.
pub const BYTES_PER_TOKEN: usize = 4;
/// What the server answers a summary request with.
pub const SUMMARY: &str = "Done: the steps the board shows as completed, each appending its \
line to progress.log and printing big.txt. Changed files: progress.log. Open problems: none. \
Next: the step in progress on the board.";

/// How a server words its refusal of a prompt that is too long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TooLong {
    Anthropic,
    OpenAi,
    Vllm,
    LlamaCpp,
    Ollama,
    LiteLlm,
}

impl TooLong {
    pub const OPENAI_COMPATIBLE: [TooLong; 5] =
        [TooLong::OpenAi, TooLong::Vllm, TooLong::LlamaCpp, TooLong::Ollama, TooLong::LiteLlm];
}

/// What the server does besides playing the script.
#[derive(Debug, Clone, Copy, Default)]
pub struct Switches {
    /// Play the step after the newest tool call's (see the module's doc), not the step after
    /// the answers counted.
    pub steps_by_id: bool,
    /// Refuse every body over this many bytes, in these words.
    pub max_body: Option<(usize, TooLong)>,
    /// Answer summary requests with a 500, every time.
    pub failing_summaries: bool,
    /// Report a prompt's tokens as a quarter of its bytes (else fixed figures).
    pub counted_usage: bool,
    /// Refuse, as a strict server does, a history with a call unanswered or reasoning not sent
    /// back as it came (see `valid`).
    pub strict: bool,
}

impl Switches {
    /// A window of `tokens`, refused in `words`, with every other switch on.
    pub fn window(tokens: usize, words: TooLong) -> Self {
        Self {
            steps_by_id: true,
            max_body: Some((tokens * BYTES_PER_TOKEN, words)),
            failing_summaries: false,
            counted_usage: true,
            strict: true,
        }
    }
}

/// The answer to a request as `switches` have it; `None` when the script plays it as usual.
pub fn respond(
    steps: &[Step],
    protocol: Protocol,
    switches: Switches,
    raw: &[u8],
    body: &Value,
) -> Option<ResponseTemplate> {
    if let Some((max, words)) = switches.max_body.filter(|(max, _)| raw.len() > *max) {
        let max_tokens = body["max_tokens"].as_u64().unwrap_or_default();
        return Some(refusal(words, raw.len(), max, max_tokens));
    }
    let messages = body["messages"].as_array().map_or(&[][..], Vec::as_slice);
    if let Some(problem) =
        switches.strict.then(|| valid::problem(protocol, steps, messages)).flatten()
    {
        let error = json!({"type": "error", "error": {"type": "invalid_request_error", "message": problem}});
        return Some(ResponseTemplate::new(400).set_body_string(error.to_string()));
    }
    let counted = switches.counted_usage.then_some((raw.len() / BYTES_PER_TOKEN) as u64);
    let sse = |step: &Step, index: usize| match protocol {
        Protocol::Anthropic => anthropic_sse_with(step, index, counted),
        Protocol::OpenAi => openai_sse_with(step, index, counted),
    };
    let stream = |body: String| {
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/event-stream")
            .set_body_string(body)
    };
    if is_summary_request(body) && (switches.steps_by_id || switches.failing_summaries) {
        if switches.failing_summaries {
            return Some(ResponseTemplate::new(500).set_body_string("summaries are down"));
        }
        return Some(stream(sse(&text(SUMMARY), 0)));
    }
    if !switches.steps_by_id {
        return None;
    }
    let index = step_by_id(raw);
    let step = steps.get(index).cloned().unwrap_or_else(|| text("The script is over."));
    Some(stream(sse(&step, index)))
}

/// Whether a request body asks for a summary: it offers no tools.
pub fn is_summary_request(body: &Value) -> bool {
    body["tools"].as_array().is_none_or(Vec::is_empty)
}

/// The refusal of a body of `bytes` bytes when `max` are allowed, as `words` has it.
pub fn refusal(words: TooLong, bytes: usize, max: usize, max_tokens: u64) -> ResponseTemplate {
    let (n, m) = (bytes / BYTES_PER_TOKEN, max / BYTES_PER_TOKEN);
    let (status, body) = match words {
        TooLong::Anthropic => (
            400,
            json!({"type": "error", "error": {"type": "invalid_request_error",
                "message": format!("prompt is too long: {n} tokens > {m} maximum")}}),
        ),
        TooLong::OpenAi => (
            400,
            json!({"error": {"message": format!("This model's maximum context length is {m} tokens. \
                However, your messages resulted in {n} tokens. Please reduce the length of the messages."),
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
        ),
        TooLong::Vllm => (
            400,
            json!({"object": "error", "message": format!("This model's maximum context length is {m} \
                tokens. However, you requested {} tokens ({n} in the messages, {max_tokens} in the \
                completion). Please reduce the length of the messages or completion.", n as u64 + max_tokens),
                "type": "BadRequestError", "param": null, "code": 400}),
        ),
        TooLong::LlamaCpp => (
            400,
            json!({"error": {"code": 400, "message": "the request exceeds the available context size. \
                try increasing the context size or enable context shift",
                "type": "exceed_context_size_error", "n_prompt_tokens": n, "n_ctx": m}}),
        ),
        TooLong::Ollama => (
            400,
            json!({"error": "the prompt is longer than the context length currently available to the model"}),
        ),
        TooLong::LiteLlm => (
            400,
            json!({"error": {"message": format!("litellm.ContextWindowExceededError: \
                litellm.BadRequestError: ContextWindowExceededError: OpenAIException - This model's \
                maximum context length is {m} tokens. However, your messages resulted in {n} tokens."),
                "type": null, "param": null, "code": "400"}}),
        ),
    };
    ResponseTemplate::new(status)
        .insert_header("content-type", "application/json")
        .set_body_string(body.to_string())
}

/// The step a body asks for: the one after the newest tool call's, by the number its id
/// carries (`"toolu_7_0"`, `"call_7_0"`); 0 when there is no call yet.
pub fn step_by_id(raw: &[u8]) -> usize {
    let text = String::from_utf8_lossy(raw);
    let mut newest: Option<usize> = None;
    for prefix in ["\"toolu_", "\"call_"] {
        for (at, _) in text.match_indices(prefix) {
            let digits: String =
                text[at + prefix.len()..].chars().take_while(char::is_ascii_digit).collect();
            let next = text[at + prefix.len() + digits.len()..].chars().next();
            if let (Ok(number), Some('_')) = (digits.parse::<usize>(), next) {
                newest = Some(newest.map_or(number, |seen| seen.max(number)));
            }
        }
    }
    newest.map_or(0, |number| number + 1)
}

/// A task of `steps` steps, each a command that appends its number to `progress.log` (so a step
/// done twice shows) and prints `big.txt`, then a board update; `chatter` bytes of the model's
/// own words go with each command. 2 × `steps` + 2 requests in all.
pub fn long_task(steps: usize, chatter: usize) -> Vec<Step> {
    let mut script =
        vec![Step { text: "Planning.".into(), ..super::tool("todo", super::board(0, steps)) }];
    for k in 1..=steps {
        let words = format!("Step {k}: appending to the log and printing the file. ");
        let text = words.repeat(chatter / words.len() + 1)[..chatter.max(words.len())].to_owned();
        let command = format!("echo 'step {k}' >> progress.log && cat big.txt");
        script.push(Step { text, ..super::tool("bash", json!({ "command": command })) });
        script.push(super::tool("todo", super::board(k, steps)));
    }
    script.push(text(&format!("All {steps} steps are done.")));
    script
}

/// `big.txt` for [`long_task`]: `bytes` bytes of numbered lines.
pub fn big_file(bytes: usize) -> String {
    let mut text = String::new();
    let mut line = 0;
    while text.len() < bytes {
        text.push_str(&format!("line {line:05}: the quick brown fox jumps over the lazy dog\n"));
        line += 1;
    }
    text.truncate(bytes);
    text
}
