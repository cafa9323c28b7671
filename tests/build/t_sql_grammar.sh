#!/bin/sh
# tests/build/t_sql_grammar.sh — every statement the SQL Server dialect runs,
# and its schema steps, parsed by a grammar sked did not write (CTest:
# build/sql-grammar): node-sql-parser's T-SQL grammar, pinned by
# package-lock.json and installed from npm into $SKED_BUILD/sqlgrammar
# once (tests/browser/install.sh; the package, grammar.mjs and gaps.txt
# are in tests/sqlgrammar/). A statement the grammar rejects fails
# the test unless gaps.txt lists it with why the grammar is wrong, and
# then what is left of it must parse (grammar.mjs). Without node, npm or
# the registry the test skips (exit 77), loudly, and fails in CI.
# Oracle's statements are not read here: no maintained Oracle grammar was
# found for npm or Debian (docs/oracle.md, "What is verified").
set -eu
: "${SKED_SRC:?}" "${SKED_BUILD:?}"
tool=${1:?usage: check.sh SKED_SQL}
skip() {
	echo "SKIP: $*" >&2
	[ "${CI:-}" = true ] && exit 1
	exit 77
}
command -v node >/dev/null || skip "node is not installed"
dir=$SKED_BUILD/sqlgrammar
sh "$SKED_SRC/tests/browser/install.sh" "$dir" "$SKED_SRC/tests/sqlgrammar" ||
	skip "cannot install node-sql-parser with npm"
# from beside its node_modules: ES modules do not read NODE_PATH
cp "$SKED_SRC/tests/sqlgrammar/grammar.mjs" "$dir/grammar.mjs"
{ "$tool" --run sqlserver && "$tool" --schema sqlserver; } >"$dir/sqlserver.sql"
node "$dir/grammar.mjs" transactsql "$SKED_SRC/tests/sqlgrammar/gaps.txt" \
	<"$dir/sqlserver.sql"
