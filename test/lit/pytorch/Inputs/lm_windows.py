"""A language model's batch from a corpus of documents, as tgc's programs
cut it: the documents as one stream with an end-of-document token (EOS)
after each, windows of context + 1 tokens every context tokens; a window's
first context tokens are the input, its last context the targets."""

EOS = 2


def windows(pairs, context, torch):
    stream = []
    for _, document in pairs:
        stream += document + [EOS]
    count = (len(stream) - 1) // context
    rows = torch.tensor([stream[w * context:w * context + context + 1]
                         for w in range(count)], dtype=torch.long)
    return rows[:, :-1], rows[:, 1:]
