// The correctly rounded unary functions, listed once. (Plain comments, no inner doc: the
// file is also `include!`d by the test oracle, tools/mpfr-oracle, for its function list.)
//
// `unary_functions!(callback)` calls `callback!` with the whole list, one entry per
// function:
//
//     name Type in family: "what it computes", example x => bits of f(x) in f32;
//
// `name` is the function's Rust name, its op's name and its CUDA kernels' prefix; `Type`
// its `CrUnary` implementation in `core/src/math/<family>.rs` and its struct in
// `kernels/math/<family>.cuh` (the CUDA list `REPRO_FOR_EACH_UNARY` in
// `kernels/math/all.cuh` is checked against this one by tests/cuda_constants.rs). The
// example bits are the exact value rounded to nearest f32, computed with mpmath; the op's
// doctest checks them. Consumers: the scalar and slice entry points (`math`), the ops and
// `UnaryFn` (`elementwise`), the host check of the CUDA math (tools/kernel-hostcheck) and
// the oracle's `Func` (tools/mpfr-oracle).

/// Calls `$callback!` with the list of the correctly rounded unary functions.
#[doc(hidden)]
#[macro_export]
macro_rules! unary_functions {
    ($callback:ident) => {
        $callback! {
            exp Exp in exp: "e^x", 1.0 => 0x402D_F854;
            expm1 Expm1 in exp: "e^x - 1", 1.0 => 0x3FDB_F0A9;
            log Log in log: "Natural logarithm", 2.0 => 0x3F31_7218;
            log1p Log1p in log: "ln(1 + x)", 0.5 => 0x3ECF_991F;
            log10 Log10 in log: "Base-10 logarithm", 2.0 => 0x3E9A_209B;
            sin Sin in trig: "Sine (radians)", 1.0 => 0x3F57_6AA4;
            cos Cos in trig: "Cosine (radians)", 1.0 => 0x3F0A_5140;
            tanh Tanh in tanh: "Hyperbolic tangent", 0.5 => 0x3EEC_9A9F;
            sigmoid Sigmoid in sigmoid: "Logistic sigmoid 1 / (1 + e^-x)", 1.0 => 0x3F3B_26A8;
            silu Silu in sigmoid: "SiLU x / (1 + e^-x)", 2.0 => 0x3FE1_7BEB;
            softplus Softplus in softplus: "Softplus ln(1 + e^x)", 1.0 => 0x3FA8_18F5;
            erf Erf in erf: "Error function erf(x)", 0.5 => 0x3F05_3F7B;
            gelu Gelu in gelu: "GELU, tanh approximation x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))", 1.0 => 0x3F57_585C;
            gelu_erf GeluErf in erf: "GELU x/2 (1 + erf(x / sqrt 2))", 1.0 => 0x3F57_625F;
        }
    };
}
