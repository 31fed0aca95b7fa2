//! The rotation kernels (CPU): the core's (`repro_core::rope::apply`, whose header has the
//! scheme: exact products, one rounding), shared by the table ops and the fused op.

pub use repro_core::rope::apply::RopeLayout;
pub(crate) use repro_core::rope::apply::{Geometry, apply};
