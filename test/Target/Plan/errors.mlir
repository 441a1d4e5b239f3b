// A function that was not lowered cannot be written as a plan.
// RUN: not memopt-translate --memrt-to-plan %s --plan-function=graph 2>&1 | FileCheck %s --check-prefix=NOTLOWERED
// NOTLOWERED: error: 'func.func' op is not lowered to memrt (missing 'memrt.arena_bytes' or 'memrt.alignment'); run --convert-memopt-to-memrt first
// Two lowered functions need --plan-function to choose.
// RUN: not memopt-translate --memrt-to-plan %s 2>&1 | FileCheck %s --check-prefix=AMBIGUOUS
// AMBIGUOUS: error: expected exactly one memrt function (with 'memrt.arena_bytes') to write as a plan, found 2
// RUN: memopt-translate --memrt-to-plan %s --plan-function=b | FileCheck %s --check-prefix=CHOSEN
// CHOSEN: "function": "b",
// RUN: not memopt-translate --memrt-to-plan %s --plan-function=nope 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: expected exactly one function named 'nope' to write as a plan, found 0

func.func @graph(%x: memref<4xf32>) {
  return
}

func.func @a(%x: memref<4xf32> {memrt.role = "data"}) -> memref<4xf32>
    attributes {memrt.arena_bytes = 0 : i64, memrt.alignment = 64 : i64} {
  return %x : memref<4xf32>
}

func.func @b(%x: memref<4xf32> {memrt.role = "data"}) -> memref<4xf32>
    attributes {memrt.arena_bytes = 0 : i64, memrt.alignment = 64 : i64} {
  return %x : memref<4xf32>
}
