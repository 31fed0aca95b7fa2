//! The reproducible sampler: its choices follow the definition (argmax ties, top-k, top-p,
//! min-p kept sets computed here independently), its draws are unbiased (chi-square of
//! 20,000 draws against the softmax probabilities for every mode), and the same seed and
//! position give the same token however the logits' tensor was made.

use candle_core::{DType, Device, Tensor};
use candle_repro::sampling::{LogitsProcessor, Sampling, choose, probabilities};

fn logits() -> Vec<f32> {
    vec![
        1.0, 3.0, 2.5, -1.0, 0.0, 2.5, 1.75, -0.5, 0.25, 3.0, -2.0, 1.5,
    ]
}

/// The kept set of a mode, computed from the probabilities by a plain reading of the
/// definition (f64 sums of f32 probabilities, exact here: 12 values of similar size).
fn kept(p: &[f32], s: Sampling) -> Vec<usize> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| p[b].partial_cmp(&p[a]).unwrap().then(a.cmp(&b)));
    let (k, tp, mp) = match s {
        Sampling::All { .. } => (p.len(), 2.0, 0.0),
        Sampling::TopK { k, .. } => (k, 2.0, 0.0),
        Sampling::TopP { p, .. } => (usize::MAX, p, 0.0),
        Sampling::TopKThenTopP { k, p, .. } => (k, p, 0.0),
        Sampling::MinP { p, .. } => (usize::MAX, 2.0, p),
        Sampling::ArgMax => unreachable!(),
    };
    order.truncate(k);
    let mut out = vec![];
    let mut sum = 0f64;
    for &t in &order {
        if sum >= tp as f32 as f64 {
            break;
        }
        if (p[t] as f64) < mp * p[order[0]] as f64 {
            break;
        }
        out.push(t);
        sum += p[t] as f64;
    }
    out
}

#[test]
fn draws_follow_the_probabilities() {
    let l = logits();
    let modes = [
        Sampling::All { temperature: 1.0 },
        Sampling::All { temperature: 0.6 },
        Sampling::TopK {
            k: 4,
            temperature: 1.3,
        },
        Sampling::TopP {
            p: 0.8,
            temperature: 0.9,
        },
        Sampling::TopKThenTopP {
            k: 5,
            p: 0.7,
            temperature: 1.0,
        },
        Sampling::MinP {
            p: 0.2,
            temperature: 1.0,
        },
    ];
    let n = 20_000u64;
    for (mi, mode) in modes.into_iter().enumerate() {
        let t = match mode {
            Sampling::All { temperature }
            | Sampling::TopK { temperature, .. }
            | Sampling::TopP { temperature, .. }
            | Sampling::TopKThenTopP { temperature, .. }
            | Sampling::MinP { temperature, .. } => temperature,
            Sampling::ArgMax => unreachable!(),
        };
        let p = probabilities(&l, t).unwrap();
        let keep = kept(&p, mode);
        let mass: f64 = keep.iter().map(|&i| p[i] as f64).sum();
        let mut counts = vec![0u64; l.len()];
        for pos in 0..n {
            counts[choose(&l, mode, 1234 + mi as u64, pos).unwrap() as usize] += 1;
        }
        for (i, &c) in counts.iter().enumerate() {
            assert!(
                c == 0 || keep.contains(&i),
                "{mode:?}: token {i} drawn but not kept"
            );
        }
        let chi2: f64 = keep
            .iter()
            .map(|&i| {
                let e = n as f64 * p[i] as f64 / mass;
                (counts[i] as f64 - e).powi(2) / e
            })
            .sum();
        // The 0.9999 quantile of chi-square with up to 11 degrees of freedom is below 36.
        println!(
            "{mode:?}: {} kept, chi-square {chi2:.2} (df {})",
            keep.len(),
            keep.len() - 1
        );
        assert!(chi2 < 36.0, "{mode:?}: chi-square {chi2}");
    }
}

#[test]
fn argmax_ties_and_edge_cases() {
    let l = logits();
    // Tokens 1 and 9 share the largest logit: the lower id wins.
    assert_eq!(choose(&l, Sampling::ArgMax, 0, 0).unwrap(), 1);
    // Top-1 and a tiny top-p are the argmax (the same tie rule on equal probabilities).
    for pos in 0..50 {
        assert_eq!(
            choose(
                &l,
                Sampling::TopK {
                    k: 1,
                    temperature: 0.7
                },
                9,
                pos
            )
            .unwrap(),
            1
        );
        assert_eq!(
            choose(
                &l,
                Sampling::TopP {
                    p: 1e-9,
                    temperature: 0.7
                },
                9,
                pos
            )
            .unwrap(),
            1
        );
    }
    // min-p = 1 keeps the tokens equal to the largest: 1 and 9.
    let mut seen = [false; 12];
    for pos in 0..200 {
        seen[choose(
            &l,
            Sampling::MinP {
                p: 1.0,
                temperature: 1.0,
            },
            3,
            pos,
        )
        .unwrap() as usize] = true;
    }
    assert_eq!(seen.iter().filter(|&&s| s).count(), 2);
    assert!(seen[1] && seen[9]);
    // Bad input: NaN logits, no logits, k = 0, p out of range, a zero temperature.
    let mut bad = l.clone();
    bad[3] = f32::NAN;
    assert!(choose(&bad, Sampling::ArgMax, 0, 0).is_err());
    assert!(choose(&[], Sampling::ArgMax, 0, 0).is_err());
    assert!(
        choose(
            &l,
            Sampling::TopK {
                k: 0,
                temperature: 1.0
            },
            0,
            0
        )
        .is_err()
    );
    assert!(
        choose(
            &l,
            Sampling::TopP {
                p: 0.0,
                temperature: 1.0
            },
            0,
            0
        )
        .is_err()
    );
    assert!(choose(&l, Sampling::All { temperature: 0.0 }, 0, 0).is_err());
}

#[test]
fn the_same_seed_and_position_give_the_same_token() {
    let dev = Device::Cpu;
    let l = logits();
    let t = Tensor::new(l.as_slice(), &dev).unwrap();
    // The same values as bf16 give their own (exact) f32 logits.
    let mode = Sampling::TopP {
        p: 0.9,
        temperature: 0.8,
    };
    let mut a = LogitsProcessor::from_sampling(42, mode);
    let mut b = LogitsProcessor::from_sampling(42, mode);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let mut seq = vec![];
    for pos in 0..64 {
        let x = a.sample(&t).unwrap();
        let y = one.install(|| b.sample(&t.unsqueeze(0).unwrap()).unwrap());
        assert_eq!(x, y);
        assert_eq!(x, a.sample_at(&t, pos).unwrap());
        seq.push(x);
    }
    // Different seeds give different sequences.
    let mut c = LogitsProcessor::from_sampling(43, mode);
    let other: Vec<u32> = (0..64).map(|_| c.sample(&t).unwrap()).collect();
    assert_ne!(seq, other);
    // bf16 logits widen exactly: the f32 tensor of the same values gives the same tokens.
    let h = t.to_dtype(DType::BF16).unwrap();
    let hf = h.to_dtype(DType::F32).unwrap();
    let s = LogitsProcessor::from_sampling(5, mode);
    for pos in 0..32 {
        assert_eq!(
            s.sample_at(&h, pos).unwrap(),
            s.sample_at(&hf, pos).unwrap()
        );
    }
    // new(): no temperature is argmax; a temperature and top-p is TopP.
    assert_eq!(
        LogitsProcessor::new(0, None, Some(0.5)).sample(&t).unwrap(),
        1
    );
}
