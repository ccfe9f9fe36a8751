#!/bin/sh
# Entry point of the worker image (deploy/worker/Dockerfile). With no arguments, or only
# options, it runs `harness worker --queue "$HARNESSLAB_QUEUE"` with those options (for example
# `--concurrency 2`); any other arguments are a harness command, such as
# `compare validate examples/fix-the-bug/experiment.json` to check that the sandbox starts here.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
case "${1:-}" in
  "" | -*)
    if [ -z "${HARNESSLAB_QUEUE:-}" ]; then
      echo "harnesslab worker image: set HARNESSLAB_QUEUE to the Redis the coordinator uses: redis://[:password@]host:port[/db], or rediss://… for TLS" >&2
      exit 2
    fi
    exec node "$root/dist/cli/bin.js" worker --queue "$HARNESSLAB_QUEUE" "$@"
    ;;
  *)
    exec node "$root/dist/cli/bin.js" "$@"
    ;;
esac
