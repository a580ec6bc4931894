// tg-derive-decoder's refusals: each names the op (or function) it cannot
// split.
// RUN: tgc-opt --tg-derive-decoder --split-input-file --verify-diagnostics %s

// Without @predict there is nothing to split.
// expected-error @+1 {{tg-derive-decoder: no function @predict}}
module {
}

// -----

// A reduction over the target positions has no one-position form.
module {
  func.func @predict(%src: tensor<2x3xi32> {tg.name = "source_ids"}, %tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x10xf32> {
    %e = tg.constant dense<0.5> : tensor<10x8xf32>
    %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %l = tg.matmul %x, %e transpose_rhs : tensor<2x4x8xf32>, tensor<10x8xf32> -> tensor<2x4x10xf32>
    // expected-error @+1 {{'tg.reduce_sum' op cannot run one target position at a time: it reduces over the target positions}}
    %r = tg.reduce_sum %l dims [1] : tensor<2x4x10xf32> -> tensor<2x10xf32>
    return %r : tensor<2x10xf32>
  }
}

// -----

// A rotary embedding turns its positions (dimension rank - 2); target
// positions elsewhere would be turned by the wrong index.
module {
  func.func @predict(%src: tensor<2x3xi32> {tg.name = "source_ids"}, %tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x4x8xf32> {
    %e = tg.constant dense<0.5> : tensor<10x8xf32>
    %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %h = tg.reshape %x : tensor<2x4x8xf32> -> tensor<2x4x1x8xf32>
    // expected-error @+1 {{'tg.rotary' op cannot run one target position at a time: its positions (dimension rank - 2) are not the target positions}}
    %r = tg.rotary %h base 1.000000e+04 : tensor<2x4x1x8xf32>
    %y = tg.reshape %r : tensor<2x4x1x8xf32> -> tensor<2x4x8xf32>
    return %y : tensor<2x4x8xf32>
  }
}

// -----

// Unfused attention (scores between target positions) must be fused first.
module {
  func.func @predict(%src: tensor<2x3xi32> {tg.name = "source_ids"}, %tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x4x4xf32> {
    %e = tg.constant dense<0.5> : tensor<10x8xf32>
    %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    // expected-error @+1 {{'tg.matmul' op cannot run one target position at a time: positions must be rows of its left operand}}
    %s = tg.matmul %x, %x transpose_rhs : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
    return %s : tensor<2x4x4xf32>
  }
}

// -----

// A slice along the target positions has no one-position form.
module {
  func.func @predict(%src: tensor<2x3xi32> {tg.name = "source_ids"}, %tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x2x8xf32> {
    %e = tg.constant dense<0.5> : tensor<10x8xf32>
    %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    // expected-error @+1 {{'tg.slice' op cannot run one target position at a time: it slices the target positions}}
    %s = tg.slice %x dim 1 start 1 : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
    return %s : tensor<2x2x8xf32>
  }
}

// -----

// Nor does a concatenation along them.
module {
  func.func @predict(%src: tensor<2x3xi32> {tg.name = "source_ids"}, %tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x8x8xf32> {
    %e = tg.constant dense<0.5> : tensor<10x8xf32>
    %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    // expected-error @+1 {{'tg.concat' op cannot run one target position at a time: it joins tensors along the target positions}}
    %c = tg.concat %x, %x dim 1 : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x8x8xf32>
    return %c : tensor<2x8x8xf32>
  }
}

// -----

// Nor a gather along them (the positions it takes are any).
module {
  func.func @predict(%src: tensor<2x3xi32> {tg.name = "source_ids"}, %tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x3x8xf32> {
    %e = tg.constant dense<0.5> : tensor<10x8xf32>
    %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %rows = tg.constant dense<[3, 0, 1]> : tensor<3xi32>
    // expected-error @+1 {{'tg.gather' op cannot run one target position at a time: it gathers along the target positions}}
    %g = tg.gather %x[%rows] dim 1 : tensor<2x4x8xf32>, tensor<3xi32> -> tensor<2x3x8xf32>
    return %g : tensor<2x3x8xf32>
  }
}

// -----

// Nor a gather whose input and indices both come from the target.
module {
  func.func @predict(%src: tensor<2x3xi32> {tg.name = "source_ids"}, %tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x4x2x4xf32> {
    %e = tg.constant dense<0.5> : tensor<10x8xf32>
    %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    // expected-error @+1 {{'tg.gather' op cannot run one target position at a time: its input and its indices both depend on the target}}
    %g = tg.gather %x[%tin] dim 2 : tensor<2x4x8xf32>, tensor<2x4xi32> -> tensor<2x4x2x4xf32>
    return %g : tensor<2x4x2x4xf32>
  }
}

// -----

// An RMSNorm whose last dimension is the target positions normalizes over
// them: no one-position form.
module {
  func.func @predict(%src: tensor<2x3xi32> {tg.name = "source_ids"}, %tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x8x4xf32> {
    %e = tg.constant dense<0.5> : tensor<10x8xf32>
    %g = tg.constant dense<1.0> : tensor<4xf32>
    %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %t = tg.transpose %x permutation [0, 2, 1] : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
    // expected-error @+1 {{'tg.rms_norm' op cannot run one target position at a time: it normalizes over positions}}
    %n = tg.rms_norm %t, %g eps 1.0e-06 : tensor<2x8x4xf32>, tensor<4xf32>
    return %n : tensor<2x8x4xf32>
  }
}

// -----

// A forward that writes a variable (here from the target) has no
// incremental form (it once left @encode with a store of an erased value,
// and the verifier crashed).
module {
  tg.variable @running init(zeros) : tensor<2x4x8xf32>
  func.func @predict(%src: tensor<2x3xi32> {tg.name = "source_ids"}, %tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x4x8xf32> {
    %e = tg.constant dense<0.5> : tensor<10x8xf32>
    %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    // expected-error @+1 {{tg-derive-decoder: @predict writes a variable here; a model whose forward writes state has no incremental decoder}}
    tg.store %x, @running : tensor<2x4x8xf32>
    return %x : tensor<2x4x8xf32>
  }
}

// -----

// A causal attention whose keys come from the source: causality orders one
// sequence's positions, so it is named as such (it said only queries may
// come from the target, which they do).
module {
  func.func @predict(%src: tensor<2x4xi32> {tg.name = "source_ids"}, %tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x1x4x8xf32> {
    %e = tg.constant dense<0.5> : tensor<10x8xf32>
    %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %s = tg.embedding %e[%src] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %q = tg.reshape %x : tensor<2x4x8xf32> -> tensor<2x1x4x8xf32>
    %k = tg.reshape %s : tensor<2x4x8xf32> -> tensor<2x1x4x8xf32>
    // expected-error @+1 {{'tg.attention' op cannot run one target position at a time: a causal attention whose keys come from the source (causality orders one sequence's positions)}}
    %o, %lse = tg.attention %q, %k, %k causal scale 0.353553385 dropout 0.0 op_id 0 : (tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>) -> (tensor<2x1x4x8xf32>, tensor<2x1x4xf32>)
    return %o : tensor<2x1x4x8xf32>
  }
}
