//! The matmul's tier counters (`matmul::tier_counts`, what the report example prints):
//! every output is counted once, by the tier that decided it. The counters are process-
//! wide, so this file holds one test (its own process) and runs its products in turn.

use candle_core::{DType, Device, Tensor};
use candle_repro::matmul::{CpuConfig, TierCounts, matmul_with_config, tier_counts};

#[path = "common/lcg.rs"]
mod lcg;

/// n values uniform in [-8, 8) (the report's typical input).
fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut g = lcg::Lcg(seed);
    (0..n).map(|_| (g.unit() * 16.0 - 8.0) as f32).collect()
}

/// The counts of one product of x (m, k) with w (256, k)^T in `dtype`.
fn counts(x: &[f32], m: usize, k: usize, dtype: DType, cfg: CpuConfig) -> TierCounts {
    let w = Tensor::from_vec(data(256 * k, 7), (256, k), &Device::Cpu)
        .unwrap()
        .to_dtype(dtype)
        .unwrap();
    let x = Tensor::from_slice(x, (m, k), &Device::Cpu)
        .unwrap()
        .to_dtype(dtype)
        .unwrap();
    let before = tier_counts();
    matmul_with_config(&x, &w.t().unwrap(), None, None, cfg).unwrap();
    let c = tier_counts().since(&before);
    assert_eq!(c.outputs, (m * 256) as u64, "{c:?}");
    assert_eq!(
        c.tier1() + c.retry + c.zero_sign + c.tier2 + c.tier3,
        c.outputs
    );
    c
}

#[test]
fn every_output_is_counted_by_the_tier_that_decided_it() {
    let (m, k) = (64, 576);
    let x = data(m * k, 3);
    let def = CpuConfig::default();
    for (gemv, rows) in [(false, m), (true, 1)] {
        let cfg = CpuConfig { gemv, ..def };
        // Typical f32 data: tier 1 decides nearly everything.
        let c = counts(&x[..rows * k], rows, k, DType::F32, cfg);
        println!("f32, {rows} rows: {c:?}");
        assert!(c.tier1() * 100 >= c.outputs * 99, "{c:?}");
        let with = |start_tier| {
            let cfg = CpuConfig { start_tier, ..cfg };
            counts(&x[..rows * k], rows, k, DType::F32, cfg)
        };
        // Tier 1 off: tier 2 decides nearly everything, tier 3 the rest.
        let c = with(Some(2));
        assert_eq!(c.tier1() + c.retry, 0, "{c:?}");
        assert!(c.tier2 * 100 >= c.outputs * 99, "{c:?}");
        // Tier 3 alone: every output.
        let c = with(Some(3));
        assert_eq!(c.tier3, c.outputs, "{c:?}");
        // A row of zeros: exact zeros, whose signs the sign classes settle.
        let zeros = vec![0f32; rows * k];
        let c = counts(&zeros, rows, k, DType::F32, cfg);
        assert_eq!(c.zero_sign, c.outputs, "{c:?}");
    }
    // The float route on bf16 leaves a few percent of outputs to its second try.
    let c = counts(
        &x,
        m,
        k,
        DType::BF16,
        CpuConfig {
            float_route: Some(true),
            ..def
        },
    );
    println!("bf16, float route: {c:?}");
    assert!(c.retry > 0 && c.tier1() * 100 >= c.outputs * 90, "{c:?}");
    let c = counts(
        &x,
        m,
        k,
        DType::BF16,
        CpuConfig {
            float_route: Some(false),
            ..def
        },
    );
    assert_eq!(c.retry, 0, "{c:?}");
}
