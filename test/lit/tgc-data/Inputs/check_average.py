"""Checks that AVERAGE holds the element-wise mean of A and B, three raw
little-endian f32 files (a training program's --dump-params).

usage: check_average.py A.bin B.bin AVERAGE.bin
"""
import array
import sys


def floats(path):
    values = array.array("f")
    with open(path, "rb") as f:
        values.frombytes(f.read())
    if sys.byteorder != "little":
        values.byteswap()
    return values


def main():
    a, b, average = (floats(path) for path in sys.argv[1:])
    if not len(a) == len(b) == len(average):
        print(f"sizes differ: {len(a)}, {len(b)}, {len(average)} values")
        return 1
    differ = sum(x != y for x, y in zip(a, b))
    worst = max(abs(m - (x + y) / 2) for x, y, m in zip(a, b, average))
    verdict = "within 1e-6" if worst <= 1e-6 else f"OFF by up to {worst}"
    print(f"{len(a)} values, {differ} differ between the inputs; "
          f"the average is their mean {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
