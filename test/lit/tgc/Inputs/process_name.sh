#!/bin/sh
# Starts a training program (the arguments) in the background, waits for its
# first log line (it has started itself again by then: that is the first
# thing its main does), prints its process name as ps and pgrep see it
# (/proc/PID/comm), and stops it with SIGINT.
log=$(mktemp)
"$@" > "$log" 2>&1 &
pid=$!
tries=0
while [ ! -s "$log" ] && [ $tries -lt 600 ]; do
  sleep 0.1
  tries=$((tries + 1))
done
echo "comm $(cat /proc/$pid/comm)"
kill -INT $pid
wait $pid
rm -f "$log"
