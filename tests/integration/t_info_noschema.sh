# t_info_noschema — `sked info` answers before `sked init`: on a database
# without sked's tables it prints the product, its version, the strategy
# sked would pick and why, and "schema    none (run sked init)", exits 0,
# and creates nothing. A schema at an older version is named with the
# advice to run init; other read-only commands still refuse (78).
# backends: engines drivers
. "$(dirname "$0")/lib.sh"

# a database that exists, without sked's tables
[ "$(family)" = sqlite ] && sqlite3 "$T/sked.db" "CREATE TABLE app_users (id INTEGER)"
set +e
sk info >"$T/info.out" 2>"$T/info.err"
rc=$?
set -e
# no driver for this backend: init_db skips (or fails a stale build)
[ $rc = 69 ] && grep -q "no driver" "$T/info.err" && init_db
[ $rc = 0 ] || { cat "$T/info.err" >&2; fail "info without a schema exited $rc"; }
for field in url driver product strategy why; do
	grep -q "^ *$field  " "$T/info.out" || { cat "$T/info.out" >&2; fail "info has no $field line"; }
done
grep -qx 'schema    none (run sked init)' "$T/info.out" || {
	cat "$T/info.out" >&2
	fail "info does not say there is no schema"
}
[ -s "$T/info.err" ] && { cat "$T/info.err" >&2; fail "info wrote to stderr"; }
expect_rc 0 sk --json info
expect_eq "$(json_get 'd["schema_version"], d["schema_expected"] > 0, d["strategy"] != ""' <"$T/out")" \
	"(0, True, True)" "info --json without a schema"
tables() {
	case "$(family)" in
	sqlite) sql "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE '${PREFIX}%'" ;;
	*) sql "SELECT COUNT(*) FROM information_schema.tables WHERE table_name LIKE '${PREFIX}%'" ;;
	esac
}
expect_eq "$(tables)" 0 "tables info created"
expect_rc 78 sk stats
stderr_one_line "$T/err"

init_db
expect_rc 0 sk info
grep -q '^schema    version [0-9]* (this sked expects [0-9]*)$' "$T/out" || {
	cat "$T/out" >&2
	fail "info after init"
}
sql "UPDATE {p}meta SET value = '3' WHERE name = 'schema_version'" >/dev/null
expect_rc 0 sk info
grep -q '^schema    version 3 (this sked expects [0-9]*: run sked init)$' "$T/out" || {
	cat "$T/out" >&2
	fail "info on an older schema"
}
