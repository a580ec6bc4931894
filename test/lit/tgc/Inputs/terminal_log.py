"""Checks a training binary's log on a terminal and through a pipe.

usage: terminal_log.py BINARY WORKDIR TRAIN_SOURCE TRAIN_TARGET

Through a pipe the log is plain lines: no carriage return, no escape code.

On a terminal (script(1) gives the program a pseudo-terminal) a run of 4
seconds (--max-time) validates after every step, so that each redrawn status
line gives way to a validation line, and logs about every 3 seconds (the
steps a piped run of 1 second trains, times 3), so that the status line is
drawn between log lines even when the load on the machine changes. The bytes are replayed on a small
terminal model (carriage return, line feed, erase to the end of the line):
each line of the final screen must be a whole log, validation or checkpoint
line, none glued to another or left with a status line's leftovers, and
every log line written must still be there. Every carriage return that does
not end a line must come with the erase code, and the status line must have
been drawn and replaced by a validation line. Then a Ctrl-C typed on the
terminal while the status line is drawn must stop a run as it does
elsewhere (saved, exit 130), its lines whole.
Prints one summary line; exits 1 with a reason otherwise.
"""
import os
import re
import shlex
import subprocess
import sys

binary, workdir, source, target = sys.argv[1:5]
os.makedirs(workdir, exist_ok=True)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def command(name, *flags):
    return [binary, "--train-source", source, "--train-target", target,
            "--valid-source", source, "--valid-target", target,
            "--eval-sentences", "0",
            "--checkpoint", os.path.join(workdir, name + ".ckpt"), *flags]


# The log's own lines, whole.
LOG_LINE = (
    r"step +\d+/\d+  epoch \d+  loss \d+\.\d{4}  ppl +\d+\.\d{3}  gnorm +\d+\.\d{3}"
    r"  lr \d\.\d{3}e[-+]\d\d  tok/s +\d+  pad +\d+\.\d%  elapsed +\d+\.\ds"
    r"  eta +\d+\.\ds")
LINES = [
    LOG_LINE,
    r"valid step \d+: .*",
    r"saved checkpoint \S+ at step \d+",
    r"stopping after step \d+: --max-time reached after .*",
    r"trained \d+ steps in .*",
    r"interrupted by SIGINT after step \d+; continue with --resume \S+",
    r"transformer-tiny: .*",
    r"\S+ \+ \S+: \d+ pairs.*",
    r"batches: .*",
    r"",
]


def check_lines(lines, where):
    for line in lines:
        if not any(re.fullmatch(p, line) for p in LINES):
            fail(f"{where} shows the line {line!r}")


def plain_run():
    result = subprocess.run(
        command("piped", "--steps", "40", "--log-every", "10",
                "--valid-every", "20", "--save-every", "15"),
        capture_output=True)
    if result.returncode != 0:
        fail(f"the piped run exited {result.returncode}: {result.stderr!r}")
    out = result.stdout + result.stderr
    if b"\r" in out or b"\x1b" in out:
        fail(f"the piped log has a carriage return or an escape code: {out!r}")
    lines = out.decode().split("\n")
    check_lines(lines, "the piped log")
    for step in (1, 10, 20, 30, 40):
        if not any(re.match(rf"step +{step}/40  epoch ", l) for l in lines):
            fail(f"the piped log has no line for step {step}")
    for line in ("saved checkpoint .* at step 15", "valid step 20: .*"):
        if not any(re.fullmatch(line, l) for l in lines):
            fail(f"the piped log has no line {line!r}")


def screen(data):
    """The lines a terminal shows after `data` (no wrapping)."""
    lines, row, column = [""], 0, 0
    i = 0
    while i < len(data):
        c = data[i]
        if data.startswith("\x1b[K", i):
            lines[row] = lines[row][:column]
            i += 3
            continue
        if c == "\x1b":
            fail(f"unexpected escape code at {data[i:i + 10]!r}")
        if c == "\r":
            column = 0
        elif c == "\n":
            row, column = row + 1, 0
            if row == len(lines):
                lines.append("")
        else:
            text = lines[row]
            lines[row] = text[:column] + c + text[column + 1:]
            column += 1
        i += 1
    return lines


def on_terminal(args, ctrl_c=False):
    """What `args` writes on a terminal, its exit code and the screen it
    leaves; with `ctrl_c`, Ctrl-C is typed once a status line is drawn."""
    process = subprocess.Popen(
        ["script", "-qec", " ".join(shlex.quote(a) for a in args), "/dev/null"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out = b""
    while ctrl_c and b"steps/s" not in out:
        chunk = os.read(process.stdout.fileno(), 4096)
        if not chunk:
            fail(f"Ctrl-C: the run ended first: {out!r}")
        out += chunk
    if ctrl_c:
        process.stdin.write(b"\x03")
        process.stdin.flush()
    rest, _ = process.communicate(timeout=300)
    data = (out + rest).decode()
    # Carriage returns: a line's end (the terminal's \r\n), or the erase.
    for match in re.finditer(r"\r(?!\n)", data):
        if not data.startswith("\r\x1b[K", match.start()):
            fail(f"a carriage return without erasing: "
                 f"{data[match.start():match.start() + 40]!r}")
    shown = screen(data)
    check_lines(shown, "the terminal")
    return process.returncode, data, shown


def terminal_run():
    flags = ("--steps", "100000000", "--valid-every", "1")
    timed = subprocess.run(
        command("timed", *flags, "--max-time", "0:00:01",
                "--log-every", "100000000"),
        capture_output=True, text=True)
    match = re.search(r"trained (\d+) steps", timed.stdout)
    if timed.returncode != 0 or not match:
        fail(f"the timed run exited {timed.returncode}: {timed.stderr!r}")
    # About 3 s between log lines at the timed run's pace: the status line
    # (drawn a second after the last line) still shows when the terminal run
    # goes twice as fast, as it may on a machine whose load changes.
    every = max(1, int(match.group(1)) * 3)
    code, data, shown = on_terminal(command(
        "terminal", *flags, "--max-time", "0:00:04", "--log-every", str(every)))
    if code != 0:
        fail(f"the terminal run exited {code}: {data!r}")
    written = len(re.findall(r"step +\d+/\d+  epoch \d+  loss ", data))
    kept = len([l for l in shown if re.fullmatch(LOG_LINE, l)])
    if kept != written or kept < 2:
        fail(f"the terminal shows {kept} of the {written} log lines written")
    redraws = len(re.findall(r"\r\x1b\[Kstep +\d+/\d+  epoch \d+  [0-9.]+ "
                             r"steps/s  tok/s \d+  eta [0-9.]+s", data))
    if redraws == 0:
        fail(f"no status line was drawn: {data!r}")
    if not re.search(r"steps/s[^\n]*\r\x1b\[Kvalid step", data):
        fail(f"no validation line replaced a status line: {data!r}")
    return kept, redraws


def ctrl_c_run():
    code, data, shown = on_terminal(
        command("ctrl-c", "--steps", "100000000", "--log-every", "100000000"),
        ctrl_c=True)
    if code != 130:
        fail(f"Ctrl-C: exit {code}, not 130: {data!r}")
    if not any(l.startswith("interrupted by SIGINT") for l in shown):
        fail(f"Ctrl-C: no line says so: {data!r}")


plain_run()
kept, redraws = terminal_run()
ctrl_c_run()
print(f"terminal: {kept} log lines kept, status line drawn {redraws} "
      f"time(s), Ctrl-C saved; pipe: plain lines")
