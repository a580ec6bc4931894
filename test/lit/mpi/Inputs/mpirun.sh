#!/bin/sh
# mpirun as the data-parallel tests run it, on one machine:
#   mpirun.sh DIR mpirun-arguments...
# DIR receives Open MPI's shared-memory segments (removed with the test's
# directory, instead of being left in /dev/shm). Running as root needs the
# two ALLOW variables; a container without ptrace needs single-copy off;
# more ranks than cores need oversubscription; --bind-to none lets each
# rank's threads use any core.
dir=$1
shift
mkdir -p "$dir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_btl_vader_backing_directory="$dir"
export OMPI_MCA_orte_tmpdir_base="$dir"
# Under the sanitizers (test/sanitizers.sh), MPI_Init's own allocations are
# not the program's leaks.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
exec mpirun --bind-to none "$@"
