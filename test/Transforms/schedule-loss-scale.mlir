// RUN: memopt-opt %examples/mlp.mlir --memopt-mixed-precision --memopt-autodiff --memopt-schedule | FileCheck %s

// Under dynamic loss scaling every update waits for found_inf, which reads
// each weight's gradient in f16. The updates read the same f16 gradients and
// unscale them themselves: no f32 copy of a gradient is made, and each f16
// gradient is freed right after its update.
// CHECK-LABEL: func.func @mlp_train
// CHECK-NOT:   memopt.unscale
// CHECK:       %[[F:.*]] = memopt.found_inf %[[G:[^,]*]], {{.*}}tensor<256x784xf16>
// CHECK-NOT:   memopt.cast {{.*}} : tensor<{{[0-9x]+}}xf16> to tensor<{{[0-9x]+}}xf32>
// CHECK-NOT:   memopt.unscale
// CHECK:       memopt.sgd_update %arg0, %[[G]], %[[F]] unscale(%{{.*}}) {{.*}} : (tensor<256x784xf32>, tensor<256x784xf16>, tensor<f32>, tensor<f32>) -> tensor<256x784xf32>
// CHECK-NEXT:  memopt.free %[[G]]
// CHECK:       memopt.update_loss_scale
