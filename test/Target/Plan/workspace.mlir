// Convolutions and losses take their scratch memory from the plan: each
// step's "workspace" is a slice of the arena reserved for that step alone.
// RUN: memopt-opt %s --memopt-autodiff=optimizer=sgd --memopt-schedule --memopt-plan-memory --convert-memopt-to-memrt | memopt-translate --memrt-to-plan | FileCheck %s
// The runtime accepts the plan: every workspace is inside the arena and
// overlaps no tensor live at its step.
// RUN: memopt-run %s --steps=2 --emit-plan=%t.plan.json | FileCheck %s --check-prefix=TRAIN
// RUN: %python -c "import json,sys; p=json.load(open(sys.argv[1])); ws=[s['workspace']['bytes'] for s in p['steps'] if 'workspace' in s]; assert ws == [2592, 16, 2592], ws" %t.plan.json

// The im2col matrix of one image: C·R·S × OH·OW = 18 × 36 f32. The 1x1
// convolution needs none; cross-entropy over 16 rows has two blocks of
// partial sums; the backward of the first convolution's weight needs the
// matrix again (its input gradient is not computed: x is data).
// CHECK:      "steps": [
// CHECK-NEXT:   {"kernel":"conv2d",{{.*}}"workspace":{"offset":{{[0-9]+}},"bytes":2592}}
// CHECK-NEXT:   {"kernel":"relu",
// CHECK-NOT:    workspace
// CHECK-SAME:   }
// CHECK-NEXT:   {"kernel":"conv2d",
// CHECK-NOT:    workspace
// CHECK-SAME:   }
// CHECK:        {"kernel":"cross_entropy",{{.*}}"workspace":{"offset":{{[0-9]+}},"bytes":16}}
// CHECK:        {"kernel":"conv2d_backward_weight",{{.*}}"workspace":{"offset":{{[0-9]+}},"bytes":2592}}

// TRAIN: step 2/2 loss

func.func @step(%x: tensor<16x2x6x6xf32>, %labels: tensor<16xi64>,
                %w1: tensor<4x2x3x3xf32> {memopt.param},
                %w2: tensor<10x4x1x1xf32> {memopt.param}) -> tensor<f32> {
  %y1 = memopt.conv2d %x, %w1 {padding = array<i64: 1, 1>}
      : tensor<16x2x6x6xf32>, tensor<4x2x3x3xf32>
  %r1 = memopt.relu %y1 : tensor<16x4x6x6xf32>
  %y2 = memopt.conv2d %r1, %w2 : tensor<16x4x6x6xf32>, tensor<10x4x1x1xf32>
  %logits = memopt.global_avg_pool2d %y2 : tensor<16x10x6x6xf32>
  %loss = memopt.cross_entropy %logits, %labels : tensor<16x10xf32>, tensor<16xi64>
  return %loss : tensor<f32>
}
