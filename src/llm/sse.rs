//! Server-sent events framing over a byte stream.
