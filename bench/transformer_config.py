"""The Transformer's config as bench/ needs it: models/Presets.cpp's presets,
text-format overrides (bench/configs/*.pbtxt) and the training FLOPs of a step.
Plain Python, no PyTorch: bench/run.py imports it too."""


class Config:
    """The fields of models/TransformerConfig.proto, by the same names."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def preset(name):
    """models/Presets.cpp's makeConfig for one preset."""
    vocab, d, heads, ff, layers, drop, attn_drop, batch, length, warmup = {
        "tiny": (16, 32, 4, 64, 2, 0.1, 0.1, 4, 8, 100),
        "small": (1000, 128, 4, 512, 3, 0.1, 0.0, 32, 32, 1000),
        "base": (37000, 512, 8, 2048, 6, 0.1, 0.0, 64, 64, 4000),
        "big": (37000, 1024, 16, 4096, 6, 0.3, 0.0, 64, 64, 4000),
    }[name]
    return Config(vocab_size=vocab, d_model=d, num_heads=heads, d_ff=ff,
                  encoder_layers=layers, decoder_layers=layers, dropout=drop,
                  attention_dropout=attn_drop, label_smoothing=0.1,
                  layer_norm_epsilon=1e-6, batch_size=batch,
                  source_length=length, target_length=length, pad_id=0,
                  adam_beta1=0.9, adam_beta2=0.98, adam_epsilon=1e-9,
                  warmup_steps=warmup, lr_factor=1.0)


def load(name, overrides=None):
    """The preset with a flat text-format file's `field: value` lines applied."""
    c = preset(name)
    for line in open(overrides).read().splitlines() if overrides else []:
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        field, value = (s.strip() for s in line.split(":", 1))
        if not hasattr(c, field):
            raise SystemExit(f"{overrides}: unknown field '{field}'")
        setattr(c, field, type(getattr(c, field))(float(value)))
    return c


def train_flops(c, attention_products=True):
    """Model FLOPs of one training step: every forward GEMM at 2*M*N*K, times 3
    (the backward is two GEMMs per forward GEMM). Attention is counted in full
    (no skipping of causally masked blocks, no recomputation). Without
    attention_products: the projections, FFNs and logits alone (what tgc's
    GEMM ops compute; its attention's products are inside tg.attention)."""
    B, S, T, d, ff = c.batch_size, c.source_length, c.target_length, c.d_model, c.d_ff
    scores = 1 if attention_products else 0

    def mm(m, n, k):
        return 2 * m * n * k

    ffn = lambda rows: mm(rows, ff, d) + mm(rows, d, ff)
    # Q K^T and P V summed over heads: [Sq, d_k] x [d_k, Sk] per head = Sq*Sk*d.
    encoder = 4 * mm(B * S, d, d) + scores * 2 * mm(B * S, S, d) + ffn(B * S)
    decoder = (4 * mm(B * T, d, d) + scores * 2 * mm(B * T, T, d)  # self-attention
               + 2 * mm(B * T, d, d) + 2 * mm(B * S, d, d)         # cross: Q, O; K, V
               + scores * 2 * mm(B * T, S, d) + ffn(B * T))
    logits = mm(B * T, c.vocab_size, d)                          # y E^T
    forward = c.encoder_layers * encoder + c.decoder_layers * decoder + logits
    return 3 * forward
