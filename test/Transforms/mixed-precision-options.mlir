// RUN: memopt-opt %s --memopt-mixed-precision="loss-scale=128" | FileCheck %s --check-prefix=STATIC
// RUN: memopt-opt %s --memopt-mixed-precision="loss-scale=none" | FileCheck %s --check-prefix=NONE
// RUN: memopt-opt %s --memopt-mixed-precision="init-scale=1024 growth-factor=4 backoff-factor=0.25 growth-interval=3" | FileCheck %s --check-prefix=OPTS
// RUN: memopt-opt %s --memopt-mixed-precision="loss-scale=128" --memopt-autodiff | FileCheck %s --check-prefix=STEP
// RUN: memopt-opt %s --memopt-mixed-precision="init-scale=1024 growth-interval=3" --memopt-autodiff=optimizer=adam | FileCheck %s --check-prefix=ADAM
// RUN: memopt-opt %s --memopt-mixed-precision="loss-scale=128" --memopt-autodiff=optimizer=none | FileCheck %s --check-prefix=GRADS

// STATIC: memopt.loss_scale = {backoff_factor = 5.000000e-01 : f64, dynamic = false, growth_factor = 2.000000e+00 : f64, growth_interval = 2000 : i64, init_scale = 1.280000e+02 : f64}
// NONE-NOT: memopt.loss_scale
// OPTS: memopt.loss_scale = {backoff_factor = 2.500000e-01 : f64, dynamic = true, growth_factor = 4.000000e+00 : f64, growth_interval = 3 : i64, init_scale = 1.024000e+03 : f64}

// A static scale: the backward pass starts from a constant 128, gradients
// are checked and unscaled by it, updates are skipped on overflow, and no
// state is added. A weight's gradient is checked in f16 (the cast back to
// f32 is exact, so the flag is the same), and the update reads it in f16
// and unscales it itself: no f32 copy of it is made.
// STEP-LABEL: func.func @step
// STEP-NOT: memopt.initial_value
// STEP: %[[S:.*]] = arith.constant dense<1.280000e+02> : tensor<f32>
// STEP: memopt.cross_entropy_backward %[[S]]
// STEP-NOT: memopt.cast %{{.*}} : tensor<4x8xf16> to tensor<4x8xf32>
// STEP: %[[F:.*]] = memopt.found_inf %[[G16:.*]] : (tensor<4x8xf16>) -> tensor<f32>
// STEP-NOT: memopt.unscale
// STEP: memopt.sgd_update %arg0, %[[G16]], %[[F]] unscale(%[[S]]) {{.*}} : (tensor<4x8xf32>, tensor<4x8xf16>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
// STEP-NOT: update_loss_scale
// STEP-NOT: memopt.loss_scale

// Gradients as outputs with a static scale: unscaled, and nothing to skip,
// so no overflow check.
// GRADS-LABEL: func.func @step
// GRADS-NOT: memopt.found_inf
// GRADS: %[[U:.*]] = memopt.unscale
// GRADS: return %{{.*}}, %[[U]]

// Dynamic scaling with Adam: the scale and the growth counter are optimizer
// state (the scale starts at init-scale), the step count does not advance
// on a skipped step, and the new scale and counter update their arguments.
// ADAM-LABEL: func.func @step
// ADAM-SAME: %[[SCALE:arg[0-9]+]]: tensor<f32> {memopt.initial_value = 1.024000e+03 : f64, memopt.optimizer_state}
// ADAM-SAME: %[[N:arg[0-9]+]]: tensor<i32> {memopt.optimizer_state}
// ADAM-SAME: %[[T:arg[0-9]+]]: tensor<f32> {memopt.optimizer_state}
// ADAM-SAME: tensor<f32> {memopt.updates = 3 : i64}, tensor<i32> {memopt.updates = 4 : i64}
// ADAM: memopt.cross_entropy_backward %[[SCALE]]
// ADAM: %[[F:.*]] = memopt.found_inf %[[G16:.*]] :
// ADAM-NOT: memopt.unscale
// ADAM: %[[T1:.*]] = memopt.add %[[T]]
// ADAM: %[[T2:.*]] = memopt.select %[[F]], %[[T]], %[[T1]]
// ADAM: memopt.adam_update %arg0, %[[G16]], %{{.*}}, %{{.*}}, %[[T2]], %[[F]] unscale(%[[SCALE]])
// ADAM: %{{.*}}, %{{.*}} = memopt.update_loss_scale %[[SCALE]], %[[N]], %[[F]] {backoff_factor = 5.000000e-01 : f64, growth_factor = 2.000000e+00 : f64, growth_interval = 3 : i64}
func.func @step(%w: tensor<4x8xf32> {memopt.param}, %x: tensor<2x8xf32>,
                %y: tensor<2xi64>) -> tensor<f32> {
  %o = memopt.linear %x, %w : tensor<2x8xf32>, tensor<4x8xf32>
  %l = memopt.cross_entropy %o, %y : tensor<2x4xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
