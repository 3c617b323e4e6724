//! The answer streaming in, as snapshots carry it: the deltas as they arrived, shared.
//!
//! A snapshot is built for every delta, so the text it carries must not be copied whole each
//! time: appending a delta stores the delta alone, and every snapshot shares the pieces before
//! it. A front end that keeps a copy of its own appends the pieces it has not seen yet
//! ([`StreamingText::pieces_from`]); [`StreamingText::answer`] tells it when a new answer (or a
//! retried one) starts, so it starts again. A delta thus costs work proportional to the delta on
//! both sides, and a 1 MB answer costs what the sum of its deltas does.

use std::fmt;
use std::sync::Arc;

/// The text of the answer streaming in right now.
#[derive(Debug, Clone, Default)]
pub struct StreamingText {
    /// Which answer of the session this is.
    answer: u64,
    pieces: imbl::Vector<Arc<str>>,
    len: usize,
}

impl StreamingText {
    /// An empty text for the session's `answer`th streamed answer.
    pub fn new(answer: u64) -> Self {
        Self { answer, ..Self::default() }
    }

    /// Appends `delta`, sharing every piece before it with earlier copies.
    pub fn push(&mut self, delta: &str) {
        if delta.is_empty() {
            return;
        }
        self.len += delta.len();
        self.pieces.push_back(Arc::from(delta));
    }

    /// Which answer this is: it changes when a new answer starts streaming.
    pub fn answer(&self) -> u64 {
        self.answer
    }

    /// The text's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many pieces (deltas) the text holds.
    pub fn piece_count(&self) -> usize {
        self.pieces.len()
    }

    /// The pieces from the `start`th on, in order: what a copy holding `start` pieces lacks.
    pub fn pieces_from(&self, start: usize) -> impl Iterator<Item = &str> {
        let start = start.min(self.pieces.len());
        self.pieces.iter().skip(start).map(|piece| &**piece)
    }
}

impl fmt::Display for StreamingText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.pieces.iter().try_for_each(|piece| f.write_str(piece))
    }
}

impl From<&str> for StreamingText {
    fn from(text: &str) -> Self {
        let mut streaming = Self::default();
        streaming.push(text);
        streaming
    }
}

/// Two texts are equal when they hold the same characters, however they arrived.
impl PartialEq for StreamingText {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len
            && self
                .pieces
                .iter()
                .flat_map(|piece| piece.bytes())
                .eq(other.pieces.iter().flat_map(|piece| piece.bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delta_is_appended_without_copying_the_text_before_it() {
        let mut text = StreamingText::new(1);
        text.push("first ");
        let earlier = text.clone();
        text.push("second");
        let first = |text: &StreamingText| text.pieces_from(0).next().map(str::as_ptr);
        assert_eq!(first(&earlier), first(&text), "the first piece is shared, not copied");
        assert_eq!(text.to_string(), "first second");
        assert_eq!(text.pieces_from(earlier.piece_count()).collect::<Vec<_>>(), ["second"]);
        assert_eq!((text.len(), text.piece_count()), (12, 2));
    }

    #[test]
    fn empty_deltas_add_no_piece_and_equality_ignores_how_text_arrived() {
        let mut text = StreamingText::new(2);
        text.push("ab");
        text.push("");
        text.push("c");
        assert_eq!(text.piece_count(), 2);
        assert_eq!(text, StreamingText::from("abc"));
        assert_ne!(text, StreamingText::from("abd"));
        assert!(StreamingText::new(3).is_empty());
        assert_eq!(text.pieces_from(9).count(), 0, "past the end is nothing, not a panic");
    }
}
