// RUN: %gen-models vgg16 --batch 1 | memopt-opt --memopt-report -o /dev/null | FileCheck %s

// VGG-16 at batch 1, 224x224: torchvision's 138,357,544 parameters, counted
// by the memory analysis from the IR (f32: 553,430,176 bytes). The
// convolutions are 15.35 GMACs and the classifier 0.12 GMACs: about 31
// GFLOPs for the forward pass.
// CHECK:      "function": "vgg16_train",
// CHECK-NEXT: "parameters": {
// CHECK-NEXT:   "count": 138357544,
// CHECK-NEXT:   "bytes": 553430176
// CHECK-NEXT: },
// CHECK-NEXT: "gradient_bytes": 0,
// CHECK:      "total_flops": 30960215016,
