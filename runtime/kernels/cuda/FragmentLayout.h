//===- FragmentLayout.h - which lane holds what of a tile ---*- C++ -*-===//
//
// Internal to TgcCudaKernels (and its CPU unit test, which checks these
// plans by emulating a warp's 32 lanes). Plain C++.
//
// The bf16 tensor-core product mma.m16n8k16 (PTX ISA, "Matrix fragments for
// mma.m16n8k16") spreads its tiles over a warp's lanes: lane = 4 group +
// pair. Its f32 accumulator, a 16 x 8 tile, holds four elements a lane:
// element i at row group + 8 (i / 2), column 2 pair + i % 2. The fused
// attention kernels keep their scores in such tiles (rows a warp's 16
// queries or keys, columns 8 of the other side), so each lane needs the
// dropout factors of exactly its four elements; a Philox block gives four
// adjacent keys' factors at once. The two plans below hand every lane its
// four factors for one Philox block a lane: one exchange with the
// neighbour lane where the keys run along the rows' columns, a 4 x 4
// transpose among four lanes where they run down the rows.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_FRAGMENTLAYOUT_H
#define TGC_RUNTIME_CUDA_FRAGMENTLAYOUT_H

#include "runtime/kernels/Philox.h"

namespace tgc::cuda::fragment {

TGC_HOST_DEVICE constexpr int groupOf(int lane) { return lane >> 2; }
TGC_HOST_DEVICE constexpr int pairOf(int lane) { return lane & 3; }

/// Row and column of accumulator element i (0-3) of `lane` in its 16 x 8
/// tile.
TGC_HOST_DEVICE constexpr int accumulatorRow(int lane, int i) {
  return groupOf(lane) + 8 * (i >> 1);
}
TGC_HOST_DEVICE constexpr int accumulatorColumn(int lane, int i) {
  return 2 * pairOf(lane) + (i & 1);
}

/// A operand (16 x 16, row-major) register r (0-3), half h (0: its low 16
/// bits): row and column.
TGC_HOST_DEVICE constexpr int operandARow(int lane, int r) {
  return groupOf(lane) + 8 * (r & 1);
}
TGC_HOST_DEVICE constexpr int operandAColumn(int lane, int r, int h) {
  return 2 * pairOf(lane) + 8 * (r >> 1) + h;
}
/// B operand (16 x 8, k by n) register r (0-1), half h: its k and its n.
TGC_HOST_DEVICE constexpr int operandBRow(int lane, int r, int h) {
  return 2 * pairOf(lane) + 8 * r + h;
}
TGC_HOST_DEVICE constexpr int operandBColumn(int lane) { return groupOf(lane); }

/// An accumulator pair (tiles left and right, 16 columns) as an A operand:
/// register r, half h is element accumulatorOf(r, h) of tile r / 2.
TGC_HOST_DEVICE constexpr int accumulatorOf(int r, int h) {
  return 2 * (r & 1) + h;
}

/// Keys along the columns (scores [queries, keys]): lanes `pair` 2m and
/// 2m + 1 hold columns 4m to 4m + 3 of rows group and group + 8, one
/// Philox block a row. Each draws the block of one row, keeps the half
/// that is its own and swaps the other half with its neighbour (lane ^ 1).
struct ColumnQuads {
  /// The row (0-15) whose block `lane` draws, and the block's first column.
  TGC_HOST_DEVICE static constexpr int drawnRow(int lane) {
    return groupOf(lane) + 8 * (pairOf(lane) & 1);
  }
  TGC_HOST_DEVICE static constexpr int firstColumn(int lane) {
    return 4 * (pairOf(lane) >> 1);
  }
  /// Which half of its block (0: columns 0-1, 1: 2-3) the lane keeps; it
  /// sends the other.
  TGC_HOST_DEVICE static constexpr int keptHalf(int lane) {
    return pairOf(lane) & 1;
  }
  /// Element i's factor: block[2 keptHalf + i % 2] where i's row is the
  /// drawn one, else value i % 2 of the two the neighbour sent.
  TGC_HOST_DEVICE static constexpr bool fromOwnBlock(int lane, int i) {
    return (i >> 1) == keptHalf(lane);
  }
};

/// Keys down the rows (transposed scores [keys, queries]): the lanes of a
/// `pair` whose groups share a group / 4 hold rows 4 (group / 4) + r and
/// the same + 8, r = group % 4, of columns 2 pair and 2 pair + 1: four
/// Philox blocks (two rows halves, two columns), one a lane. The lane of r
/// draws the block of its element r (column 2 pair + r % 2, rows from
/// 8 (r / 2) + 4 (group / 4) on); value r of block c belongs to the lane of
/// r as its element c. Round q (0-3) sends value r ^ q of the lane's block
/// to the lane of r ^ q (lane ^ laneMask(q)), which keeps it as its element
/// r ^ q (round 0 keeps the lane's own value).
struct RowQuads {
  TGC_HOST_DEVICE static constexpr int quadIndex(int lane) {
    return groupOf(lane) & 3;
  }
  /// The first row of the block `lane` draws, and its column.
  TGC_HOST_DEVICE static constexpr int firstRow(int lane) {
    return 8 * (quadIndex(lane) >> 1) + 4 * (groupOf(lane) >> 2);
  }
  TGC_HOST_DEVICE static constexpr int column(int lane) {
    return 2 * pairOf(lane) + (quadIndex(lane) & 1);
  }
  TGC_HOST_DEVICE static constexpr int laneMask(int round) {
    return round << 2;
  }
  /// The value sent in `round` and the element it arrives as.
  TGC_HOST_DEVICE static constexpr int sentValue(int lane, int round) {
    return quadIndex(lane) ^ round;
  }
  TGC_HOST_DEVICE static constexpr int receivedElement(int lane, int round) {
    return quadIndex(lane) ^ round;
  }
};

} // namespace tgc::cuda::fragment

#endif // TGC_RUNTIME_CUDA_FRAGMENTLAYOUT_H
