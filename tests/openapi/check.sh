#!/bin/sh
# tests/openapi/check.sh — docs/openapi.yaml is a valid OpenAPI 3 document
# (CTest: docs/openapi). swagger-parser, pinned by package-lock.json, is
# installed from npm into $SKED_BUILD/openapi once; without npm or the
# registry the test skips (exit 77), loudly, and fails in CI.
# tests/integration/t_api.sh checks the API's answers against it too.
set -eu
: "${SKED_SRC:?}" "${SKED_BUILD:?}"
skip() {
	echo "SKIP: $*" >&2
	[ "${CI:-}" = true ] && exit 1
	exit 77
}
command -v node >/dev/null || skip "node is not installed"
dir=$SKED_BUILD/openapi
sh "$SKED_SRC/tests/browser/install.sh" "$dir" "$SKED_SRC/tests/openapi" ||
	skip "cannot install swagger-parser with npm"
# from beside its node_modules: ES modules do not read NODE_PATH
cp "$SKED_SRC/tests/openapi/validate.mjs" "$dir/validate-spec.mjs"
node "$dir/validate-spec.mjs" "$SKED_SRC/docs/openapi.yaml"
