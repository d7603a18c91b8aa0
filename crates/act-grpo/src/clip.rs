//! Global-norm gradient clipping over a whole module, as PyTorch's `clip_grad_norm_` does.

use burn::module::{Module, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::prelude::*;

/// Collects the squared L2 norm of every float parameter's gradient.
struct SquaredNorm<'a> {
    grads: &'a GradientsParams,
    total: Option<Tensor<1>>,
}

impl ModuleVisitor for SquaredNorm<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        if let Some(grad) = self.grads.get::<D>(param.id) {
            let sum = grad.square().sum();
            self.total = Some(match self.total.take() {
                Some(total) => total + sum,
                None => sum,
            });
        }
    }
}

/// Multiplies every gradient by a constant.
struct Scale<'a> {
    grads: &'a mut GradientsParams,
    factor: f64,
}

impl ModuleVisitor for Scale<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        if let Some(grad) = self.grads.remove::<D>(param.id) {
            self.grads.register::<D>(param.id, grad.mul_scalar(self.factor));
        }
    }
}

/// The global L2 norm of the gradients of `module`'s parameters (NaN or inf if any gradient is).
pub fn global_grad_norm<M: Module>(module: &M, grads: &GradientsParams) -> f64 {
    let mut visitor = SquaredNorm { grads, total: None };
    module.visit(&mut visitor);
    match visitor.total {
        Some(total) => (total.into_scalar::<f32>() as f64).sqrt(),
        None => 0.0,
    }
}

/// Scales `grads` so that their global norm is at most `max_norm` (factor `max_norm / (norm + 1e-6)`, as PyTorch);
/// returns the norm before clipping. Non-finite norms are returned without touching the gradients: the caller
/// decides what to do with a broken update.
///
/// Burn's `GradientClipping::Norm` clips each parameter tensor by its own norm, which changes the update's
/// direction; trainers in the GRPO literature clip the norm of all gradients taken together.
pub fn clip_grad_norm<M: Module>(module: &M, grads: &mut GradientsParams, max_norm: f64) -> f64 {
    let norm = global_grad_norm(module, grads);
    if norm.is_finite() {
        let factor = max_norm / (norm + 1e-6);
        if factor < 1.0 {
            module.visit(&mut Scale { grads, factor });
        }
    }
    norm
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::nn::{Linear, LinearConfig};

    #[derive(Module, Debug)]
    struct Two {
        a: Linear,
        b: Linear,
    }

    fn grads(device: &Device) -> (Two, GradientsParams) {
        let model = Two { a: LinearConfig::new(2, 2).init(device), b: LinearConfig::new(2, 1).init(device) };
        let x = Tensor::<2>::from_data(TensorData::new(vec![1.0f32, -2.0, 0.5, 3.0], [2, 2]), device);
        let loss = model.b.forward(model.a.forward(x)).sum().mul_scalar(3.0);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        (model, grads)
    }

    fn flat(model: &Two, grads: &GradientsParams) -> Vec<f32> {
        let mut out = Vec::new();
        for p in [&model.a.weight, &model.b.weight] {
            out.extend(grads.get::<2>(p.id).unwrap().into_data().convert::<f32>().try_to_vec::<f32>().unwrap());
        }
        for p in [&model.a.bias, &model.b.bias] {
            out.extend(
                grads
                    .get::<1>(p.as_ref().unwrap().id)
                    .unwrap()
                    .into_data()
                    .convert::<f32>()
                    .try_to_vec::<f32>()
                    .unwrap(),
            );
        }
        out
    }

    #[test]
    fn clips_the_global_norm_and_keeps_the_direction() {
        let device = Device::flex().autodiff();
        let (model, mut grads) = grads(&device);
        let before = flat(&model, &grads);
        let norm = before.iter().map(|g| (*g as f64).powi(2)).sum::<f64>().sqrt();
        assert!((global_grad_norm(&model, &grads) - norm).abs() < 1e-4 * norm);
        let returned = clip_grad_norm(&model, &mut grads, 0.5);
        assert!((returned - norm).abs() < 1e-4 * norm);
        let after = flat(&model, &grads);
        let new_norm = after.iter().map(|g| (*g as f64).powi(2)).sum::<f64>().sqrt();
        assert!((new_norm - 0.5).abs() < 1e-4, "{new_norm}");
        // Every component scaled by the same factor: the direction is kept (per-tensor clipping would not).
        let factor = 0.5 / (norm + 1e-6);
        for (b, a) in before.iter().zip(&after) {
            assert!((*b as f64 * factor - *a as f64).abs() < 1e-5);
        }
    }

    #[test]
    fn small_gradients_are_untouched() {
        let device = Device::flex().autodiff();
        let (model, mut grads) = grads(&device);
        let before = flat(&model, &grads);
        let norm = clip_grad_norm(&model, &mut grads, 1e9);
        assert!(norm > 0.0);
        assert_eq!(flat(&model, &grads), before);
    }
}
