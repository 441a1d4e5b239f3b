// Not memopt graphs: a function of other dialects' ops (with a region) and a
// declaration. memopt's passes leave both alone.
func.func @count_up(%n: index) -> index {
  %s = "test.loop"(%n) ({
  ^bb0(%i: index):
    "test.yield"(%i) : (index) -> ()
  }) : (index) -> index
  return %s : index
}
func.func private @external(tensor<4xf32>) -> tensor<4xf32>
