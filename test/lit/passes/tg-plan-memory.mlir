// tg-plan-memory: every op result of @train_step gets an arena offset
// (tg.arena_offsets, one per result; -1 for values outside the arena: loads,
// constants, reshapes of arguments) and the function gets tg.memory with the
// plan's figures. A value lives from its definition to its last use, both
// ends included; a reshape shares its input's bytes; an elementwise op or
// group writes over an operand of its type that dies there; the gradients
// Adam reads get a region of their own after the reused part; the rest is
// placed greedily, largest first, at the lowest free offset. Every buffer
// takes a multiple of 64 bytes. The offsets below are worked out by hand in
// the comments; captures ([[NAME:0]] defines NAME as the literal 0) show
// which values share bytes.
// RUN: tgc-opt --tg-plan-memory --split-input-file %s | FileCheck %s
// RUN: tgc-opt --tg-plan-memory=report=true --split-input-file %s -o /dev/null --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=REPORT

// The figures of a tiny step, by hand. @w is 3x5 f32: 60 bytes, so every
// buffer of its type takes 64. Positions: 0 load, 1 %h, 2 %e, 3 %l (the
// loss), 4 %g, 5 adam_update, 6 return.
//   %h [1, 4] (read by the gradient), %e [2, 3], %l [3, 6]: pairwise
//   overlapping, so 0, 64, 128 (largest first: %h, %e, then the 4-byte %l);
//   the reused part ends at 192.
//   %g, the gradient, goes to the gradient region at 192 (64 bytes), although
//   %h dies at it and %g is elementwise: a gradient is never written in place.
//   %e does not overwrite %h, which lives on.
// weights 60 (raw bytes); optimizer state 2 x 60; gradients 64; arena
// 192 + 64 = 256; saved activations: the values read after the loss op
// (position 3): %h only (returning %l is not reading it), 64; scratch the
// rest of the reused part, 192 - 64 = 128; inputs 36 + 4 + 4 = 44 (raw);
// unplanned 4 x 64 = 256 (no value shares here); peak 60 + 120 + 256 + 44.
tg.variable @w trainable init(ones) : tensor<3x5xf32>
tg.variable @adam.m.w init(zeros) : tensor<3x5xf32>
tg.variable @adam.v.w init(zeros) : tensor<3x5xf32>
func.func @train_step(%x: tensor<3x3xf32>, %lr: tensor<f32>, %t: tensor<i32>) -> tensor<f32> {
  %w = tg.load @w : tensor<3x5xf32>
  %h = tg.matmul %x, %w : tensor<3x3xf32>, tensor<3x5xf32> -> tensor<3x5xf32>
  %e = tg.exp %h : tensor<3x5xf32>
  %l = tg.reduce_sum %e dims [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %g = tg.scale %h by 2.0 : tensor<3x5xf32>
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %g lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<3x5xf32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {tg.memory = {arena = 256 : i64, gradients = 64 : i64, inputs = 44 : i64, optimizer_state = 120 : i64, saved_activations = 64 : i64, scratch = 128 : i64, unplanned = 256 : i64, weights = 60 : i64}} {
// CHECK-NEXT: %[[W:[a-z0-9_]+]] = tg.load @w {tg.arena_offsets = array<i64: -1>} : tensor<3x5xf32>
// CHECK-NEXT: %[[H:[a-z0-9_]+]] = tg.matmul %{{[a-z0-9_]+}}, %[[W]] {tg.arena_offsets = array<i64: 0>}
// CHECK-NEXT: %[[E:[a-z0-9_]+]] = tg.exp %[[H]] {tg.arena_offsets = array<i64: 64>}
// CHECK-NEXT: %[[L:[a-z0-9_]+]] = tg.reduce_sum %[[E]] dims [0, 1] {tg.arena_offsets = array<i64: 128>}
// CHECK-NEXT: %[[G:[a-z0-9_]+]] = tg.scale %[[H]] by 2.000000e+00 {tg.arena_offsets = array<i64: 192>}
// The update has no result, so no offsets.
// CHECK-NEXT: tg.adam_update @w, @adam.m.w, @adam.v.w grad %[[G]] lr %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} beta1 0.899999976 beta2 9.800000e-01 eps 9.99999971E-10 : tensor<3x5xf32>{{$}}
// CHECK-NEXT: return %[[L]] : tensor<f32>

// The same figures as the remark's table (MiB rounded to 0.00 here).
// REPORT: remark: tg-plan-memory:
// REPORT-NEXT: {{^}}  weights                        60 bytes       0.00 MiB  parameters, trained and frozen{{$}}
// REPORT-NEXT: {{^}}  optimizer state               120 bytes       0.00 MiB  Adam moments{{$}}
// REPORT-NEXT: {{^}}  gradients                      64 bytes       0.00 MiB  arena, own region{{$}}
// REPORT-NEXT: {{^}}  saved activations              64 bytes       0.00 MiB  arena, live from the forward into the backward{{$}}
// REPORT-NEXT: {{^}}  scratch                       128 bytes       0.00 MiB  arena, the rest (reused){{$}}
// REPORT-NEXT: {{^}}  inputs                         44 bytes       0.00 MiB  the batch, lr, step, dropout key, optimizer controls{{$}}
// REPORT-NEXT: {{^}}  arena                         256 bytes       0.00 MiB  gradients + saved activations + scratch{{$}}
// REPORT-NEXT: {{^}}  peak                          480 bytes       0.00 MiB  weights + optimizer state + arena + inputs{{$}}
// REPORT-NEXT: {{^}}  (the arena without reuse would be 256 bytes, 0.00 MiB){{$}}

// -----

// Lifetimes: %a [0, 1], %b [1, 2], %c [2, 3] (the return reads %c). %a and
// %c do not overlap and share bytes; %b overlaps both (it is defined at the
// op where %a dies: both ends count) and gets the next 1024.
func.func @train_step(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %a = tg.transpose %x permutation [1, 0] : tensor<16x16xf32> -> tensor<16x16xf32>
  %b = tg.transpose %a permutation [1, 0] : tensor<16x16xf32> -> tensor<16x16xf32>
  %c = tg.transpose %b permutation [1, 0] : tensor<16x16xf32> -> tensor<16x16xf32>
  return %c : tensor<16x16xf32>
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<16x16xf32>
// CHECK-SAME: tg.memory = {arena = 2048 : i64,
// CHECK-SAME: unplanned = 3072 : i64
// CHECK-NEXT: %[[A:[a-z0-9_]+]] = tg.transpose %[[X]] permutation [1, 0] {tg.arena_offsets = array<i64: [[OA:0]]>}
// CHECK-NEXT: %[[B:[a-z0-9_]+]] = tg.transpose %[[A]] permutation [1, 0] {tg.arena_offsets = array<i64: 1024>}
// CHECK-NEXT: %[[C:[a-z0-9_]+]] = tg.transpose %[[B]] permutation [1, 0] {tg.arena_offsets = array<i64: [[OA]]>}
// CHECK-NEXT: return %[[C]]

// -----

// A reshape aliases its input: %r has %a's offset, %br has %b's, and the
// pair lives as long as either does ({%a, %r} [0, 4], {%b, %br} [2, 4], so
// %b cannot take %a's bytes). A reshape of an argument stays outside the
// arena (-1), like the argument. The 64-byte %m overlaps both pairs: 512.
func.func @train_step(%x: tensor<8x8xf32>) -> (tensor<4x4xf32>, tensor<64xf32>) {
  %a = tg.transpose %x permutation [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %r = tg.reshape %a : tensor<8x8xf32> -> tensor<4x16xf32>
  %b = tg.transpose %x permutation [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %br = tg.reshape %b : tensor<8x8xf32> -> tensor<16x4xf32>
  %m = tg.matmul %r, %br : tensor<4x16xf32>, tensor<16x4xf32> -> tensor<4x4xf32>
  %xr = tg.reshape %x : tensor<8x8xf32> -> tensor<64xf32>
  return %m, %xr : tensor<4x4xf32>, tensor<64xf32>
}

// CHECK-LABEL: func.func @train_step(
// CHECK-NEXT: %[[A:[a-z0-9_]+]] = tg.transpose %{{[a-z0-9_]+}} permutation [1, 0] {tg.arena_offsets = array<i64: [[OA:0]]>}
// CHECK-NEXT: %[[R:[a-z0-9_]+]] = tg.reshape %[[A]] {tg.arena_offsets = array<i64: [[OA]]>} : tensor<8x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT: %[[B:[a-z0-9_]+]] = tg.transpose %{{[a-z0-9_]+}} permutation [1, 0] {tg.arena_offsets = array<i64: [[OB:256]]>}
// CHECK-NEXT: %[[BR:[a-z0-9_]+]] = tg.reshape %[[B]] {tg.arena_offsets = array<i64: [[OB]]>} : tensor<8x8xf32> -> tensor<16x4xf32>
// CHECK-NEXT: tg.matmul %[[R]], %[[BR]] {tg.arena_offsets = array<i64: 512>}
// CHECK-NEXT: tg.reshape %{{[a-z0-9_]+}} {tg.arena_offsets = array<i64: -1>} : tensor<8x8xf32> -> tensor<64xf32>

// -----

// In place. Positions 0..7; every buffer 256 bytes.
//   %e = exp %a: %a dies there, so %e writes over it ({%a, %e}: 0).
//   %n = neg %b: %b is read again by %s, so %n gets bytes of its own (512;
//   %b has 256).
//   %s = mul %n, %b: %n dies there (and %b too; the first operand wins):
//   %s writes over %n.
//   %u = exp %x: %x is an argument, never overwritten; %u [5, 7] takes the
//   bytes %b ([2, 4]) no longer needs.
//   %v = add %s, %e: both die there, %v writes over %s.
func.func @train_step(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %a = tg.transpose %x permutation [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %e = tg.exp %a : tensor<8x8xf32>
  %b = tg.transpose %x permutation [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %n = tg.neg %b : tensor<8x8xf32>
  %s = tg.mul %n, %b : tensor<8x8xf32>
  %u = tg.exp %x : tensor<8x8xf32>
  %v = tg.add %s, %e : tensor<8x8xf32>
  return %v, %u : tensor<8x8xf32>, tensor<8x8xf32>
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<8x8xf32>
// CHECK-SAME: tg.memory = {arena = 768 : i64,
// CHECK-NEXT: %[[A:[a-z0-9_]+]] = tg.transpose %[[X]] permutation [1, 0] {tg.arena_offsets = array<i64: [[OA:0]]>}
// CHECK-NEXT: %[[E:[a-z0-9_]+]] = tg.exp %[[A]] {tg.arena_offsets = array<i64: [[OA]]>}
// CHECK-NEXT: %[[B:[a-z0-9_]+]] = tg.transpose %[[X]] permutation [1, 0] {tg.arena_offsets = array<i64: [[OB:256]]>}
// CHECK-NEXT: %[[N:[a-z0-9_]+]] = tg.neg %[[B]] {tg.arena_offsets = array<i64: [[ON:512]]>}
// CHECK-NEXT: %[[S:[a-z0-9_]+]] = tg.mul %[[N]], %[[B]] {tg.arena_offsets = array<i64: [[ON]]>}
// CHECK-NEXT: %[[U:[a-z0-9_]+]] = tg.exp %[[X]] {tg.arena_offsets = array<i64: [[OB]]>}
// CHECK-NEXT: %[[V:[a-z0-9_]+]] = tg.add %[[S]], %[[E]] {tg.arena_offsets = array<i64: [[ON]]>}
// CHECK-NEXT: return %[[V]], %[[U]]

// -----

// A tg.fused_elementwise group is one op for lifetimes (the uses in its body
// count at the group) and writes in place like a single elementwise op: here
// over %q, which dies at the group, not over %p, which the return reads
// later, nor over the key (an argument, of another type).
func.func @train_step(%x: tensor<8x8xf32>, %key: tensor<2xi32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %p = tg.transpose %x permutation [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %q = tg.exp %x : tensor<8x8xf32>
  %f = tg.fused_elementwise(%p, %q, %key) : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<2xi32>) -> tensor<8x8xf32> {
  ^bb0(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %k: tensor<2xi32>):
    %s = tg.add %a, %b : tensor<8x8xf32>
    %d = tg.dropout %s, %k rate 0.1 op_id 0 : tensor<8x8xf32>
    tg.yield %d : tensor<8x8xf32>
  }
  return %f, %p : tensor<8x8xf32>, tensor<8x8xf32>
}

// CHECK-LABEL: func.func @train_step(
// CHECK-NEXT: %[[P:[a-z0-9_]+]] = tg.transpose %{{[a-z0-9_]+}} permutation [1, 0] {tg.arena_offsets = array<i64: [[OP:0]]>}
// CHECK-NEXT: %[[Q:[a-z0-9_]+]] = tg.exp %{{[a-z0-9_]+}} {tg.arena_offsets = array<i64: [[OQ:256]]>}
// CHECK-NEXT: %[[F:[a-z0-9_]+]] = tg.fused_elementwise(%[[P]], %[[Q]], %{{[a-z0-9_]+}}) {tg.arena_offsets = array<i64: [[OQ]]>}
// The body's ops are not planned: they are the group's loop.
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: tg.add %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : tensor<8x8xf32>
// CHECK-NEXT: tg.dropout %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} rate 1.000000e-01 op_id 0 : tensor<8x8xf32>
// CHECK-NEXT: tg.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]], %[[P]]

// -----

// Each result of a group gets bytes of its own, even one nothing reads: the
// dead first result writes over %a (which dies at the group), and the second
// over %b, not over %a too (a dead result's buffer still ends at the group,
// and the two took the same offset).
func.func @train_step(%x: tensor<64xf32>, %y: tensor<64xf32>) -> tensor<64xf32> {
  %a = tg.exp %x : tensor<64xf32>
  %b = tg.exp %y : tensor<64xf32>
  %r:2 = tg.fused_elementwise(%a, %b) : (tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  ^bb0(%p: tensor<64xf32>, %q: tensor<64xf32>):
    %s = tg.add %p, %q : tensor<64xf32>
    %t = tg.mul %p, %q : tensor<64xf32>
    tg.yield %s, %t : tensor<64xf32>, tensor<64xf32>
  }
  return %r#1 : tensor<64xf32>
}

// CHECK-LABEL: func.func @train_step(
// CHECK-NEXT: tg.exp %{{[a-z0-9_]+}} {tg.arena_offsets = array<i64: [[OA:0]]>}
// CHECK-NEXT: tg.exp %{{[a-z0-9_]+}} {tg.arena_offsets = array<i64: [[OB:256]]>}
// CHECK-NEXT: tg.fused_elementwise(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {tg.arena_offsets = array<i64: [[OA]], [[OB]]>}

// -----

// Gradients (the operands of tg.multi_adam_update) get their own region
// after the reused part, in program order, even when they are computed
// early. Positions: 0, 1 loads, 2 %h, 3 %g2, 4 %k, 5 %l, 6 %t1, 7 %g1,
// 8 the update, 9 %c, 10 %r, 11 return.
//   Reused part, largest first: %h [2, 4] at 0; %k [4, 5] overlaps it: 256;
//   %t1 [6, 7] overlaps neither: 0; the 4-byte %l, with %r written over it
//   ([5, 11]), overlaps %k and %t1 and takes 64 bytes at 512. The reused
//   part ends at 576.
//   Gradients: %g2 (computed at 3) at 576, %g1 at 576 + 256 = 832; %g1 does
//   not write over %t1, which dies at it.
// Loads and the constant stay outside the arena (-1).
tg.variable @w1 trainable init(ones) : tensor<8x8xf32>
tg.variable @w2 trainable init(ones) : tensor<8x8xf32>
tg.variable @adam.m.w1 init(zeros) : tensor<8x8xf32>
tg.variable @adam.v.w1 init(zeros) : tensor<8x8xf32>
tg.variable @adam.m.w2 init(zeros) : tensor<8x8xf32>
tg.variable @adam.v.w2 init(zeros) : tensor<8x8xf32>
func.func @train_step(%x: tensor<8x8xf32>, %lr: tensor<f32>, %t: tensor<i32>) -> tensor<f32> {
  %w1 = tg.load @w1 : tensor<8x8xf32>
  %w2 = tg.load @w2 : tensor<8x8xf32>
  %h = tg.matmul %x, %w1 : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %g2 = tg.transpose %h permutation [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %k = tg.matmul %h, %w2 : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %l = tg.reduce_sum %k dims [0, 1] : tensor<8x8xf32> -> tensor<f32>
  %t1 = tg.transpose %x permutation [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %g1 = tg.scale %t1 by 0.5 : tensor<8x8xf32>
  tg.multi_adam_update [@w1, @w2], [@adam.m.w1, @adam.m.w2], [@adam.v.w1, @adam.v.w2] grads(%g1, %g2) lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<8x8xf32>, tensor<8x8xf32>
  %c = tg.constant dense<1.0> : tensor<f32>
  %r = tg.add %l, %c : tensor<f32>
  return %r : tensor<f32>
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: tg.memory = {arena = 1088 : i64, gradients = 512 : i64, inputs = 264 : i64, optimizer_state = 1024 : i64,
// CHECK-SAME: weights = 512 : i64}
// CHECK-NEXT: %[[W1:[a-z0-9_]+]] = tg.load @w1 {tg.arena_offsets = array<i64: -1>}
// CHECK-NEXT: %[[W2:[a-z0-9_]+]] = tg.load @w2 {tg.arena_offsets = array<i64: -1>}
// CHECK-NEXT: %[[H:[a-z0-9_]+]] = tg.matmul %{{[a-z0-9_]+}}, %[[W1]] {tg.arena_offsets = array<i64: [[OH:0]]>}
// CHECK-NEXT: %[[G2:[a-z0-9_]+]] = tg.transpose %[[H]] permutation [1, 0] {tg.arena_offsets = array<i64: 576>}
// CHECK-NEXT: %[[K:[a-z0-9_]+]] = tg.matmul %[[H]], %[[W2]] {tg.arena_offsets = array<i64: 256>}
// CHECK-NEXT: %[[L:[a-z0-9_]+]] = tg.reduce_sum %[[K]] dims [0, 1] {tg.arena_offsets = array<i64: [[OL:512]]>}
// CHECK-NEXT: %[[T1:[a-z0-9_]+]] = tg.transpose %{{[a-z0-9_]+}} permutation [1, 0] {tg.arena_offsets = array<i64: [[OH]]>}
// CHECK-NEXT: %[[G1:[a-z0-9_]+]] = tg.scale %[[T1]] by 5.000000e-01 {tg.arena_offsets = array<i64: 832>}
// CHECK-NEXT: tg.multi_adam_update [@w1, @w2], [@adam.m.w1, @adam.m.w2], [@adam.v.w1, @adam.v.w2] grads(%[[G1]], %[[G2]]) lr %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} beta1 0.899999976 beta2 9.800000e-01 eps 9.99999971E-10 : tensor<8x8xf32>, tensor<8x8xf32>{{$}}
// CHECK-NEXT: %[[C:[a-z0-9_]+]] = tg.constant {tg.arena_offsets = array<i64: -1>} dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[R:[a-z0-9_]+]] = tg.add %[[L]], %[[C]] {tg.arena_offsets = array<i64: [[OL]]>}
// CHECK-NEXT: return %[[R]]

// The function option: --tg-plan-memory=function=NAME plans @NAME only.
// RUN: tgc-opt --tg-plan-memory=function=step %S/Inputs/plan-memory-two-steps.mlir | FileCheck %s --check-prefix=FUNC
// FUNC-LABEL: func.func @train_step(
// FUNC-NOT: tg.memory
// FUNC-NOT: tg.arena_offsets
// FUNC-LABEL: func.func @step(
// FUNC-SAME: tg.memory = {arena = 512 : i64,
// FUNC-NEXT: tg.transpose %{{[a-z0-9_]+}} permutation [1, 0] {tg.arena_offsets = array<i64: 0>}
// FUNC-NEXT: tg.transpose %{{[a-z0-9_]+}} permutation [1, 0] {tg.arena_offsets = array<i64: 256>}

// A function that is not there is an error on the module (whose implicit
// location is line 0), with a non-zero exit and no output.
// RUN: not tgc-opt --tg-plan-memory=function=foo %S/Inputs/plan-memory-two-steps.mlir --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=NOFOO
// NOFOO: plan-memory-two-steps.mlir:{{[0-9]+}}:{{[0-9]+}}: error: tg-plan-memory: no function @foo to plan
// NOFOO-NOT: func.func
