#!/bin/sh
# miniflare's workerd, as bench/profile/callgrind.ts has wrangler start it (MINIFLARE_WORKERD_PATH):
# the process that runs the user's Worker (the one given an inspector) under valgrind's callgrind,
# counting nothing until told to (callgrind_control -z, then -d); wrangler's own proxy as it is.
case "$*" in
  *--inspector-addr*)
    exec valgrind --tool=callgrind --smc-check=all-non-file --callgrind-out-file="$CALLGRIND_OUT/cg.%p" "$SLOTGATE_WORKERD" "$@" ;;
esac
exec "$SLOTGATE_WORKERD" "$@"
