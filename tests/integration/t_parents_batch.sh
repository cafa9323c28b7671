#!/bin/sh
# Children claimed together each get their own parents' results
# (worker/parents.c): twelve children, claimed in one batch, read in
# groups of eight with the short results, and each child with a parent's
# result past 1024 characters read again alone. Every child must be handed
# exactly its two parents, each with that parent's whole result, short
# (a JSON object) or long (a 3000-character string).
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

par=$(handler par.sh <<'H'
#!/bin/sh
i=$(cat)
if [ $((i % 2)) -eq 0 ]; then
	python3 -c "import sys; print('L%s-' % sys.argv[1] + 'x' * 3000)" "$i" >"$SKED_TASK_RESULT_FILE"
else
	printf '{"i": %s}\n' "$i" >"$SKED_TASK_RESULT_FILE"
fi
H
)
kid=$(handler kid.sh <<'H'
#!/bin/sh
cp "$SKED_TASK_PARENT_RESULTS" "$1/kid-$SKED_TASK_ID.json"
H
)
ps=""
for i in 0 1 2 3 4 5 6 7; do
	ps="$ps $(printf '%s' "$i" | sk enqueue par --payload -)"
done
set -- $ps
echo "$ps" >"$T/parents"
kids=""
for j in 0 1 2 3 4 5 6 7 8 9 10 11; do
	a=$(echo "$ps" | awk -v k=$((j % 8 + 1)) '{print $k}')
	b=$(echo "$ps" | awk -v k=$(((j + 1) % 8 + 1)) '{print $k}')
	kids="$kids $(sk enqueue kid --after "$a,$b"):$a,$b"
done
# the parents first; then one worker with room for every child at once
sk worker --until-empty --poll 100ms --handler "par=$par" >"$T/w1.log" 2>&1 ||
	{ cat "$T/w1.log" >&2; fail "the parents' worker failed"; }
sk worker --until-empty --poll 100ms --concurrency 16 --handler "kid=$kid $T" \
	>"$T/w2.log" 2>&1 || { cat "$T/w2.log" >&2; fail "the children's worker failed"; }
for p in $ps; do
	sk --json show "$p" >"$T/show-$p.json" || fail "show $p"
done
for kv in $kids; do
	k=${kv%%:*}
	want=${kv#*:}
	[ -f "$T/kid-$k.json" ] || fail "child $k did not run"
	got=$(python3 - "$T" "$k" "$want" <<'PY'
import json, sys
t, k, want = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
got = json.load(open("%s/kid-%s.json" % (t, k)))
ids = sorted(str(p["id"]) for p in got)
if ids != sorted(want):
    print("parents %s, want %s" % (ids, sorted(want)))
    sys.exit(0)
for p in got:
    stored = json.load(open("%s/show-%s.json" % (t, p["id"])))["result"]
    if p["result"] != stored or p.get("cut"):
        print("parent %s's result differs: %r" % (p["id"], str(p["result"])[:40]))
        sys.exit(0)
print("ok")
PY
)
	expect_eq "$got" "ok" "child $k's parents"
done
long=$(json_get 'len(d["result"])' <"$T/show-$1.json")
[ "$long" -gt 3000 ] || fail "the long result is $long characters"
