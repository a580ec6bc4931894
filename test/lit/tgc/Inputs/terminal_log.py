"""Checks a training binary's log on a terminal and through a pipe.

usage: terminal_log.py BINARY WORKDIR TRAIN_SOURCE TRAIN_TARGET

Through a pipe the log is plain lines: no carriage return, no escape code.

On a terminal (script(1) gives the program a pseudo-terminal) a run of 3
seconds (--max-time) validates after every step, so that each redrawn status
line gives way to a validation line. The bytes are replayed on a small
terminal model (carriage return, line feed, erase to the end of the line):
each line of the final screen must be a whole log, validation or checkpoint
line, none glued to another or left with a status line's leftovers, and
every log line written must still be there. Every carriage return that
does not end a line must come with the erase code, and the status line must
have been drawn and replaced by a validation line.
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
LINES = [
    r"step +\d+/\d+  epoch \d+  loss \d+\.\d{4}  ppl +\d+\.\d{3}  gnorm +\d+\.\d{3}"
    r"  lr \d\.\d{3}e[-+]\d\d  tok/s +\d+  pad +\d+\.\d%  elapsed +\d+\.\ds"
    r"  eta +\d+\.\ds",
    r"valid step \d+: .*",
    r"saved checkpoint \S+ at step \d+",
    r"stopping after step \d+: --max-time reached after .*",
    r"trained \d+ steps in .*",
    r"transformer-tiny: .*",
    r"\S+ \+ \S+: \d+ pairs.*",
    r"batches: .*",
    r"",
]


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
    for line in lines:
        if not any(re.fullmatch(p, line) for p in LINES):
            fail(f"the piped log has the line {line!r}")
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


def terminal_run():
    args = command("terminal", "--steps", "100000000", "--max-time", "0:00:03",
                   "--log-every", "500", "--valid-every", "1")
    result = subprocess.run(
        ["script", "-qec", " ".join(shlex.quote(a) for a in args), "/dev/null"],
        capture_output=True)
    if result.returncode != 0:
        fail(f"the terminal run exited {result.returncode}: {result.stdout!r}")
    data = result.stdout.decode()
    # Carriage returns: a line's end (the terminal's \r\n), or the erase.
    for match in re.finditer(r"\r(?!\n)", data):
        if not data.startswith("\r\x1b[K", match.start()):
            fail(f"a carriage return without erasing: "
                 f"{data[match.start():match.start() + 40]!r}")
    shown = screen(data)
    for line in shown:
        if not any(re.fullmatch(p, line) for p in LINES):
            fail(f"the terminal shows the line {line!r}")
    written = len(re.findall(r"step +\d+/\d+  epoch \d+  loss ", data))
    kept = len([l for l in shown if re.fullmatch(LINES[0], l)])
    if kept != written or kept < 2:
        fail(f"the terminal shows {kept} of the {written} log lines written")
    redraws = len(re.findall(r"\r\x1b\[Kstep +\d+/\d+  epoch \d+  [0-9.]+ "
                             r"steps/s  tok/s \d+  eta [0-9.]+s", data))
    if redraws == 0:
        fail(f"no status line was drawn: {data!r}")
    if not re.search(r"steps/s[^\n]*\r\x1b\[Kvalid step", data):
        fail(f"no validation line replaced a status line: {data!r}")
    return kept, redraws


plain_run()
kept, redraws = terminal_run()
print(f"terminal: {kept} log lines kept, status line drawn {redraws} "
      f"time(s); pipe: plain lines")
