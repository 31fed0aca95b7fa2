//! The correctly rounded matrix product over Burn tensors: the core's product
//! (`repro_core::matmul`: the definition, the three tiers and their proofs are there), read
//! in place through the Flex tensor's strides, with its backward pass.
//!
//! Gradients are products of the same definition: for out_s = a_s b_s over the output's
//! batch indices s, a's gradient at its batch index alpha is the exact sum over every s
//! that reads alpha (one, or several where a is broadcast) of g_s b_s^T, rounded once;
//! b's likewise of a_s^T g_s; a linear layer's bias gets the exact column sums of g. Where
//! nothing is broadcast these are candle-repro's backward products (`g b^T`, `a^T g`), bit
//! for bit; where a is broadcast, one rounding replaces candle's matmul-then-sum.

use crate::Error;
use crate::autodiff::{AdTensor, grad_like, on_autodiff_flex, register_grads};
use crate::flex::{Home, by_dtype, check_float, check_same, from_flex, from_vec, to_flex};
use burn_autodiff::checkpoint::base::Checkpointer;
use burn_autodiff::checkpoint::strategy::CheckpointStrategy;
use burn_autodiff::grads::Gradients;
use burn_autodiff::ops::{Backward, Ops, OpsKind};
use burn_backend::{Shape, TensorMetadata};
use burn_flex::{Flex, FlexTensor};
use burn_tensor::{Element, Tensor};
use repro_core::math::Format;
use repro_core::matmul::{Input, Problem, View};

/// The element types: the core's inputs and outputs, and Flex's storage.
trait Elem: Input + Format + Element + bytemuck::Pod {}
impl<T: Input + Format + Element + bytemuck::Pod> Elem for T {}

/// A Flex primitive whose strides are all nonnegative (a flipped view is copied first):
/// its storage is then read in place through [`View`]s.
fn readable(p: FlexTensor) -> FlexTensor {
    if p.layout().strides().iter().any(|&s| s < 0) {
        p.to_contiguous()
    } else {
        p
    }
}

/// A (.., rows, cols) operand in place: its storage, start offset, dims and strides.
struct Strided<'a, T> {
    data: &'a [T],
    start: usize,
    dims: Vec<usize>,
    strides: Vec<usize>,
}

impl<'a, T: Elem> Strided<'a, T> {
    /// Over a primitive made [`readable`].
    fn of(p: &'a FlexTensor) -> Self {
        let layout = p.layout();
        Strided {
            data: p.storage::<T>(),
            start: layout.start_offset(),
            dims: layout.shape().as_slice().to_vec(),
            strides: layout.strides().iter().map(|&s| s as usize).collect(),
        }
    }

    /// The (rows, cols) matrix at the output batch multi-index `idx` (a dim of 1 is
    /// broadcast: index 0), transposed if asked.
    fn view(&self, idx: &[usize], transposed: bool) -> View<'a, T> {
        let r = self.dims.len();
        let base = self.start
            + idx
                .iter()
                .zip(&self.dims[..r - 2])
                .zip(&self.strides)
                .map(|((&i, &d), &s)| if d == 1 { 0 } else { i * s })
                .sum::<usize>();
        let (rs, cs) = (self.strides[r - 2], self.strides[r - 1]);
        let (rs, cs) = if transposed { (cs, rs) } else { (rs, cs) };
        View {
            data: self.data,
            base,
            rs,
            cs,
        }
    }

    /// The row-major batch index, in this operand's own batch dims, that the output batch
    /// multi-index `idx` reads.
    fn batch_index(&self, idx: &[usize]) -> usize {
        let r = self.dims.len();
        idx.iter()
            .zip(&self.dims[..r - 2])
            .fold(0, |acc, (&i, &d)| acc * d + if d == 1 { 0 } else { i })
    }

    fn rows(&self) -> usize {
        self.dims[self.dims.len() - 2]
    }

    fn cols(&self) -> usize {
        self.dims[self.dims.len() - 1]
    }
}

/// The output's batch dims under Burn's broadcasting (each dim equal, or 1 on one side).
fn broadcast_batch(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| match (x, y) {
            _ if x == y => Some(x),
            (1, _) => Some(y),
            (_, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// Every multi-index of `dims`, row-major.
fn multi_indices(dims: &[usize]) -> Vec<Vec<usize>> {
    let total: usize = dims.iter().product();
    (0..total)
        .map(|mut t| {
            let mut idx = vec![0; dims.len()];
            for (i, &d) in idx.iter_mut().zip(dims).rev() {
                *i = t % d;
                t /= d;
            }
            idx
        })
        .collect()
}

/// The product of views, one per batch index, with an optional bias: the core's product.
fn product<T: Elem>(
    (m, k, n): (usize, usize, usize),
    a: Vec<View<T>>,
    b: Vec<View<T>>,
    bias: Option<Vec<f32>>,
) -> Vec<T> {
    let p = Problem::new((m, k, n), a, b, bias)
        .expect("views built from the operands' own layouts fit their storage");
    repro_core::matmul::matmul::<T, T>(&p)
}

/// sum_s L_s R_s over a group of (m, q) by (q, n) products, exactly, rounded once: one
/// product with the group's inner dimensions side by side (copies where the group has
/// more than one member: exact, so the bits are those of the definition).
fn summed_product<T: Elem>(
    (m, q, n): (usize, usize, usize),
    left: &[View<T>],
    right: &[View<T>],
) -> Vec<T> {
    if left.len() == 1 {
        return product((m, q, n), vec![left[0]], vec![right[0]], None);
    }
    let s = left.len();
    let at = |v: &View<T>, r: usize, c: usize| v.data[v.base + r * v.rs + c * v.cs];
    // L_cat (m, s q): row i is L_1[i, :] .. L_s[i, :]; R_cat (s q, n): R_1 over .. R_s.
    let l_cat: Vec<T> = (0..m)
        .flat_map(|i| {
            left.iter()
                .flat_map(move |l| (0..q).map(move |c| at(l, i, c)))
        })
        .collect();
    let r_cat: Vec<T> = right
        .iter()
        .flat_map(|r| (0..q).flat_map(move |row| (0..n).map(move |j| at(r, row, j))))
        .collect();
    let lv = View {
        data: &l_cat[..],
        base: 0,
        rs: s * q,
        cs: 1,
    };
    let rv = View {
        data: &r_cat[..],
        base: 0,
        rs: n,
        cs: 1,
    };
    product((m, s * q, n), vec![lv], vec![rv], None)
}

/// The output's batch dims and (m, k, n) of a product.
type ProductShape = (Vec<usize>, (usize, usize, usize));

/// The checked shapes of a product.
fn shapes(op: &'static str, a: &[usize], b: &[usize]) -> Result<ProductShape, Error> {
    let r = a.len();
    let invalid = |why: &str| Error::Invalid {
        op,
        message: format!("{why}: lhs {a:?}, rhs {b:?}"),
    };
    if r < 2 {
        return Err(invalid("the operands need rank >= 2"));
    }
    if a[r - 1] != b[r - 2] {
        return Err(invalid("the inner dimensions differ"));
    }
    let batch = broadcast_batch(&a[..r - 2], &b[..r - 2])
        .ok_or_else(|| invalid("the batch dimensions do not broadcast"))?;
    Ok((batch, (a[r - 2], a[r - 1], b[r - 1])))
}

/// out = a b on Flex primitives (shapes checked).
fn forward<T: Elem>(a: FlexTensor, b: FlexTensor) -> FlexTensor {
    let (a, b) = (readable(a), readable(b));
    let (sa, sb) = (Strided::<T>::of(&a), Strided::<T>::of(&b));
    let r = sa.dims.len();
    let batch = broadcast_batch(&sa.dims[..r - 2], &sb.dims[..r - 2]).expect("checked");
    let idx = multi_indices(&batch);
    let (m, k, n) = (sa.rows(), sa.cols(), sb.cols());
    let av = idx.iter().map(|i| sa.view(i, false)).collect();
    let bv = idx.iter().map(|i| sb.view(i, false)).collect();
    let out = product((m, k, n), av, bv, None);
    let mut dims = batch;
    dims.extend([m, n]);
    from_vec(out, Shape::from(dims))
}

/// One operand's gradient: for each of its batch indices, the summed product (`one` gives
/// the pair of factors of an output batch index) over the output indices that read it.
fn operand_grad<'a, T: Elem>(
    s: &Strided<'a, T>,
    idx: &[Vec<usize>],
    one: impl Fn(&[usize]) -> (View<'a, T>, View<'a, T>),
    dims: (usize, usize, usize),
) -> FlexTensor {
    let r = s.dims.len();
    let count: usize = s.dims[..r - 2].iter().product();
    let mut groups: Vec<Vec<&[usize]>> = vec![Vec::new(); count];
    for i in idx {
        groups[s.batch_index(i)].push(i);
    }
    let mut out = Vec::with_capacity(count * s.rows() * s.cols());
    for group in groups {
        let (l, rt): (Vec<_>, Vec<_>) = group.into_iter().map(&one).unzip();
        out.extend(summed_product(dims, &l, &rt));
    }
    from_vec(out, Shape::from(s.dims.clone()))
}

/// The gradients of a and b from out's gradient g (contiguous, out's shape), each only
/// if asked.
fn backward<T: Elem>(
    a: &FlexTensor,
    b: &FlexTensor,
    g: FlexTensor,
    want: [bool; 2],
) -> [Option<FlexTensor>; 2] {
    let g = crate::flex::contiguous(g);
    let (sa, sb) = (Strided::<T>::of(a), Strided::<T>::of(b));
    let sg = Strided::<T>::of(&g);
    let r = sa.dims.len();
    let batch = broadcast_batch(&sa.dims[..r - 2], &sb.dims[..r - 2]).expect("checked");
    let idx = multi_indices(&batch);
    let (m, k, n) = (sa.rows(), sa.cols(), sb.cols());
    // a's: g_s (m, n) b_s^T (n, k); b's: a_s^T (k, m) g_s (m, n).
    let ga = want[0].then(|| {
        operand_grad(
            &sa,
            &idx,
            |i| (sg.view(i, false), sb.view(i, true)),
            (m, n, k),
        )
    });
    let gb = want[1].then(|| {
        operand_grad(
            &sb,
            &idx,
            |i| (sa.view(i, true), sg.view(i, false)),
            (k, m, n),
        )
    });
    [ga, gb]
}

/// The backward step of `matmul`.
#[derive(Debug)]
struct MatmulBackward;

impl Backward<Flex, 2> for MatmulBackward {
    /// a and b (made readable).
    type State = (FlexTensor, FlexTensor);

    fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (a, b) = ops.state;
        let g = grad_like(grads.consume::<Flex>(&ops.node), &a);
        let parents = ops.parents.map(|p| p.map(|node| node.id));
        let want = parents.map(|p| p.is_some());
        let computed = by_dtype!(a.dtype(), backward(&a, &b, g, want));
        register_grads(grads, parents, computed);
    }
}

fn tracked<C: CheckpointStrategy>(a: AdTensor<C>, b: AdTensor<C>) -> AdTensor<C> {
    let guards = [a.node(), b.node()];
    let (a, b) = (readable(a.into_primitive()), readable(b.into_primitive()));
    let y = by_dtype!(a.dtype(), forward(a.clone(), b.clone()));
    match MatmulBackward
        .prepare::<C>(guards)
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => prep.finish((a, b), y),
        OpsKind::UnTracked(prep) => prep.finish(y),
    }
}

fn run<const D: usize>(a: Tensor<D>, b: Tensor<D>) -> Result<Tensor<D>, Error> {
    let op = "matmul";
    if a.is_autodiff() {
        if !(a.is_tracked() || b.is_tracked()) {
            return Ok(run(a.inner(), b.inner())?.autodiff());
        }
        return on_autodiff_flex!(op, [a, b], |C| tracked::<C>(a, b));
    }
    let dtype = a.dtype();
    let (ap, home): (FlexTensor, Home) = to_flex(op, a)?;
    let (bp, _) = to_flex(op, b)?;
    Ok(from_flex(by_dtype!(dtype, forward(ap, bp)), &home))
}

/// a b, correctly rounded (the signature of `Tensor::matmul`): a (.., m, k) times b (..,
/// k, n), the batch dimensions broadcast as Burn does (equal, or 1 on one side), f32, bf16
/// or f16. Every output is the exact sum of the exact products rounded once to the dtype
/// (`repro_core::matmul`), so no batch, blocking, thread count or vector width changes a
/// bit: the bits of candle-repro's `matmul`. Strided operands (a transposed weight, a
/// narrowed view, a broadcast dimension) are read in place. Differentiable on
/// `Device::flex().autodiff()`, each gradient a product of the same definition (the module
/// header).
///
/// ```
/// use burn_tensor::{Device, Tensor};
/// // 1e8 + 1 - 1e8: a running f32 sum loses the 1; the exact sum rounded once keeps it.
/// let dev = Device::flex();
/// let a = Tensor::<2>::from_floats([[1e8, 1.0, -1e8]], &dev);
/// let b = Tensor::<2>::from_floats([[1.0], [1.0], [1.0]], &dev);
/// let y = burn_repro::matmul(a, b).unwrap().into_data();
/// assert_eq!(y.as_slice::<f32>().unwrap(), &[1.0]);
/// ```
pub fn matmul<const D: usize>(a: Tensor<D>, b: Tensor<D>) -> Result<Tensor<D>, Error> {
    let op = "matmul";
    check_float(op, a.dtype())?;
    check_same(op, &a, &b)?;
    shapes(op, &a.dims(), &b.dims())?;
    run(a, b)
}

/// x W (+ bias) with one rounding over the last dimension of x (the layout of
/// `burn::nn::Linear`: W is (d_input, d_output)): `out[.., j] = round(bias[j] + sum_q
/// x[.., q] W[q, j])`. The rows of x are one product (the bits of candle-repro's `Linear` with the
/// weight W^T). Differentiable: W's gradient is the exact sum over every row, rounded once;
/// the bias's the exact column sums of the output's gradient.
///
/// ```
/// use burn_tensor::{Device, Tensor};
/// let dev = Device::flex();
/// // 1 + 2^-24 + 2^-24: rounding x W first (a tie, to 1) loses the bias; one rounding keeps it.
/// let t = 2f32.powi(-24);
/// let x = Tensor::<2>::from_floats([[1.0, t]], &dev);
/// let w = Tensor::<2>::from_floats([[1.0], [1.0]], &dev);
/// let b = Tensor::<1>::from_floats([t], &dev);
/// let y = burn_repro::linear(x, w, Some(b)).unwrap().into_data();
/// assert_eq!(y.as_slice::<f32>().unwrap(), &[1.0 + 2f32.powi(-23)]);
/// ```
pub fn linear<const D: usize>(
    x: Tensor<D>,
    weight: Tensor<2>,
    bias: Option<Tensor<1>>,
) -> Result<Tensor<D>, Error> {
    let op = "linear";
    check_float(op, x.dtype())?;
    check_same(op, &x, &weight)?;
    if let Some(b) = &bias {
        check_same(op, &x, b)?;
    }
    let [k, n] = weight.dims();
    let xd = x.dims();
    if D == 0 || xd[D - 1] != k || bias.as_ref().is_some_and(|b| b.dims() != [n]) {
        return Err(Error::Invalid {
            op,
            message: format!(
                "shape mismatch: x {xd:?}, weight {:?} (d_input, d_output), bias {:?}",
                [k, n],
                bias.as_ref().map(|b| b.dims())
            ),
        });
    }
    linear_run(x, weight, bias)
}

/// x (rows, k) W (k, n) + bias on Flex primitives; x is folded to its rows (a copy only
/// where its layout cannot be folded).
fn linear_forward<T: Elem>(x: FlexTensor, w: FlexTensor, bias: Option<FlexTensor>) -> FlexTensor {
    let (x, w) = (crate::flex::contiguous(x), readable(w));
    let dims = x.shape().as_slice().to_vec();
    let k = *dims.last().expect("rank >= 1");
    let rows = dims[..dims.len() - 1].iter().product();
    let sw = Strided::<T>::of(&w);
    let n = sw.cols();
    let xv = View {
        data: crate::flex::values::<T>(&x),
        base: 0,
        rs: k,
        cs: 1,
    };
    let bias = bias.map(|b| {
        let b = crate::flex::contiguous(b);
        crate::flex::values::<T>(&b)
            .iter()
            .map(|v| v.widen())
            .collect()
    });
    let out = product((rows, k, n), vec![xv], vec![sw.view(&[], false)], bias);
    let mut out_dims = dims;
    *out_dims.last_mut().expect("rank >= 1") = n;
    from_vec(out, Shape::from(out_dims))
}

/// The gradients of x, W and the bias (each if asked) from out's gradient g.
fn linear_backward<T: Elem>(
    x: &FlexTensor,
    w: &FlexTensor,
    g: FlexTensor,
    want: [bool; 3],
) -> [Option<FlexTensor>; 3] {
    let (x, g) = (
        crate::flex::contiguous(x.clone()),
        crate::flex::contiguous(g),
    );
    let dims = x.shape().as_slice().to_vec();
    let k = *dims.last().expect("rank >= 1");
    let rows: usize = dims[..dims.len() - 1].iter().product();
    let sw = Strided::<T>::of(w);
    let n = sw.cols();
    let (xs, gs) = (crate::flex::values::<T>(&x), crate::flex::values::<T>(&g));
    let gv = row_major::<T>(gs, n);
    // x's: g (rows, n) W^T (n, k); W's: x^T (k, rows) g (rows, n); the bias's: 1 (1, rows) g.
    let gx = want[0].then(|| {
        let out = product((rows, n, k), vec![gv], vec![sw.view(&[], true)], None);
        from_vec(out, x.shape())
    });
    let gw = want[1].then(|| {
        let xt = View {
            data: xs,
            base: 0,
            rs: 1,
            cs: k,
        };
        from_vec(product((k, rows, n), vec![xt], vec![gv], None), w.shape())
    });
    let gb = want[2].then(|| {
        let ones = vec![<T as Format>::round(1.0); rows];
        let out = product(
            (1, rows, n),
            vec![row_major::<T>(&ones, rows)],
            vec![gv],
            None,
        );
        from_vec(out, Shape::from(vec![n]))
    });
    [gx, gw, gb]
}

/// A contiguous (rows, cols) matrix.
fn row_major<T>(data: &[T], cols: usize) -> View<'_, T> {
    View {
        data,
        base: 0,
        rs: cols,
        cs: 1,
    }
}

/// The backward step of `linear`.
#[derive(Debug)]
struct LinearBackward;

impl<const N: usize> Backward<Flex, N> for LinearBackward {
    /// x and W (made readable).
    type State = (FlexTensor, FlexTensor);

    fn backward(self, ops: Ops<Self::State, N>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (x, w) = ops.state;
        let g = grad_like(grads.consume::<Flex>(&ops.node), &x);
        let parents = ops.parents.map(|p| p.map(|node| node.id));
        // x, W and (when N = 3) the bias.
        let mut want = [false; 3];
        for (w, p) in want.iter_mut().zip(&parents) {
            *w = p.is_some();
        }
        let computed = by_dtype!(x.dtype(), linear_backward(&x, &w, g, want));
        register_grads(grads, parents, computed);
    }
}

fn linear_tracked<C: CheckpointStrategy, const N: usize>(inputs: [AdTensor<C>; N]) -> AdTensor<C> {
    let guards = inputs.each_ref().map(|t| t.node());
    let [x, w, b] = {
        let mut it = inputs.into_iter().map(|t| t.into_primitive());
        [it.next(), it.next(), it.next()]
    };
    let (x, w) = (x.expect("x"), readable(w.expect("w")));
    let y = by_dtype!(x.dtype(), linear_forward(x.clone(), w.clone(), b));
    match LinearBackward
        .prepare::<C>(guards)
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => prep.finish((x, w), y),
        OpsKind::UnTracked(prep) => prep.finish(y),
    }
}

fn linear_run<const D: usize>(
    x: Tensor<D>,
    w: Tensor<2>,
    b: Option<Tensor<1>>,
) -> Result<Tensor<D>, Error> {
    let op = "linear";
    if x.is_autodiff() {
        let tracked_any =
            x.is_tracked() || w.is_tracked() || b.as_ref().is_some_and(|b| b.is_tracked());
        if !tracked_any {
            return Ok(linear_run(x.inner(), w.inner(), b.map(|b| b.inner()))?.autodiff());
        }
        return match b {
            Some(b) => on_autodiff_flex!(op, [x, w, b], |C| linear_tracked::<C, 3>([x, w, b])),
            None => on_autodiff_flex!(op, [x, w], |C| linear_tracked::<C, 2>([x, w])),
        };
    }
    let dtype = x.dtype();
    let (xp, home) = to_flex(op, x)?;
    let (wp, _) = to_flex(op, w)?;
    let bp = match b {
        Some(b) => Some(to_flex(op, b)?.0),
        None => None,
    };
    Ok(from_flex(
        by_dtype!(dtype, linear_forward(xp, wp, bp)),
        &home,
    ))
}
