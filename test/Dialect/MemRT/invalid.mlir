// RUN: memopt-opt %s -split-input-file -verify-diagnostics

func.func @outside_arena() attributes {memrt.arena_bytes = 64 : i64, memrt.alignment = 64 : i64} {
  // expected-error @+1 {{'memrt.arena_slice' op slice [0, 128) exceeds the arena of 64 bytes}}
  %a = memrt.arena_slice offset 0 : memref<32xf32>
  return
}

// -----

func.func @misaligned() attributes {memrt.arena_bytes = 256 : i64, memrt.alignment = 64 : i64} {
  // expected-error @+1 {{'memrt.arena_slice' op offset 4 is not a multiple of the alignment 64}}
  %a = memrt.arena_slice offset 4 : memref<4xf32>
  return
}

// -----

func.func @no_arena() {
  // expected-error @+1 {{enclosing function has no 'memrt.arena_bytes' attribute}}
  %a = memrt.arena_slice offset 0 : memref<4xf32>
  return
}

// -----

func.func @negative_offset() attributes {memrt.arena_bytes = 256 : i64} {
  // expected-error @+1 {{attribute 'offset' failed to satisfy constraint}}
  %a = "memrt.arena_slice"() <{offset = -64 : i64}> : () -> memref<4xf32>
  return
}

// -----

func.func @bad_view() attributes {memrt.arena_bytes = 256 : i64} {
  %a = memrt.arena_slice offset 0 : memref<4xf32>
  // expected-error @+1 {{cannot view 'memref<4xf32>' as 'memref<5xf32>': element type and count must be equal}}
  %v = memrt.view %a : memref<4xf32> -> memref<5xf32>
  return
}

// -----

func.func @bad_constant() {
  // expected-error @+1 {{does not match the result 'memref<3xf32>'}}
  %c = memrt.constant dense<[1.0, 2.0]> : tensor<2xf32> -> memref<3xf32>
  return
}

// -----

func.func @write_argument(%x: memref<4xf32>) attributes {memrt.arena_bytes = 0 : i64} {
  // expected-error @+1 {{output buffers must be arena slices, views of them, or parameter/state arguments updated in place, not data arguments}}
  memrt.kernel "relu" ins(%x : memref<4xf32>) outs(%x : memref<4xf32>) attrs {}
  return
}

// -----

func.func @dynamic(%x: memref<?xf32>) attributes {memrt.arena_bytes = 64 : i64} {
  %a = memrt.arena_slice offset 0 : memref<4xf32>
  // expected-error @+1 {{expected a statically shaped memref with the identity layout, got 'memref<?xf32>'}}
  memrt.kernel "relu" ins(%x : memref<?xf32>) outs(%a : memref<4xf32>) attrs {}
  return
}

// -----

// expected-error @+1 {{'memrt.alignment' must be a power of two, got 48}}
func.func @bad_alignment() attributes {memrt.arena_bytes = 64 : i64, memrt.alignment = 48 : i64} {
  return
}

// -----

// expected-error @+1 {{'memrt.role' on argument #0 must be "param", "state", "optimizer_state" or "data", got "weights"}}
func.func @bad_role(%x: memref<4xf32> {memrt.role = "weights"}) {
  return
}

// -----

// expected-error @+1 {{unknown memrt attribute 'memrt.arena'}}
func.func @unknown_attr() attributes {memrt.arena = 64 : i64} {
  return
}

// -----

// expected-error @+1 {{'memrt.recompute' must be a unit attribute on a memrt.kernel}}
func.func @recompute_on_function() attributes {memrt.recompute} {
  return
}

// -----

// expected-error @+1 {{result #0 cannot update argument #0 of another type}}
func.func @bad_update(%x: memref<4xf32> {memrt.role = "param"}, %y: memref<2xf32> {memrt.role = "data"}) -> (memref<2xf32> {memrt.updates = 0 : i64}) {
  return %y : memref<2xf32>
}

// -----

// An optimizer step may write its parameter in place, but only one it reads.
func.func @writes_param_without_reading(%p: memref<4xf32> {memrt.role = "param"}, %g: memref<4xf32> {memrt.role = "data"})
    attributes {memrt.arena_bytes = 0 : i64} {
  // expected-error @+1 {{writes argument #0 without reading it: only in-place updates may write arguments}}
  memrt.kernel "relu" ins(%g : memref<4xf32>) outs(%p : memref<4xf32>) attrs {}
  return
}

// -----

func.func @workspace_2d() attributes {memrt.arena_bytes = 256 : i64, memrt.alignment = 64 : i64} {
  // expected-error @+1 {{'memrt.arena_slice' op an i8 slice is a workspace and must be 1-D, got 'memref<4x4xi8>'}}
  %a = memrt.arena_slice offset 0 : memref<4x4xi8>
  return
}

// -----

func.func @workspace_not_a_slice(%ws: memref<64xi8>) attributes {memrt.arena_bytes = 256 : i64, memrt.alignment = 64 : i64} {
  %a = memrt.arena_slice offset 0 : memref<4xf32>
  // expected-error @+1 {{'memrt.kernel' op workspace must be an arena slice}}
  memrt.kernel "relu" ins(%a : memref<4xf32>) outs(%a : memref<4xf32>) workspace(%ws : memref<64xi8>) attrs {}
  return
}
