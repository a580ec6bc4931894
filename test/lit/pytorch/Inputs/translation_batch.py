"""A translation batch from a corpus of pairs, as tgc's programs pack it
(runtime/data/Tasks.cpp, packRow): the source's tokens then EOS; target_in
BOS then the target's tokens; target_out the target's tokens then EOS; 0
(padding) after each. against_pytorch.py's corpora fill the bucket exactly
(with --padded, their first pair does)."""

PAD, BOS, EOS = 0, 1, 2


def batch(pairs, source_length, target_length, torch):
    """(source, target_in, target_out), each [pairs, length] int64."""
    def padded(ids, length):
        assert len(ids) <= length, "a pair longer than the bucket"
        return ids + [PAD] * (length - len(ids))

    source = [padded(s + [EOS], source_length) for s, _ in pairs]
    target_in = [padded([BOS] + t, target_length) for _, t in pairs]
    target_out = [padded(t + [EOS], target_length) for _, t in pairs]
    return tuple(torch.tensor(rows, dtype=torch.long)
                 for rows in (source, target_in, target_out))
