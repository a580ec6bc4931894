"""test/lit/pytorch/Inputs/gelu_lm.cpp in PyTorch, on its names.

Token embeddings, a linear layer with a bias, PyTorch's GELU in the form
REFERENCE_GELU names (tanh, the default, or none: the exact erf form, as
F.gelu names them), a linear layer to the logits; the mean next-token
cross-entropy over the tokens that are not padding.
"""
import os

from lm_windows import windows

FORM = os.environ.get("REFERENCE_GELU", "tanh")


def loss(p, pairs, torch, heads, kv_heads, label_smoothing, inputs):
    F = torch.nn.functional
    tokens, targets = windows(pairs, inputs["target_in_ids"][1], torch)
    hidden = F.gelu(p["table"][tokens] @ p["w1"] + p["b1"], approximate=FORM)
    logits = hidden @ p["w2"]
    flat = targets.reshape(-1)
    return (F.cross_entropy(logits.reshape(-1, logits.shape[-1]), flat, ignore_index=0,
                            label_smoothing=label_smoothing),
            int((flat != 0).sum()))


def decays(names):
    """The model's weight decay is 0: none."""
    return set()
