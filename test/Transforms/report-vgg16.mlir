// RUN: %gen-models vgg16 --batch 1 | memopt-opt --memopt-report -o /dev/null | FileCheck %s

// VGG-16 at batch 1, 224x224: torchvision's 138,357,544 parameters, counted
// by the memory analysis from the IR (f32: 553,430,176 bytes).
// Forward FLOPs: 13 convolutions 2 * 15,346,630,656 MACs = 30,693,261,312;
// 3 linears 2 * (25088*4096 + 4096*4096 + 4096*1000) = 247,267,328; ReLUs
// 13,555,712 and max pools 6,121,472 (one per input element); 2 dropouts
// 8192; cross-entropy 1000: 30,960,215,016.
// CHECK:      "function": "vgg16_train",
// CHECK-NEXT: "parameters": {
// CHECK-NEXT:   "count": 138357544,
// CHECK-NEXT:   "bytes": 553430176
// CHECK-NEXT: },
// CHECK-NEXT: "gradient_bytes": 0,
// CHECK:      "total_flops": 30960215016,
