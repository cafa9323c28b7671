#!/bin/sh
# A sked pipe: handler in plain sh: one task per line in, one answer out.
#
# Run it as `sked worker --handler cleanup=pipe:examples/handlers/pipe_handler.sh`.
# The id is the only field this handler reads (with sed); lines without one
# (sked's hello) are skipped. Anything written to stderr is logged by sked.
while IFS= read -r line; do
	id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
	[ -n "$id" ] || continue
	echo "cleaning up for task $id" >&2
	printf '{"id":%s,"ok":true}\n' "$id"
done
