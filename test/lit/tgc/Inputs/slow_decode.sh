#!/bin/sh
# Stands in for tgc-data ($TGC_DATA) in robust-interrupt.test: `decode`
# first leaves the file $SLOW_DECODE_MARK, then takes a second.
if [ "$1" = decode ]; then
  touch "$SLOW_DECODE_MARK"
  sleep 1
fi
exec tgc-data "$@"
