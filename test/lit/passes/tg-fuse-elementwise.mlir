// tg-fuse-elementwise: chains of elementwise tg ops (and dropouts) of one
// shape become one tg.fused_elementwise at the place of the chain's last op,
// whose results are the values used outside the group; a group closes as
// soon as a non-elementwise op reads one of its values. A single op, a group
// whose values are all dead, and ops of another shape stay as they are.
// Positive cases pin the function body and the fused op's body with
// CHECK-NEXT, so nothing of the chain is left outside the group.
// RUN: tgc-opt --tg-fuse-elementwise --split-input-file %s | FileCheck %s
// RUN: tgc-opt --tg-fuse-elementwise=report=true %s --split-input-file 2>&1 | FileCheck %s --check-prefix=REPORT

// A chain of two unary ops: one group with one input and one result.
func.func @chain_two(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tg.exp %x : tensor<4x8xf32>
  %1 = tg.neg %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @chain_two(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: %[[F:[a-z0-9_]+]] = tg.fused_elementwise(%[[X]]) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[A:[a-z0-9_]+]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[E:[a-z0-9_]+]] = tg.exp %[[A]] : tensor<4x8xf32>
// CHECK-NEXT: %[[N:[a-z0-9_]+]] = tg.neg %[[E]] : tensor<4x8xf32>
// CHECK-NEXT: tg.yield %[[N]] : tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]] : tensor<4x8xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-elementwise: fused 2 ops into 1 elementwise groups

// -----

// A chain of three ops reading a second function argument: the arguments
// become the inputs, in the order the group first reads them.
func.func @chain_three(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tg.exp %x : tensor<4x8xf32>
  %1 = tg.mul %0, %y : tensor<4x8xf32>
  %2 = tg.rsqrt %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @chain_three(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[Y:[a-z0-9]+]]: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: %[[F:[a-z0-9_]+]] = tg.fused_elementwise(%[[X]], %[[Y]]) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[A:[a-z0-9_]+]]: tensor<4x8xf32>, %[[B:[a-z0-9_]+]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[E:[a-z0-9_]+]] = tg.exp %[[A]] : tensor<4x8xf32>
// CHECK-NEXT: %[[M:[a-z0-9_]+]] = tg.mul %[[E]], %[[B]] : tensor<4x8xf32>
// CHECK-NEXT: %[[R:[a-z0-9_]+]] = tg.rsqrt %[[M]] : tensor<4x8xf32>
// CHECK-NEXT: tg.yield %[[R]] : tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]] : tensor<4x8xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-elementwise: fused 3 ops into 1 elementwise groups

// -----

// The embedding's backward (the pass's documented example): dropout_grad then
// scale; the dropout key is an input of the group like any tensor.
func.func @dropout_grad_scale(%g: tensor<4x8x32xf32>, %key: tensor<2xi32>) -> tensor<4x8x32xf32> {
  %0 = tg.dropout_grad %g, %key rate 1.000000e-01 op_id 0 : tensor<4x8x32xf32>
  %1 = tg.scale %0 by 5.65685415 : tensor<4x8x32xf32>
  return %1 : tensor<4x8x32xf32>
}

// CHECK-LABEL: func.func @dropout_grad_scale(
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<4x8x32xf32>, %[[KEY:[a-z0-9]+]]: tensor<2xi32>) -> tensor<4x8x32xf32> {
// CHECK-NEXT: %[[F:[a-z0-9_]+]] = tg.fused_elementwise(%[[G]], %[[KEY]]) : (tensor<4x8x32xf32>, tensor<2xi32>) -> tensor<4x8x32xf32> {
// CHECK-NEXT: ^bb0(%[[A:[a-z0-9_]+]]: tensor<4x8x32xf32>, %[[K:[a-z0-9_]+]]: tensor<2xi32>):
// CHECK-NEXT: %[[D:[a-z0-9_]+]] = tg.dropout_grad %[[A]], %[[K]] rate 1.000000e-01 op_id 0 : tensor<4x8x32xf32>
// CHECK-NEXT: %[[S:[a-z0-9_]+]] = tg.scale %[[D]] by 5.65685415 : tensor<4x8x32xf32>
// CHECK-NEXT: tg.yield %[[S]] : tensor<4x8x32xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]] : tensor<4x8x32xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-elementwise: fused 2 ops into 1 elementwise groups

// -----

// The embedding's forward: scale, + positions, dropout. The dropout closes
// the chain and takes the key as the group's last input.
func.func @embedding_path(%e: tensor<2x7x16xf32>, %pe: tensor<2x7x16xf32>, %key: tensor<2xi32>) -> tensor<2x7x16xf32> {
  %0 = tg.scale %e by 4.000000e+00 : tensor<2x7x16xf32>
  %1 = tg.add %0, %pe : tensor<2x7x16xf32>
  %2 = tg.dropout %1, %key rate 1.000000e-01 op_id 3 : tensor<2x7x16xf32>
  return %2 : tensor<2x7x16xf32>
}

// CHECK-LABEL: func.func @embedding_path(
// CHECK-SAME: %[[E:[a-z0-9]+]]: tensor<2x7x16xf32>, %[[PE:[a-z0-9]+]]: tensor<2x7x16xf32>, %[[KEY:[a-z0-9]+]]: tensor<2xi32>) -> tensor<2x7x16xf32> {
// CHECK-NEXT: %[[F:[a-z0-9_]+]] = tg.fused_elementwise(%[[E]], %[[PE]], %[[KEY]]) : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<2xi32>) -> tensor<2x7x16xf32> {
// CHECK-NEXT: ^bb0(%[[A:[a-z0-9_]+]]: tensor<2x7x16xf32>, %[[P:[a-z0-9_]+]]: tensor<2x7x16xf32>, %[[K:[a-z0-9_]+]]: tensor<2xi32>):
// CHECK-NEXT: %[[S:[a-z0-9_]+]] = tg.scale %[[A]] by 4.000000e+00 : tensor<2x7x16xf32>
// CHECK-NEXT: %[[H:[a-z0-9_]+]] = tg.add %[[S]], %[[P]] : tensor<2x7x16xf32>
// CHECK-NEXT: %[[D:[a-z0-9_]+]] = tg.dropout %[[H]], %[[K]] rate 1.000000e-01 op_id 3 : tensor<2x7x16xf32>
// CHECK-NEXT: tg.yield %[[D]] : tensor<2x7x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]] : tensor<2x7x16xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-elementwise: fused 3 ops into 1 elementwise groups

// -----

// An intermediate (the difference) is returned as well: the group has two
// results, yielded in program order, and the difference is still computed
// inside the group.
func.func @two_outputs(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = tg.sub %x, %y : tensor<4x8xf32>
  %1 = tg.mul %0, %0 : tensor<4x8xf32>
  %2 = tg.sqrt %1 : tensor<4x8xf32>
  return %2, %0 : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @two_outputs(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[Y:[a-z0-9]+]]: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT: %[[F:[a-z0-9_]+]]:2 = tg.fused_elementwise(%[[X]], %[[Y]]) : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[A:[a-z0-9_]+]]: tensor<4x8xf32>, %[[B:[a-z0-9_]+]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[D:[a-z0-9_]+]] = tg.sub %[[A]], %[[B]] : tensor<4x8xf32>
// CHECK-NEXT: %[[SQ:[a-z0-9_]+]] = tg.mul %[[D]], %[[D]] : tensor<4x8xf32>
// CHECK-NEXT: %[[R:[a-z0-9_]+]] = tg.sqrt %[[SQ]] : tensor<4x8xf32>
// CHECK-NEXT: tg.yield %[[D]], %[[R]] : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]#1, %[[F]]#0 : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-elementwise: fused 3 ops into 1 elementwise groups

// -----

// Two independent producers (exp of x, neg of y) joined by a binary consumer:
// their two groups merge into one.
func.func @merge_producers(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tg.exp %x : tensor<4x8xf32>
  %1 = tg.neg %y : tensor<4x8xf32>
  %2 = tg.add %0, %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @merge_producers(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[Y:[a-z0-9]+]]: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: %[[F:[a-z0-9_]+]] = tg.fused_elementwise(%[[X]], %[[Y]]) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[A:[a-z0-9_]+]]: tensor<4x8xf32>, %[[B:[a-z0-9_]+]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[E:[a-z0-9_]+]] = tg.exp %[[A]] : tensor<4x8xf32>
// CHECK-NEXT: %[[N:[a-z0-9_]+]] = tg.neg %[[B]] : tensor<4x8xf32>
// CHECK-NEXT: %[[S:[a-z0-9_]+]] = tg.add %[[E]], %[[N]] : tensor<4x8xf32>
// CHECK-NEXT: tg.yield %[[S]] : tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]] : tensor<4x8xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-elementwise: fused 3 ops into 1 elementwise groups

// -----

// A reduce_sum reads the end of a chain, which closes that group; the ops
// after it start a new group that takes the first group's result as input.
func.func @closed_then_new_group(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %0 = tg.exp %x : tensor<4x8xf32>
  %1 = tg.neg %0 : tensor<4x8xf32>
  %r = tg.reduce_sum %1 dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %2 = tg.mul %1, %1 : tensor<4x8xf32>
  %3 = tg.sqrt %2 : tensor<4x8xf32>
  return %r, %3 : tensor<4xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @closed_then_new_group(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
// CHECK-NEXT: %[[F1:[a-z0-9_]+]] = tg.fused_elementwise(%[[X]]) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[A:[a-z0-9_]+]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[E:[a-z0-9_]+]] = tg.exp %[[A]] : tensor<4x8xf32>
// CHECK-NEXT: %[[N:[a-z0-9_]+]] = tg.neg %[[E]] : tensor<4x8xf32>
// CHECK-NEXT: tg.yield %[[N]] : tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:[a-z0-9_]+]] = tg.reduce_sum %[[F1]] dims [1] : tensor<4x8xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[F2:[a-z0-9_]+]] = tg.fused_elementwise(%[[F1]]) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[B:[a-z0-9_]+]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[M:[a-z0-9_]+]] = tg.mul %[[B]], %[[B]] : tensor<4x8xf32>
// CHECK-NEXT: %[[S:[a-z0-9_]+]] = tg.sqrt %[[M]] : tensor<4x8xf32>
// CHECK-NEXT: tg.yield %[[S]] : tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]], %[[F2]] : tensor<4xf32>, tensor<4x8xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-elementwise: fused 4 ops into 2 elementwise groups

// -----

// Negative (in part): a reduce_sum reads the chain's intermediate (the exp),
// which closes the group {exp, neg} before the mul; the mul, reading both of
// the group's values, cannot join it and stays a single op. The closed group
// yields both values, and the fused op sits before the reduce_sum.
func.func @neg_interrupted(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %0 = tg.exp %x : tensor<4x8xf32>
  %1 = tg.neg %0 : tensor<4x8xf32>
  %r = tg.reduce_sum %0 dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %2 = tg.mul %1, %0 : tensor<4x8xf32>
  return %r, %2 : tensor<4xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @neg_interrupted(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
// CHECK-NEXT: %[[F:[a-z0-9_]+]]:2 = tg.fused_elementwise(%[[X]]) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[A:[a-z0-9_]+]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[E:[a-z0-9_]+]] = tg.exp %[[A]] : tensor<4x8xf32>
// CHECK-NEXT: %[[N:[a-z0-9_]+]] = tg.neg %[[E]] : tensor<4x8xf32>
// CHECK-NEXT: tg.yield %[[E]], %[[N]] : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:[a-z0-9_]+]] = tg.reduce_sum %[[F]]#0 dims [1] : tensor<4x8xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[M:[a-z0-9_]+]] = tg.mul %[[F]]#1, %[[F]]#0 : tensor<4x8xf32>
// CHECK-NEXT: return %[[R]], %[[M]] : tensor<4xf32>, tensor<4x8xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-elementwise: fused 2 ops into 1 elementwise groups

// -----

// Negative: a single elementwise op between two non-elementwise ops is not
// a group.
func.func @neg_single(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = tg.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %1 = tg.relu %0 : tensor<4x8xf32>
  %2 = tg.softmax %1 axis 1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @neg_single(
// CHECK-NOT: tg.fused_elementwise
// CHECK: %[[M:[a-z0-9_]+]] = tg.matmul
// CHECK-NEXT: %[[R:[a-z0-9_]+]] = tg.relu %[[M]] : tensor<4x8xf32>
// CHECK-NEXT: tg.softmax %[[R]] axis 1
// CHECK-NOT: tg.fused_elementwise
// REPORT: remark: tg-fuse-elementwise: fused 0 ops into 0 elementwise groups

// -----

// Negative: ops of different shapes do not group. The neg on the [8] vector
// stays alone (its only reader is a broadcast); the exp and the add, both
// [4, 8], still form a group across the broadcast, placed at the add.
func.func @neg_shapes(%x: tensor<4x8xf32>, %v: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = tg.exp %x : tensor<4x8xf32>
  %1 = tg.neg %v : tensor<8xf32>
  %2 = tg.broadcast %1 dims [1] : tensor<8xf32> -> tensor<4x8xf32>
  %3 = tg.add %0, %2 : tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @neg_shapes(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[V:[a-z0-9]+]]: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: %[[N:[a-z0-9_]+]] = tg.neg %[[V]] : tensor<8xf32>
// CHECK-NEXT: %[[BC:[a-z0-9_]+]] = tg.broadcast %[[N]] dims [1] : tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: %[[F:[a-z0-9_]+]] = tg.fused_elementwise(%[[X]], %[[BC]]) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[A:[a-z0-9_]+]]: tensor<4x8xf32>, %[[B:[a-z0-9_]+]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[E:[a-z0-9_]+]] = tg.exp %[[A]] : tensor<4x8xf32>
// CHECK-NEXT: %[[S:[a-z0-9_]+]] = tg.add %[[E]], %[[B]] : tensor<4x8xf32>
// CHECK-NEXT: tg.yield %[[S]] : tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]] : tensor<4x8xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-elementwise: fused 2 ops into 1 elementwise groups

// -----

// Negative: a group none of whose values is used is left as it is (not
// fused, not counted).
func.func @neg_dead_group(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tg.exp %x : tensor<4x8xf32>
  %1 = tg.neg %0 : tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @neg_dead_group(
// CHECK-NOT: tg.fused_elementwise
// CHECK: %[[E:[a-z0-9_]+]] = tg.exp
// CHECK-NEXT: tg.neg %[[E]]
// CHECK-NEXT: return
// CHECK-NOT: tg.fused_elementwise
// REPORT: remark: tg-fuse-elementwise: fused 0 ops into 0 elementwise groups

// -----

// A dropout's run-time rate joins the group's inputs (read on the host, like
// the key).
func.func @run_time_rate(%g: tensor<4x8x32xf32>, %key: tensor<2xi32>, %rate: tensor<f32>) -> tensor<4x8x32xf32> {
  %0 = tg.dropout_grad %g, %key rate 1.000000e-01 run_time %rate op_id 0 : tensor<4x8x32xf32>
  %1 = tg.scale %0 by 5.65685415 : tensor<4x8x32xf32>
  return %1 : tensor<4x8x32xf32>
}

// CHECK-LABEL: func.func @run_time_rate(
// CHECK-NEXT: tg.fused_elementwise(%arg0, %arg1, %arg2) : (tensor<4x8x32xf32>, tensor<2xi32>, tensor<f32>) -> tensor<4x8x32xf32> {
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9]+]]: tensor<4x8x32xf32>, %[[K:[a-z0-9]+]]: tensor<2xi32>, %[[R:[a-z0-9]+]]: tensor<f32>):
// CHECK-NEXT: tg.dropout_grad %[[X]], %[[K]] rate 1.000000e-01 run_time %[[R]] op_id 0

// -----

// A rate made by an elementwise op, read by a dropout (which does not join
// its group: the types differ) and then by another op of the rate's group:
// the dropout closes the group, as any outside reader does (the group once
// grew on, and its fused op, placed after the dropout, did not dominate it).
func.func @rate_group_read_between(%x: tensor<4xf32>, %key: tensor<2xi32>, %r: tensor<f32>) -> (tensor<4xf32>, tensor<f32>) {
  %a = tg.scale %r by 5.000000e-01 : tensor<f32>
  %d = tg.dropout %x, %key rate 1.000000e-01 run_time %a op_id 0 : tensor<4xf32>
  %b = tg.neg %a : tensor<f32>
  return %d, %b : tensor<4xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @rate_group_read_between(
// CHECK-NEXT: tg.scale
// CHECK-NEXT: tg.dropout
// CHECK-NEXT: tg.neg
// CHECK-NEXT: return
// REPORT: remark: tg-fuse-elementwise: fused 0 ops into 0 elementwise groups
