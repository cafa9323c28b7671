#!/bin/sh
# Results keep their type (docs/workflows.md, "Results"): a program's
# result that is valid JSON (a number, an object) is shown by show --json
# and handed to its children (the parent-results file, a pipe: handler's
# "parents") as that JSON value, not as a string of it and not encoded
# twice; other text stays a string; the trailing newline of `echo` is not
# part of a result.
# backends: engines drivers
. "$(dirname "$0")/lib.sh"
init_db

num=$(handler num.sh <<'H'
#!/bin/sh
echo 4 >"$SKED_TASK_RESULT_FILE"
H
)
obj=$(handler obj.sh <<'H'
#!/bin/sh
printf '{"n": [1, 2], "s": "x"}\n' >"$SKED_TASK_RESULT_FILE"
H
)
txt=$(handler txt.sh <<'H'
#!/bin/sh
echo "hello world" >"$SKED_TASK_RESULT_FILE"
H
)
kid=$(handler kid.sh <<'H'
#!/bin/sh
cp "$SKED_TASK_PARENT_RESULTS" "$1/parents.json"
H
)
a=$(sk enqueue num)
b=$(sk enqueue obj)
c=$(sk enqueue txt)
k=$(sk enqueue kid --after "$a,$b,$c")
p=$(sk enqueue pip --after "$a,$b,$c")
cat >"$T/pip.py" <<'PY'
import json, sys
for line in sys.stdin:
    t = json.loads(line)
    if "id" not in t:
        continue
    with open(sys.argv[1], "w") as f:
        json.dump(t.get("parents"), f)
    print(json.dumps({"id": t["id"], "ok": True}), flush=True)
PY
sk worker --until-empty --poll 100ms --handler "num=$num" --handler "obj=$obj" \
	--handler "txt=$txt" --handler "kid=$kid $T" \
	--handler "pip=pipe:python3 $T/pip.py $T/pip.json" >"$T/w.log" 2>&1 ||
	{ cat "$T/w.log" >&2; fail "the worker failed"; }
res() { sk --json show "$1" | json_get "repr(d['result'])"; }
expect_eq "$(res "$a")" "4" "show --json: a number result"
expect_eq "$(res "$b")" "{'n': [1, 2], 's': 'x'}" "show --json: an object result"
expect_eq "$(res "$c")" "'hello world'" "show --json: a text result, without echo's newline"
want="[(4, int), ({'n': [1, 2], 's': 'x'}, dict), ('hello world', str)]"
expect_eq "$(json_get '[(p["result"], type(p["result"])) for p in d]' <"$T/parents.json" | sed "s/<class '\([a-z]*\)'>/\1/g")" \
	"$want" "the parent-results file"
expect_eq "$(json_get '[(p["result"], type(p["result"])) for p in d]' <"$T/pip.json" | sed "s/<class '\([a-z]*\)'>/\1/g")" \
	"$want" "a pipe: handler's parents"
