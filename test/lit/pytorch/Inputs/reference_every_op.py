"""test/lit/model-file/Inputs/every-op.cpp in PyTorch, on its names.

One op of PyTorch for each DSL op the model uses: gather and mean (the
source's mean embedding), arange (iota), split, sigmoid, SiLU, GELU exact
and tanh, tanh, abs, maximum and minimum with numbers, a comparison as a
0/1 mask, where, pow, concat of slices, amax and amin, LayerNorm (epsilon
1e-6, the DSL's default), the tied logits, cross-entropy with label
smoothing 0.1 ignoring padding, and an L2 term on w2 added to the loss.
"""
from translation_batch import PAD, batch


def loss(p, pairs, torch, heads, kv_heads, label_smoothing, inputs):
    F = torch.nn.functional
    source, target_in, target_out = batch(pairs, inputs["source_ids"][1],
                                          inputs["target_in_ids"][1], torch)
    table, width = p["embedding"], p["embedding"].shape[1]
    length = target_in.shape[1]
    context = table[source].mean(dim=1, keepdim=True)
    positions = torch.arange(length, dtype=torch.float32)[:, None] / length
    x = table[target_in] + positions + context

    first, second = (x @ p["w1"]).chunk(2, dim=-1)
    gate = torch.sigmoid(first) * 0.5 + F.silu(second) * 0.25
    act = (F.gelu(first) + F.gelu(second, approximate="tanh") + torch.tanh(gate)
           + 0.1 * second.abs())
    clipped = torch.minimum(torch.maximum(act, torch.tensor(-2.0)), torch.tensor(2.0))
    leaky = torch.where(clipped > 0, clipped, 0.1 * clipped)
    squared = clipped.pow(2) * (clipped.abs() <= 1).float()
    mixed = leaky + 0.5 * squared - 0.25
    half = width // 2
    swapped = torch.cat([mixed[..., half:], mixed[..., :half]], dim=-1)
    spread = swapped.amax(dim=2, keepdim=True) - swapped.amin(dim=2, keepdim=True)
    h = F.layer_norm(x + (swapped @ p["w2"]) / (1.0 + spread), (width,), p["gamma"],
                     p["beta"], eps=1e-6)
    logits = h @ table.t()
    flat = target_out.reshape(-1)
    cross_entropy = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), flat,
                                    ignore_index=PAD, label_smoothing=label_smoothing)
    return cross_entropy + 1e-3 * p["w2"].pow(2).sum(), int((flat != PAD).sum())


def decays(names):
    """tg-adam's default rule: the matrices w1 and w2; not the embedding
    table, the gain or the shift."""
    return {"w1", "w2"}
