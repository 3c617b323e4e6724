//! Keeping command output bounded: what is held in memory, what the person sees, what the model reads.
//!
//! A command may print a gigabyte. [`CappedBuffer`] keeps only a head and a tail of a stream, counting
//! the bytes it let go, so memory stays flat however much arrives. From what it holds it renders two
//! views: the larger one for the person ([`DISPLAY_OUTPUT_LIMIT`]) and the small one the model reads
//! ([`MODEL_OUTPUT_LIMIT`]); where bytes are left out, the text says how many with
//! [`omitted_marker`]. Bytes that are not UTF-8 are shown lossily, and cuts never split a character.

use std::fmt::Write as _;

/// The most bytes of command output the model reads in one tool result.
pub const MODEL_OUTPUT_LIMIT: usize = 16 * 1024;

/// The most bytes of command output kept for the person, over all streams of one command.
pub const DISPLAY_OUTPUT_LIMIT: usize = 1024 * 1024;

/// The tail is compacted when it holds this many times its capacity, so that appending stays a
/// plain copy and trimming happens once in a while rather than on every chunk.
const TAIL_SLACK_FACTOR: usize = 2;

/// The longest a UTF-8 encoded character can be.
const MAX_UTF8_CHAR_LEN: usize = 4;

/// The line put where bytes were left out.
pub fn omitted_marker(omitted: u64) -> String {
    format!("\n… {omitted} bytes omitted …\n")
}

/// A stream's first and last bytes, up to a fixed total, and a count of everything that arrived.
#[derive(Debug, Clone)]
pub struct CappedBuffer {
    head: Vec<u8>,
    head_capacity: usize,
    /// The newest bytes; may hold up to `TAIL_SLACK_FACTOR` times `tail_capacity` between compactions.
    tail: Vec<u8>,
    tail_capacity: usize,
    total: u64,
}

impl CappedBuffer {
    /// A buffer that keeps at most `limit` bytes: half from the start, half from the end.
    pub fn new(limit: usize) -> Self {
        let head_capacity = limit / 2;
        Self {
            head: Vec::new(),
            head_capacity,
            tail: Vec::new(),
            tail_capacity: limit - head_capacity,
            total: 0,
        }
    }

    /// Appends a chunk, letting go of the middle once the buffer is full.
    pub fn push(&mut self, mut chunk: &[u8]) {
        self.total = self.total.saturating_add(chunk.len() as u64);
        if self.head.len() < self.head_capacity {
            let take = chunk.len().min(self.head_capacity - self.head.len());
            self.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        if chunk.is_empty() {
            return;
        }
        if chunk.len() >= self.tail_capacity {
            self.tail.clear();
            self.tail.extend_from_slice(&chunk[chunk.len() - self.tail_capacity..]);
            return;
        }
        self.tail.extend_from_slice(chunk);
        if self.tail.len() > self.tail_capacity * TAIL_SLACK_FACTOR {
            let excess = self.tail.len() - self.tail_capacity;
            self.tail.drain(..excess);
        }
    }

    /// Every byte that arrived, kept or not.
    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The bytes still held, in order: the head, then the newest part of the tail.
    fn held(&self) -> (&[u8], &[u8]) {
        let keep = self.tail.len().min(self.tail_capacity);
        (&self.head, &self.tail[self.tail.len() - keep..])
    }

    /// The stream as text of at most about `limit` bytes (plus the marker): all of it when it fits,
    /// otherwise its start and its end with the number of bytes left out between them.
    pub fn render(&self, limit: usize) -> String {
        let (head, tail) = self.held();
        let held = (head.len() + tail.len()) as u64;
        if held == self.total && head.len() + tail.len() <= limit {
            let mut bytes = Vec::with_capacity(head.len() + tail.len());
            bytes.extend_from_slice(head);
            bytes.extend_from_slice(tail);
            return String::from_utf8_lossy(&bytes).into_owned();
        }
        let head_budget = limit / 2;
        let tail_budget = limit - head_budget;
        // The first `head_budget` bytes of the held sequence come from the head; the head is
        // filled before anything reaches the tail, so it is only short when the tail is empty.
        let start = trim_incomplete_end(&head[..head.len().min(head_budget)]);
        let end_source: Vec<u8> = if tail.len() >= tail_budget {
            tail[tail.len() - tail_budget..].to_vec()
        } else {
            // The tail alone is too short: take the rest from the end of the head, never
            // overlapping what the start already shows.
            let from_head = (tail_budget - tail.len()).min(head.len() - start.len());
            let mut bytes = head[head.len() - from_head..].to_vec();
            bytes.extend_from_slice(tail);
            bytes
        };
        // Whole lines on both sides of the marker: no number cut in two (`4995` … `3`).
        let start = at_line_end(start);
        let end = at_line_start(skip_leading_continuation(&end_source));
        let shown = (start.len() + end.len()) as u64;
        let omitted = self.total.saturating_sub(shown);
        let mut text = String::from_utf8_lossy(start).into_owned();
        if omitted > 0 {
            let marker = omitted_marker(omitted);
            let marker =
                if text.ends_with('\n') { marker.trim_start_matches('\n') } else { &marker };
            text.push_str(marker);
        }
        text.push_str(&String::from_utf8_lossy(end));
        text
    }
}

/// The start of a cut output ended at its last line end, when that keeps at least half of it
/// (a single line longer than that is cut where the budget ends).
fn at_line_end(bytes: &[u8]) -> &[u8] {
    match bytes.iter().rposition(|byte| *byte == b'\n') {
        Some(at) if at + 1 >= bytes.len() / 2 => &bytes[..=at],
        _ => bytes,
    }
}

/// The end of a cut output started at its first whole line, when that keeps at least half of it.
fn at_line_start(bytes: &[u8]) -> &[u8] {
    match bytes.iter().position(|byte| *byte == b'\n') {
        Some(at) if at < bytes.len() / 2 => &bytes[at + 1..],
        _ => bytes,
    }
}

/// Cuts an incomplete character off the end of `bytes`, so a cut never leaves half of one.
fn trim_incomplete_end(bytes: &[u8]) -> &[u8] {
    let window_start = bytes.len().saturating_sub(MAX_UTF8_CHAR_LEN);
    for cut in (window_start..bytes.len()).rev() {
        let byte = bytes[cut];
        if is_continuation(byte) {
            continue;
        }
        // `byte` starts a sequence (or is ASCII): keep it only if the sequence is complete.
        let needed = utf8_sequence_len(byte);
        return if cut + needed <= bytes.len() { bytes } else { &bytes[..cut] };
    }
    bytes
}

/// Skips continuation bytes at the start of `bytes` (the rest of a character cut in two).
fn skip_leading_continuation(bytes: &[u8]) -> &[u8] {
    let skip =
        bytes.iter().take(MAX_UTF8_CHAR_LEN - 1).take_while(|byte| is_continuation(**byte)).count();
    &bytes[skip..]
}

fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

/// How long the sequence a leading byte starts is; 1 for ASCII and for bytes that start nothing.
fn utf8_sequence_len(byte: u8) -> usize {
    match byte {
        0b1100_0000..=0b1101_1111 => 2,
        0b1110_0000..=0b1110_1111 => 3,
        0b1111_0000..=0b1111_0111 => 4,
        _ => 1,
    }
}

/// Turns a byte stream into text chunk by chunk, holding back a character split between chunks
/// so it is decoded whole with the next one.
#[derive(Debug, Default)]
pub struct Utf8Decoder {
    carry: Vec<u8>,
}

impl Utf8Decoder {
    /// Decodes `chunk` (after whatever was held back), replacing invalid bytes.
    pub fn decode(&mut self, chunk: &[u8]) -> String {
        let mut bytes = std::mem::take(&mut self.carry);
        bytes.extend_from_slice(chunk);
        let complete = trim_incomplete_end(&bytes).len();
        self.carry = bytes[complete..].to_vec();
        String::from_utf8_lossy(&bytes[..complete]).into_owned()
    }

    /// Whatever is still held back, decoded as is.
    pub fn finish(&mut self) -> String {
        let bytes = std::mem::take(&mut self.carry);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Shares `budget` bytes between streams that want `wants` bytes each: each gets what it wants
/// if all fit; otherwise small streams are served whole and the rest split evenly.
pub fn share_budget(budget: usize, wants: &[u64]) -> Vec<usize> {
    let mut shares = vec![0usize; wants.len()];
    let mut order: Vec<usize> = (0..wants.len()).collect();
    order.sort_by_key(|index| wants[*index]);
    let mut left = budget;
    for (served, index) in order.iter().enumerate() {
        let fair = left / (wants.len() - served);
        let want = usize::try_from(wants[*index]).unwrap_or(usize::MAX);
        let share = want.min(fair);
        shares[*index] = share;
        left -= share;
    }
    shares
}

/// Appends a titled section (`--- title ---` then the text) to `out`, with a newline at the end.
pub fn push_section(out: &mut String, title: &str, text: &str) {
    let _ = writeln!(out, "--- {title} ---");
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push('\n');
    }
}

/// Shortens `text` to at most `limit` bytes, cutting on a character boundary.
pub fn truncate_at_char(text: &mut String, limit: usize) {
    if text.len() <= limit {
        return;
    }
    let mut cut = limit;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_is_kept_whole() {
        let mut buffer = CappedBuffer::new(100);
        buffer.push(b"hello ");
        buffer.push(b"world");
        assert_eq!(buffer.render(100), "hello world");
        assert_eq!(buffer.total(), 11);
    }

    #[test]
    fn large_output_keeps_head_and_tail_with_count() {
        let mut buffer = CappedBuffer::new(10);
        for _ in 0..1000 {
            buffer.push(b"abcdefghij");
        }
        buffer.push(b"END");
        let text = buffer.render(10);
        assert!(text.starts_with("abcde"), "{text}");
        assert!(text.ends_with("ijEND"), "{text}");
        assert!(text.contains("… 9993 bytes omitted …"), "{text}");
    }

    #[test]
    fn render_with_smaller_limit_than_held() {
        let mut buffer = CappedBuffer::new(1000);
        buffer.push(&[b'x'; 600]);
        buffer.push(&[b'y'; 100]);
        let text = buffer.render(100);
        assert!(text.starts_with(&"x".repeat(50)));
        assert!(text.ends_with(&"y".repeat(50)));
        assert!(text.contains("… 600 bytes omitted …"), "{text}");
    }

    #[test]
    fn render_takes_end_from_head_when_tail_is_short() {
        let mut buffer = CappedBuffer::new(1000);
        buffer.push(b"0123456789");
        let text = buffer.render(4);
        assert_eq!(text, format!("01{}89", omitted_marker(6)));
    }

    #[test]
    fn cuts_do_not_split_characters() {
        let mut buffer = CappedBuffer::new(7);
        buffer.push("ééééééééé".as_bytes());
        let text = buffer.render(7);
        assert!(!text.contains('\u{FFFD}'), "{text}");
        assert!(text.contains("bytes omitted"));
    }

    #[test]
    fn the_marker_stands_between_whole_lines() {
        // Past the person's limit too: what the pager shows is cut as the model's view is.
        const LAST: u32 = 300_000;
        let mut buffer = CappedBuffer::new(super::DISPLAY_OUTPUT_LIMIT);
        for number in 1..=LAST {
            buffer.push(format!("{number}\n").as_bytes());
        }
        for limit in [1000, 1001, 1003, MODEL_OUTPUT_LIMIT, super::DISPLAY_OUTPUT_LIMIT] {
            let text = buffer.render(limit);
            let (before, after) = text.split_once("bytes omitted …\n").unwrap();
            let before = before.rsplit_once('\n').unwrap().0;
            let lines: Vec<&str> = before.lines().chain(after.lines()).collect();
            let cut = lines.iter().find(|line| line.parse::<u32>().is_err());
            assert!(cut.is_none(), "a line cut in two at {limit}: {cut:?}");
            let end = format!("{}\n{LAST}\n", LAST - 1);
            assert!(text.starts_with("1\n2\n") && text.ends_with(&end), "{limit}");
            // The count is still exact: what is shown and what was left out add up.
            let shown: usize = lines.iter().map(|line| line.len() + 1).sum();
            let omitted: usize = text
                .split("… ")
                .nth(1)
                .and_then(|rest| rest.split(' ').next())
                .and_then(|count| count.parse().ok())
                .unwrap();
            assert_eq!(shown + omitted, usize::try_from(buffer.total()).unwrap(), "{limit}");
        }
    }

    #[test]
    fn decoder_joins_split_characters() {
        let bytes = "aé€😀".as_bytes();
        let mut decoder = Utf8Decoder::default();
        let mut text = String::new();
        for byte in bytes {
            text.push_str(&decoder.decode(&[*byte]));
        }
        text.push_str(&decoder.finish());
        assert_eq!(text, "aé€😀");
    }

    #[test]
    fn budget_serves_small_streams_whole() {
        assert_eq!(share_budget(100, &[10, 500]), vec![10, 90]);
        assert_eq!(share_budget(100, &[500, 500]), vec![50, 50]);
        assert_eq!(share_budget(100, &[0, 0]), vec![0, 0]);
    }
}
