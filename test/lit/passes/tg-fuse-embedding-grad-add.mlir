// tg-fuse-embedding-grad-add: add(embedding_grad(g, ids), x), either order,
// where the add is the scatter's only reader, becomes
// tg.embedding_grad g[ids] plus x, at the add's place. Of two scatters the
// later adds into the earlier, so a shared table's three terms become a
// chain of two scatters into the projection's gradient. A scatter with
// another reader stays. Positive cases pin the whole body with CHECK-NEXT,
// so no add or scatter is left behind.
// RUN: tgc-opt --tg-fuse-embedding-grad-add --split-input-file %s | FileCheck %s
// RUN: tgc-opt --tg-fuse-embedding-grad-add=report=true --split-input-file %s 2>&1 | FileCheck %s --check-prefix=REPORT
// The printed form parses back to the same module.
// RUN: tgc-opt --tg-fuse-embedding-grad-add --split-input-file %s | tgc-opt --split-input-file | FileCheck %s

// GPT-2's tied table: the output projection's gradient plus the token
// embedding's scatter, the scatter second.
func.func @tied(%dout: tensor<100x16xf32>, %dx: tensor<2x7x16xf32>, %ids: tensor<2x7xi32>) -> tensor<100x16xf32> {
  %e = tg.embedding_grad %dx[%ids] : tensor<2x7x16xf32>, tensor<2x7xi32> -> tensor<100x16xf32>
  %sum = tg.add %dout, %e : tensor<100x16xf32>
  return %sum : tensor<100x16xf32>
}
// CHECK-LABEL: func.func @tied(
// CHECK-SAME: %[[DOUT:[a-z0-9]+]]: tensor<100x16xf32>, %[[DX:[a-z0-9]+]]: tensor<2x7x16xf32>, %[[IDS:[a-z0-9]+]]: tensor<2x7xi32>)
// CHECK-NEXT: %[[SUM:[0-9]+]] = tg.embedding_grad %[[DX]][%[[IDS]]] plus %[[DOUT]] : tensor<2x7x16xf32>, tensor<2x7xi32>, tensor<100x16xf32> -> tensor<100x16xf32>
// CHECK-NEXT: return %[[SUM]]
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-embedding-grad-add: added 1 sums in the scatter of an embedding gradient

// -----

// The Transformer's shared table: (projection + decoder's) + encoder's, the
// scatters as autodiff makes them (decoder first). Each add takes its later
// scatter; the second adds into the first's sum.
func.func @shared(%dout: tensor<100x16xf32>, %ddec: tensor<2x5x16xf32>, %tgt: tensor<2x5xi32>, %denc: tensor<2x7x16xf32>, %src: tensor<2x7xi32>) -> tensor<100x16xf32> {
  %d = tg.embedding_grad %ddec[%tgt] : tensor<2x5x16xf32>, tensor<2x5xi32> -> tensor<100x16xf32>
  %e = tg.embedding_grad %denc[%src] : tensor<2x7x16xf32>, tensor<2x7xi32> -> tensor<100x16xf32>
  %0 = tg.add %d, %dout : tensor<100x16xf32>
  %1 = tg.add %0, %e : tensor<100x16xf32>
  return %1 : tensor<100x16xf32>
}
// CHECK-LABEL: func.func @shared(
// CHECK-SAME: %[[DOUT:[a-z0-9]+]]: tensor<100x16xf32>, %[[DDEC:[a-z0-9]+]]: tensor<2x5x16xf32>, %[[TGT:[a-z0-9]+]]: tensor<2x5xi32>, %[[DENC:[a-z0-9]+]]: tensor<2x7x16xf32>, %[[SRC:[a-z0-9]+]]: tensor<2x7xi32>)
// CHECK-NEXT: %[[S0:[0-9]+]] = tg.embedding_grad %[[DDEC]][%[[TGT]]] plus %[[DOUT]]
// CHECK-NEXT: %[[S1:[0-9]+]] = tg.embedding_grad %[[DENC]][%[[SRC]]] plus %[[S0]]
// CHECK-NEXT: return %[[S1]]
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-embedding-grad-add: added 2 sums in the scatter of an embedding gradient

// -----

// Two bare scatters summed (an input and an output embedding, no
// projection term): the later adds into the earlier.
func.func @two_scatters(%da: tensor<2x7x16xf32>, %a: tensor<2x7xi32>, %db: tensor<2x5x16xf32>, %b: tensor<2x5xi32>) -> tensor<100x16xf32> {
  %x = tg.embedding_grad %da[%a] : tensor<2x7x16xf32>, tensor<2x7xi32> -> tensor<100x16xf32>
  %y = tg.embedding_grad %db[%b] : tensor<2x5x16xf32>, tensor<2x5xi32> -> tensor<100x16xf32>
  %sum = tg.add %y, %x : tensor<100x16xf32>
  return %sum : tensor<100x16xf32>
}
// CHECK-LABEL: func.func @two_scatters(
// CHECK-SAME: %[[DA:[a-z0-9]+]]: tensor<2x7x16xf32>, %[[A:[a-z0-9]+]]: tensor<2x7xi32>, %[[DB:[a-z0-9]+]]: tensor<2x5x16xf32>, %[[B:[a-z0-9]+]]: tensor<2x5xi32>)
// CHECK-NEXT: %[[X:[0-9]+]] = tg.embedding_grad %[[DA]][%[[A]]] :
// CHECK-NEXT: %[[S:[0-9]+]] = tg.embedding_grad %[[DB]][%[[B]]] plus %[[X]]
// CHECK-NEXT: return %[[S]]
// CHECK-NEXT: }

// -----

// The scatter is read again: it must exist whole, so the add stays.
func.func @other_reader(%dout: tensor<100x16xf32>, %dx: tensor<2x7x16xf32>, %ids: tensor<2x7xi32>) -> (tensor<100x16xf32>, tensor<100x16xf32>) {
  %e = tg.embedding_grad %dx[%ids] : tensor<2x7x16xf32>, tensor<2x7xi32> -> tensor<100x16xf32>
  %sum = tg.add %dout, %e : tensor<100x16xf32>
  return %sum, %e : tensor<100x16xf32>, tensor<100x16xf32>
}
// CHECK-LABEL: func.func @other_reader(
// CHECK-NEXT: tg.embedding_grad %{{[a-z0-9]+}}[%{{[a-z0-9]+}}] :
// CHECK-NEXT: tg.add
// REPORT: remark: tg-fuse-embedding-grad-add: added 0 sums in the scatter of an embedding gradient
