// RUN: memopt-opt %s -verify-diagnostics
// RUN: not grep -rnE '#include *[<"](mlir|llvm)/' %memopt_src_root/include/memopt/Contract
//
// The compiler-runtime contract (include/memopt/Contract) is MLIR-free, and
// a memrt.kernel may only name a kernel the runtime has (Kernels.def).

func.func @unknown(%x: memref<4xf32>) attributes {memrt.arena_bytes = 64 : i64} {
  %a = memrt.arena_slice offset 0 : memref<4xf32>
  // expected-error @+1 {{names kernel 'frobnicate', which the runtime does not have}}
  memrt.kernel "frobnicate" ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) attrs {}
  return
}
