//! The adapter's error: a value, never a panic, with the layout of Burn's own
//! tensor-operation messages.

use burn_tensor::DType;

/// Why an op refused its input.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// The op takes f32, bf16 and f16 tensors only.
    UnsupportedDType {
        /// The op's name.
        op: &'static str,
        /// The input's dtype.
        dtype: DType,
    },
    /// Two inputs of one op have different dtypes.
    DTypeMismatch {
        /// The op's name.
        op: &'static str,
        /// The first input's dtype.
        lhs: DType,
        /// The other input's dtype.
        rhs: DType,
    },
    /// Two inputs of one op live on different devices (an autodiff device and its inner
    /// device count as different).
    DeviceMismatch {
        /// The op's name.
        op: &'static str,
        /// The devices, as Burn prints them.
        message: String,
    },
    /// The shapes do not fit the op, or an argument is out of its range.
    Invalid {
        /// The op's name.
        op: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The tensor is tracked by autodiff and the op has no backward pass here (the
    /// elementwise functions; or a tracked tensor whose inner backend is not Flex).
    NoBackward {
        /// The op's name.
        op: &'static str,
    },
    /// Reading the tensor's values back from its device failed.
    Read {
        /// The op's name.
        op: &'static str,
        /// The backend's message.
        message: String,
    },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (op, reason) = match self {
            Error::UnsupportedDType { op, dtype } => (
                op,
                format!("Unsupported dtype {dtype:?}: the op takes F32, BF16 and F16 tensors."),
            ),
            Error::DTypeMismatch { op, lhs, rhs } => (
                op,
                format!("The inputs' dtypes differ: {lhs:?} and {rhs:?}."),
            ),
            Error::DeviceMismatch { op, message } => {
                (op, format!("The inputs' devices differ: {message}."))
            }
            Error::Invalid { op, message } => (op, message.clone()),
            Error::NoBackward { op } => (
                op,
                "The tensor is tracked by autodiff and the op has no backward pass on its \
                 backend; compute it off the graph on the inner backend (`Tensor::inner`)."
                    .to_string(),
            ),
            Error::Read { op, message } => (op, format!("Reading the tensor failed: {message}")),
        };
        write!(
            f,
            "=== Tensor Operation Error ===\n  Operation: '{op}'\n  Reason:\n    1. {reason}\n"
        )
    }
}

impl std::error::Error for Error {}
