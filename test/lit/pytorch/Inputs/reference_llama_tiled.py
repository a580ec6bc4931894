"""reference_llama.py with the other order of grouped-query attention's
heads, a wrong one for Llama.cpp (llama-groups.test's negative check): the
key and value heads tiled across the query heads (query head h on key and
value head h % kv_heads, torch's repeat) instead of each serving its
consecutive group (h // (heads / kv_heads), repeat_interleave)."""
import reference_llama


def loss(p, pairs, torch, **options):
    interleave = torch.Tensor.repeat_interleave
    torch.Tensor.repeat_interleave = lambda t, group, dim: t.repeat(1, group, 1, 1)
    try:
        return reference_llama.loss(p, pairs, torch, **options)
    finally:
        torch.Tensor.repeat_interleave = interleave


decays = reference_llama.decays
