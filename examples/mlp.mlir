// An MNIST-sized multi-layer perceptron: 784 -> 256 -> 128 -> 10 with ReLU,
// trained with cross-entropy. Batch 64; images are flattened 28x28 pixels.
//
//   memopt-opt examples/mlp.mlir --memopt-summary
//
// Parameters: 784*256+256 + 256*128+128 + 128*10+10 = 235,146.
func.func @mlp_train(
    %fc1_w: tensor<256x784xf32> {memopt.param}, %fc1_b: tensor<256xf32> {memopt.param},
    %fc2_w: tensor<128x256xf32> {memopt.param}, %fc2_b: tensor<128xf32> {memopt.param},
    %fc3_w: tensor<10x128xf32> {memopt.param}, %fc3_b: tensor<10xf32> {memopt.param},
    %images: tensor<64x784xf32>, %labels: tensor<64xi64>) -> tensor<f32> {
  %h1 = memopt.linear %images, %fc1_w, %fc1_b : tensor<64x784xf32>, tensor<256x784xf32>, tensor<256xf32>
  %a1 = memopt.relu %h1 : tensor<64x256xf32>
  %h2 = memopt.linear %a1, %fc2_w, %fc2_b : tensor<64x256xf32>, tensor<128x256xf32>, tensor<128xf32>
  %a2 = memopt.relu %h2 : tensor<64x128xf32>
  %logits = memopt.linear %a2, %fc3_w, %fc3_b : tensor<64x128xf32>, tensor<10x128xf32>, tensor<10xf32>
  %loss = memopt.cross_entropy %logits, %labels : tensor<64x10xf32>, tensor<64xi64>
  return %loss : tensor<f32>
}
