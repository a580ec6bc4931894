"""Writes a small parallel corpus of token ids, each target the source
reversed, sentences of 1 to 6 ids (so both of two buckets get batches):
    reverse_ids.py SOURCE TARGET"""
import random
import sys

random.seed(7)
with open(sys.argv[1], "w") as source, open(sys.argv[2], "w") as target:
    for _ in range(300):
        ids = [str(random.randint(3, 15)) for _ in range(random.randint(1, 6))]
        source.write(" ".join(ids) + "\n")
        target.write(" ".join(reversed(ids)) + "\n")
