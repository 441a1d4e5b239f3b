// Found by bench/fuzz/differential.py (seed 11, graph 11): under fp16 and bf16
// the step's gradient holds cast(cast(g)), which the lowering used to fold
// after the arena plan, so the runtime refused the plan (two slices live at
// once) or an in-place kernel overwrote a value still read.
func.func @fuzz(%p0: tensor<8x8xf32> {memopt.param}, %p1: tensor<8xf32> {memopt.param}, %p2: tensor<8x8xf32> {memopt.param}, %p3: tensor<8xf32> {memopt.param}, %x: tensor<2x8xf32>, %labels: tensor<2xi64>) -> tensor<f32> {
  %v0 = "memopt.linear"(%x, %p0, %p1) : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %v1 = "memopt.tanh"(%v0) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %v2 = "memopt.mul"(%v1, %v0) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %v3 = "memopt.dropout"(%v2) <{p = 0.25 : f64, seed = 80 : i64}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %v4 = "memopt.mul"(%v0, %v2) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %v5 = "memopt.dropout"(%v4) <{p = 0.25 : f64, seed = 12 : i64}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %v6 = "memopt.gelu"(%v5) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %v7 = "memopt.mul"(%v6, %v0) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %v8 = "memopt.softmax"(%v5) <{axis = -1 : i64}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %v9 = "memopt.sub"(%v0, %v8) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %v10 = "memopt.linear"(%v9, %p2, %p3) : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %loss = "memopt.cross_entropy"(%v10, %labels) : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
