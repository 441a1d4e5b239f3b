// A value captured by an scf.if region: before, --memopt-autodiff built no
// gradient through the region; now the graph is refused at the scf.if.
func.func @captured(%w: tensor<4xf32> {memopt.param}, %x: tensor<4xf32>, %c: i1) -> tensor<f32> {
  %h = memopt.mul %x, %w : tensor<4xf32>, tensor<4xf32>
  // expected-error @+1 {{'scf.if' op is not supported by memopt-autodiff in a memopt graph: it has regions}}
  %z = scf.if %c -> tensor<4xf32> {
    %r = memopt.relu %h : tensor<4xf32>
    scf.yield %r : tensor<4xf32>
  } else {
    scf.yield %h : tensor<4xf32>
  }
  %l = memopt.mse_loss %z, %x : tensor<4xf32>
  return %l : tensor<f32>
}
