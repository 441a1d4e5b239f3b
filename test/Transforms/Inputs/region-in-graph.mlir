// A memopt graph with a region op in it: refused, nested or not.
func.func @captured(%x: tensor<4xf32>, %w: tensor<4xf32> {memopt.param}) -> tensor<4xf32> {
  %y = memopt.mul %x, %w : tensor<4xf32>, tensor<4xf32>
  %z = "test.region"() ({
    %r = memopt.relu %y : tensor<4xf32>
    "test.yield"(%r) : (tensor<4xf32>) -> ()
  }) : () -> tensor<4xf32>
  return %z : tensor<4xf32>
}
