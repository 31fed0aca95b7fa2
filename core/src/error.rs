//! The core's error: an argument a core function cannot take (the adapters turn it into
//! their framework's error, candle's `Error::Msg` or burn-repro's `Error::Invalid`).

/// An argument a core function cannot take; the message names the function's family and
/// says why (for example "rope: rotary_dim must be even and positive, got 7").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    message: String,
}

impl Error {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
        }
    }

    /// What was wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// The core's result type.
pub type Result<T> = std::result::Result<T, Error>;
