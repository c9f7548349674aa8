#!/bin/sh
# An MCP server that never answers: it reads nothing, ignores SIGTERM and
# keeps a child of its own, as a wedged server can. sandcall must neither
# wait for it nor leave it (or its child) behind.
trap '' TERM
sleep 1000 &
wait
