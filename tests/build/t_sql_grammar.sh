#!/bin/sh
# tests/build/t_sql_grammar.sh — every statement the SQL Server and Oracle
# dialects run, and their schema steps, parsed by grammars sked did not
# write (CTest: build/sql-grammar), for the two engines that cannot run
# where sked is built: node-sql-parser's T-SQL grammar for SQL Server,
# and the PL/SQL grammar of antlr/grammars-v4 (as npm's antlr4ts-sql
# ships it) for Oracle, its PL/SQL blocks (the claim, the migration's
# meta table) included. The packages are pinned by package-lock.json and
# installed from npm into $SKED_BUILD/sqlgrammar once
# (tests/browser/install.sh; the package, grammar.mjs and gaps.txt are in
# tests/sqlgrammar/). A statement a grammar rejects fails the test unless
# gaps.txt lists it with why the grammar is wrong, and then what is left
# of it must parse (grammar.mjs). Without node, npm or the registry the
# test skips (exit 77), loudly, and fails in CI.
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
status=0
for pair in sqlserver:transactsql oracle:plsql; do
	d=${pair%%:*} grammar=${pair#*:}
	{ "$tool" --run "$d" && "$tool" --schema "$d"; } >"$dir/$d.sql" ||
		{ echo "FAIL: sked-sql $d" >&2; exit 1; }
	node "$dir/grammar.mjs" "$grammar" "$SKED_SRC/tests/sqlgrammar/gaps.txt" \
		<"$dir/$d.sql" | grep -v '^known gap' || status=1
done
exit $status
