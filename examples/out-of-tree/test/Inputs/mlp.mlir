// A two-layer classifier: 8 features, 4 classes, a batch of 16.
func.func @step(%w1: tensor<32x8xf32> {memopt.param}, %b1: tensor<32xf32> {memopt.param},
                %w2: tensor<4x32xf32> {memopt.param}, %b2: tensor<4xf32> {memopt.param},
                %x: tensor<16x8xf32>, %y: tensor<16xi64>) -> tensor<f32> {
  %h = memopt.linear %x, %w1, %b1 : tensor<16x8xf32>, tensor<32x8xf32>, tensor<32xf32>
  %r = memopt.relu %h : tensor<16x32xf32>
  %o = memopt.linear %r, %w2, %b2 : tensor<16x32xf32>, tensor<4x32xf32>, tensor<4xf32>
  %l = memopt.cross_entropy %o, %y : tensor<16x4xf32>, tensor<16xi64>
  return %l : tensor<f32>
}
