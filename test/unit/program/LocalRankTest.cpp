//===- LocalRankTest.cpp - a process's local rank from its launcher ------===//
#include "runtime/program/parallel/LocalRank.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace tgc::runtime;

namespace {

const char *const kVariables[] = {
    "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
    "MPI_LOCALRANKID",            "MPI_LOCALNRANKS",
    "MV2_COMM_WORLD_LOCAL_RANK",  "MV2_COMM_WORLD_LOCAL_SIZE",
    "SLURM_LOCALID"};

/// Each test starts without any launcher's variables.
class LocalRankTest : public ::testing::Test {
protected:
  void SetUp() override {
    for (const char *name : kVariables)
      unsetenv(name);
  }
  void TearDown() override { SetUp(); }
};

TEST_F(LocalRankTest, AloneWithoutALauncher) {
  LocalRank local = localRank();
  EXPECT_EQ(local.rank, 0);
  EXPECT_EQ(local.count, 1);
}

TEST_F(LocalRankTest, ReadsEachLaunchersVariables) {
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4", 1);
  EXPECT_EQ(localRank().rank, 1);
  EXPECT_EQ(localRank().count, 4);
  SetUp();
  setenv("MPI_LOCALRANKID", "2", 1); // MPICH's Hydra, Intel MPI
  setenv("MPI_LOCALNRANKS", "3", 1);
  EXPECT_EQ(localRank().rank, 2);
  EXPECT_EQ(localRank().count, 3);
  SetUp();
  setenv("MV2_COMM_WORLD_LOCAL_RANK", "3", 1);
  EXPECT_EQ(localRank().rank, 3);
  EXPECT_EQ(localRank().count, 0); // no size: not known
  SetUp();
  setenv("SLURM_LOCALID", "1", 1);
  EXPECT_EQ(localRank().rank, 1);
  EXPECT_EQ(localRank().count, 0); // Slurm's counts are not read
}

TEST_F(LocalRankTest, ABadValueIsRankZero) {
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "-3", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "x", 1);
  EXPECT_EQ(localRank().rank, 0);
  EXPECT_EQ(localRank().count, 1); // at least this process
}

} // namespace
