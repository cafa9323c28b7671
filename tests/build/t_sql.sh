#!/bin/sh
# tests/build/t_sql.sh — build/sked-sql (tools/sked_sql.c), the tool that
# prints every statement as each dialect renders it, keeps working: for
# every dialect one entry per enum sked_sql member, each named, the claim
# and finish texts among them; the schema steps up to SKED_SCHEMA_VERSION;
# bad arguments exit 64.
set -eu
tool=$1 src=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
n=$(grep -cE "^	SKED_SQL_[A-Z0-9_]+," "$src/src/dialect/dialect.h")
ver=$(sed -n 's/^#define SKED_SCHEMA_VERSION \([0-9]*\).*/\1/p' "$src/include/sked.h")
for d in sqlite postgresql mysql sqlserver oracle; do
	"$tool" "$d" >out.$d || fail "$d: exit $?"
	got=$(grep -c "^-- $d [A-Z0-9_]* ([0-9]*)$" out.$d)
	[ "$got" = "$n" ] || fail "$d: $got statements listed, enum sked_sql has $n"
	grep -A1 "^-- $d CLAIM_ANY " out.$d | grep -qi "sked_task" || fail "$d: no CLAIM_ANY text"
	"$tool" sqlite app_ | grep -q "FROM app_task" || fail "the prefix is not applied"
	steps=$("$tool" --schema "$d" | grep -c "^-- $d schema step ")
	[ "$steps" = "$ver" ] || fail "$d: $steps schema steps, SKED_SCHEMA_VERSION is $ver"
	rm -f out.$d
done
for bad in "" "db2" "--schema" "--run" "sqlite app_ extra"; do
	# shellcheck disable=SC2086
	if "$tool" $bad >/dev/null 2>&1; then fail "'sked-sql $bad' exited 0"; fi
done
# --run: only what a dialect runs, per-call tokens filled
"$tool" --run sqlserver >out.run || fail "--run sqlserver: exit $?"
grep -q "^-- sqlserver CLAIM_ANY " out.run || fail "--run: no CLAIM_ANY"
grep -q "^-- sqlserver FINISH_ARRAYS " out.run && fail "--run lists what SQL Server never runs"
grep -q "{ids}" out.run && fail "--run left {ids} unfilled"
rm -f out.run
echo "ok: sked-sql lists $n statements and $ver schema steps per dialect"
