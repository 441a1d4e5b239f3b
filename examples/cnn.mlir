// A CIFAR-10-sized convolutional network: three conv/batch-norm/ReLU stages
// (32, 64, 128 channels; max-pool after the first two), global average
// pooling and a linear classifier, trained with cross-entropy. Batch 32.
//
//   memopt-opt examples/cnn.mlir --memopt-summary
//
// Returns the loss, then the updated running statistics of the three batch
// norms (mean, var for each), in the order of their state arguments.
// Parameters: 864 + 18,432 + 73,728 (convs, no bias) + 2*(32+64+128) (BN)
// + 1,290 (linear) = 94,762.
func.func @cnn_train(
    %conv1_w: tensor<32x3x3x3xf32> {memopt.param},
    %bn1_g: tensor<32xf32> {memopt.param}, %bn1_b: tensor<32xf32> {memopt.param},
    %conv2_w: tensor<64x32x3x3xf32> {memopt.param},
    %bn2_g: tensor<64xf32> {memopt.param}, %bn2_b: tensor<64xf32> {memopt.param},
    %conv3_w: tensor<128x64x3x3xf32> {memopt.param},
    %bn3_g: tensor<128xf32> {memopt.param}, %bn3_b: tensor<128xf32> {memopt.param},
    %fc_w: tensor<10x128xf32> {memopt.param}, %fc_b: tensor<10xf32> {memopt.param},
    %bn1_mean: tensor<32xf32> {memopt.state}, %bn1_var: tensor<32xf32> {memopt.state},
    %bn2_mean: tensor<64xf32> {memopt.state}, %bn2_var: tensor<64xf32> {memopt.state},
    %bn3_mean: tensor<128xf32> {memopt.state}, %bn3_var: tensor<128xf32> {memopt.state},
    %images: tensor<32x3x32x32xf32>, %labels: tensor<32xi64>)
    -> (tensor<f32>, tensor<32xf32>, tensor<32xf32>, tensor<64xf32>,
        tensor<64xf32>, tensor<128xf32>, tensor<128xf32>) {
  // Stage 1: 32x32 -> 16x16.
  %c1 = memopt.conv2d %images, %conv1_w {padding = array<i64: 1, 1>} : tensor<32x3x32x32xf32>, tensor<32x3x3x3xf32>
  %n1, %m1, %v1 = memopt.batch_norm %c1, %bn1_g, %bn1_b, %bn1_mean, %bn1_var : tensor<32x32x32x32xf32>, tensor<32xf32>
  %r1 = memopt.relu %n1 : tensor<32x32x32x32xf32>
  %p1 = memopt.max_pool2d %r1 {kernel_size = array<i64: 2, 2>} : tensor<32x32x32x32xf32>
  // Stage 2: 16x16 -> 8x8.
  %c2 = memopt.conv2d %p1, %conv2_w {padding = array<i64: 1, 1>} : tensor<32x32x16x16xf32>, tensor<64x32x3x3xf32>
  %n2, %m2, %v2 = memopt.batch_norm %c2, %bn2_g, %bn2_b, %bn2_mean, %bn2_var : tensor<32x64x16x16xf32>, tensor<64xf32>
  %r2 = memopt.relu %n2 : tensor<32x64x16x16xf32>
  %p2 = memopt.max_pool2d %r2 {kernel_size = array<i64: 2, 2>} : tensor<32x64x16x16xf32>
  // Stage 3: 8x8, then global average pooling.
  %c3 = memopt.conv2d %p2, %conv3_w {padding = array<i64: 1, 1>} : tensor<32x64x8x8xf32>, tensor<128x64x3x3xf32>
  %n3, %m3, %v3 = memopt.batch_norm %c3, %bn3_g, %bn3_b, %bn3_mean, %bn3_var : tensor<32x128x8x8xf32>, tensor<128xf32>
  %r3 = memopt.relu %n3 : tensor<32x128x8x8xf32>
  %g = memopt.global_avg_pool2d %r3 : tensor<32x128x8x8xf32>
  %logits = memopt.linear %g, %fc_w, %fc_b : tensor<32x128xf32>, tensor<10x128xf32>, tensor<10xf32>
  %loss = memopt.cross_entropy %logits, %labels : tensor<32x10xf32>, tensor<32xi64>
  return %loss, %m1, %v1, %m2, %v2, %m3, %v3
      : tensor<f32>, tensor<32xf32>, tensor<32xf32>, tensor<64xf32>,
        tensor<64xf32>, tensor<128xf32>, tensor<128xf32>
}
