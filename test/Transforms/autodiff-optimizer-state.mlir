// RUN: memopt-opt %s --memopt-autodiff=optimizer=adam8bit | memopt-opt | FileCheck %s --check-prefix=ADAM8
// RUN: memopt-opt %s --memopt-autodiff=optimizer=adamw8bit | FileCheck %s --check-prefix=ADAMW8
// RUN: memopt-opt %s "--memopt-autodiff=optimizer=adafactor lr=0.01 clip-threshold=2 decay-rate=-0.5 scale-parameter=false" | memopt-opt | FileCheck %s --check-prefix=FACTOR
// RUN: memopt-opt %s --memopt-autodiff=optimizer=adam --memopt-report -o /dev/null | FileCheck %s --check-prefix=ADAM-REPORT
// RUN: memopt-opt %s --memopt-autodiff=optimizer=adam8bit --memopt-report -o /dev/null | FileCheck %s --check-prefix=ADAM8-REPORT
// RUN: memopt-opt %s --memopt-autodiff=optimizer=adafactor --memopt-report -o /dev/null | FileCheck %s --check-prefix=FACTOR-REPORT
// RUN: memopt-opt %s "--memopt-autodiff=optimizer=adam state-dtype=bf16" | memopt-opt | FileCheck %s --check-prefix=BF16
// RUN: memopt-opt %s "--memopt-autodiff=optimizer=momentum state-dtype=bf16" | FileCheck %s --check-prefix=BF16MOM
// RUN: memopt-opt %s "--memopt-autodiff=optimizer=adam state-dtype=bf16" --memopt-report -o /dev/null | FileCheck %s --check-prefix=BF16-REPORT
// RUN: not memopt-opt %s "--memopt-autodiff=optimizer=adam state-dtype=fp8" 2>&1 | FileCheck %s --check-prefix=BADSTATE
// RUN: not memopt-opt %s "--memopt-autodiff=optimizer=adafactor state-dtype=bf16" 2>&1 | FileCheck %s --check-prefix=BF16FACTOR
// RUN: not memopt-opt %s "--memopt-autodiff=optimizer=adafactor clip-threshold=0" 2>&1 | FileCheck %s --check-prefix=BADCLIP
// RUN: not memopt-opt %s "--memopt-autodiff=optimizer=adafactor decay-rate=0.8" 2>&1 | FileCheck %s --check-prefix=BADDECAY

// The optimizers whose state is smaller than the parameters: a 64x64
// weight (4096 elements) and a 64-element bias.

// 8-bit Adam: the weight's moments as ui8 codes and one f32 maximum per
// 256 elements; the bias (under 4096 elements) keeps Adam's f32 moments.
// ADAM8-LABEL: func.func @f
// ADAM8-SAME:    %[[STEP:[^:]*]]: tensor<f32> {memopt.optimizer_state}, %[[M:[^:]*]]: tensor<64x64xui8> {memopt.optimizer_state}, %[[MA:[^:]*]]: tensor<16xf32> {memopt.optimizer_state}, %[[V:[^:]*]]: tensor<64x64xui8> {memopt.optimizer_state}, %[[VA:[^:]*]]: tensor<16xf32> {memopt.optimizer_state}, %{{[^:]*}}: tensor<64xf32> {memopt.optimizer_state}, %{{[^:]*}}: tensor<64xf32> {memopt.optimizer_state})
// ADAM8:         memopt.adam8bit_update %arg0, %{{.*}}, %[[M]], %[[MA]], %[[V]], %[[VA]], %{{.*}} {lr = 1.000000e-03 : f64, memopt.inplace = 0 : i64}
// ADAM8:         memopt.adam_update %arg1, %{{.*}} {lr = 1.000000e-03 : f64, memopt.inplace = 0 : i64}
// ADAMW8-LABEL: func.func @f
// ADAMW8:         memopt.adam8bit_update {{.*}} {decoupled_weight_decay = true, lr = 1.000000e-03 : f64, memopt.inplace = 0 : i64, weight_decay = 1.000000e-02 : f64}
// ADAMW8:         memopt.adam_update {{.*}} {decoupled_weight_decay = true, lr = 1.000000e-03 : f64, memopt.inplace = 0 : i64, weight_decay = 1.000000e-02 : f64}

// Adafactor: the weight's row and column factors, the bias's second
// moment, then the step count.
// FACTOR-LABEL: func.func @f
// FACTOR-SAME:    %[[STEP:[^:]*]]: tensor<f32> {memopt.optimizer_state}, %[[ROW:[^:]*]]: tensor<64xf32> {memopt.optimizer_state}, %[[COL:[^:]*]]: tensor<64xf32> {memopt.optimizer_state}, %[[V:[^:]*]]: tensor<64xf32> {memopt.optimizer_state})
// FACTOR:         memopt.adafactor_update %arg0, %{{.*}}, [%[[ROW]], %[[COL]]], %{{.*}} {clip_threshold = 2.000000e+00 : f64, decay_rate = -5.000000e-01 : f64, lr = 1.000000e-02 : f64, memopt.inplace = 0 : i64, scale_parameter = false}
// FACTOR:         memopt.adafactor_update %arg1, %{{.*}}, [%[[V]]], %{{.*}} {clip_threshold = 2.000000e+00 : f64, decay_rate = -5.000000e-01 : f64, lr = 1.000000e-02 : f64, memopt.inplace = 0 : i64, scale_parameter = false}

// state-dtype=bf16: Adam's moments and the momentum buffer in bf16, the
// arithmetic in the parameter's type.
// BF16-LABEL: func.func @f
// BF16-SAME:    tensor<f32> {memopt.optimizer_state}, %[[M:[^:]*]]: tensor<64x64xbf16> {memopt.optimizer_state}, %[[V:[^:]*]]: tensor<64x64xbf16> {memopt.optimizer_state}
// BF16:         memopt.adam_update %arg0, %{{.*}}, %[[M]], %[[V]], %{{.*}} : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<f32>) -> (tensor<64x64xf32>, tensor<64x64xbf16>, tensor<64x64xbf16>)
// BF16MOM:      memopt.sgd_momentum_update {{.*}} : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xbf16>) -> (tensor<64x64xf32>, tensor<64x64xbf16>)
// Half of Adam's: 2 x 4160 bf16 + the step = 16644.
// BF16-REPORT: "optimizer_state_bytes": 16644,
// BADSTATE: error: memopt-autodiff: state-dtype must be 'param' or 'bf16', got 'fp8'
// BF16FACTOR: error: memopt-autodiff: state-dtype=bf16 applies to momentum, adam and adamw, not adafactor

// Optimizer state bytes. Adam: 2 x 4160 f32 + the step = 33284.
// ADAM-REPORT: "optimizer_state_bytes": 33284,
// 8-bit: codes 2 x 4096 + maxima 2 x 16 x 4 + the bias's 2 x 64 x 4 + 4.
// ADAM8-REPORT: "optimizer_state_bytes": 8836,
// Adafactor: rows 64 + columns 64 + the bias's 64, f32, + 4.
// FACTOR-REPORT: "optimizer_state_bytes": 772,

// BADCLIP: error: memopt-autodiff: clip-threshold must be a finite number > 0, got 0
// BADDECAY: error: memopt-autodiff: decay-rate must be a finite number < 0, got 0.8
func.func @f(%w: tensor<64x64xf32> {memopt.param}, %b: tensor<64xf32> {memopt.param}, %x: tensor<4x64xf32>, %t: tensor<4x64xf32>) -> tensor<f32> {
  %y = memopt.linear %x, %w, %b : tensor<4x64xf32>, tensor<64x64xf32>, tensor<64xf32>
  %l = memopt.mse_loss %y, %t : tensor<4x64xf32>
  return %l : tensor<f32>
}
