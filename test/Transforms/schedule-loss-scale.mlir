// RUN: memopt-opt %examples/mlp.mlir --memopt-mixed-precision --memopt-autodiff --memopt-schedule | FileCheck %s

// Under dynamic loss scaling every update waits for found_inf, which reads
// each weight's gradient in f16, before its cast back to f32. The scheduler
// runs the casts and unscales lazily, after the check: each f32 gradient
// exists just before its update, not all of them at once, and is unscaled in
// place (its only reader).
// CHECK-LABEL: func.func @mlp_train
// CHECK:       memopt.found_inf {{.*}}tensor<256x784xf16>
// CHECK-NOT:   memopt.sgd_update
// CHECK:       memopt.update_loss_scale
// CHECK:       memopt.cast {{.*}} : tensor<{{[0-9x]+}}xf16> to tensor<{{[0-9x]+}}xf32>
// CHECK-NEXT:  memopt.free
// CHECK-NEXT:  memopt.unscale {{.*}}memopt.inplace = 0
// CHECK-NEXT:  memopt.sgd_update
// CHECK:       %[[G:.*]] = memopt.cast {{.*}} : tensor<256x784xf16> to tensor<256x784xf32>
// CHECK-NEXT:  memopt.free
// CHECK-NEXT:  memopt.unscale %[[G]], {{.*}}memopt.inplace = 0
// CHECK-NEXT:  memopt.sgd_update
// CHECK:       memopt.free %[[G]]
