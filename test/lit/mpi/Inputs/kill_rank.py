"""Kills one process of a data-parallel run once it has saved a checkpoint:
    kill_rank.py MPIRUN_SH SHM_DIR RANK PROGRAM ARGS...
Starts `sh MPIRUN_SH SHM_DIR -np 2 PROGRAM ARGS...`, waits for rank 0's
"saved checkpoint" line, kills the process of rank RANK with SIGKILL (with
RANK "hang-N", stops rank N with SIGSTOP, a process that hangs; with RANK
"hang-0-after-last-step", stops rank 0 half a second after the log line of
the run's last step, in the validation, save or evaluation that follows it;
with RANK "ctrl-c",
sends mpirun SIGINT as Ctrl-C would; with RANK "term-1-owed", sends rank 1
SIGTERM while rank 0 runs the validation a resumed run owed) and waits for the run to end. Prints
the run's exit status, then its standard output and error (what the user
sees)."""
import os
import re
import signal
import subprocess
import sys
import time


def rank_of(pid):
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            for entry in f.read().split(b"\0"):
                if entry.startswith(b"OMPI_COMM_WORLD_RANK="):
                    return int(entry.split(b"=", 1)[1])
    except OSError:
        pass
    return None


def descendants(root):
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            found.append(child)
            todo.append(child)
    return found


def main():
    mpirun, shm, rank, program = sys.argv[1:5]
    run = subprocess.Popen(["sh", mpirun, shm, "-np", "2", program] + sys.argv[5:],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    # Ctrl-C once training runs; a kill once there is a checkpoint to keep;
    # a hang in rank 0's work after the last step ("step   N/N ...").
    awaited = {"ctrl-c": r"step ",
               "hang-0-after-last-step": r"step +(\d+)/\1 ",
               "term-1-owed": r"note: step \d+, where this run validates"}.get(
                   rank, "saved checkpoint")
    for line in run.stdout:
        if re.match(awaited, line):
            break
    else:
        sys.exit("error: the run ended before printing '%s'" % awaited)
    if rank == "hang-0-after-last-step":
        time.sleep(0.5)  # well inside the seconds of that work
        rank = "hang-0"
    if rank == "ctrl-c":
        # mpirun.sh execs mpirun: usually the child itself.
        mpirun_pid = next((p for p in [run.pid] + descendants(run.pid)
                           if open("/proc/%d/comm" % p).read().strip()
                           in ("mpirun", "orterun", "mpiexec")), None)
        if not mpirun_pid:
            run.kill()
            sys.exit("error: no mpirun under %d" % run.pid)
        os.kill(mpirun_pid, signal.SIGINT)
        out, err = run.communicate(timeout=120)
        print("exit status %d" % run.returncode)
        print(out)
        print(err)
        return
    term = rank == "term-1-owed"
    if term:
        rank = "1"
    hang = rank.startswith("hang-")
    victim_rank = int(rank[len("hang-"):] if hang else rank)
    victim = None
    for _ in range(100):
        victim = next((p for p in descendants(run.pid)
                       if rank_of(p) == victim_rank), None)
        if victim:
            break
        time.sleep(0.1)
    if not victim:
        run.kill()
        sys.exit("error: no process of rank %s" % rank)
    os.kill(victim, signal.SIGTERM if term else
            signal.SIGSTOP if hang else signal.SIGKILL)
    try:
        out, err = run.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        run.kill()
        sys.exit("error: the other process did not stop within 120 s")
    finally:
        if hang:  # a stopped process may outlive mpirun
            try:
                os.kill(victim, signal.SIGKILL)
            except ProcessLookupError:
                pass
    print("exit status %d" % run.returncode)
    if term:
        print(out)
    print(err)


main()
