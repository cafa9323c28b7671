#!/bin/sh
# enqueue --lines makes one task per input line, all in one transaction:
# the ids come back in input order, payloads are the lines; and when any
# line is refused (over the 1 MiB payload limit) nothing at all is written
# and the exit status is 65.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

printf 'alpha\nbeta gamma\n\ndelta\n' >"$T/in"
sk enqueue word --lines "$T/in" >"$T/ids"
expect_eq "$(wc -l <"$T/ids" | tr -d ' ')" 4 "ids printed"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task")" 4 "tasks"
i=0
for want in alpha "beta gamma" "" delta; do
	i=$((i + 1))
	id=$(sed -n "${i}p" "$T/ids")
	expect_eq "$(sql "SELECT payload FROM {p}task WHERE id = $id")" "$want" "payload of line $i"
done
# ids ascend in input order
expect_eq "$(sort -n "$T/ids" | tr '\n' ' ')" "$(tr '\n' ' ' <"$T/ids")" "ids in input order"

# stdin works too
printf 'one\ntwo\n' | sk enqueue word --lines - >/dev/null
expect_eq "$(count "SELECT COUNT(*) FROM {p}task")" 6 "tasks after stdin lines"

# A line of 1 MiB + 1 byte in the middle: all or nothing.
{
	echo first
	head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' x
	echo
	echo last
} >"$T/big"
expect_rc 65 sk enqueue word --lines "$T/big"
stderr_one_line "$T/err"
[ ! -s "$T/out" ] || fail "ids printed for a refused batch"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task")" 6 "tasks after the refused batch"

# Exactly 1 MiB is allowed.
head -c $((1024 * 1024)) /dev/zero | tr '\0' y >"$T/max"
echo >>"$T/max"
sk enqueue word --lines "$T/max" >/dev/null
expect_eq "$(count "SELECT COUNT(*) FROM {p}task")" 7 "tasks after a 1 MiB line"
expect_eq "$(sql "SELECT LENGTH(payload) FROM {p}task ORDER BY id DESC LIMIT 1")" $((1024 * 1024)) "length of the 1 MiB payload"

# Flags that cannot go with --lines are usage errors, and write nothing.
expect_rc 64 sk enqueue word --lines "$T/in" --unique k
stderr_one_line "$T/err"
expect_rc 66 sk enqueue word --lines "$T/no-such-file"
stderr_one_line "$T/err"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task")" 7 "tasks after refused flags"
