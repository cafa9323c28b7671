# t_catch_all — the catch-all handler of docs/handlers.md: `--handler
# '*=PROGRAM'` and `[handler.*]` in the config file run every kind no
# other handler names (the library's '*'), and a kind's own handler
# still wins. Names that are neither a kind nor '*' are still refused.
# backends: sqlite
. "$(dirname "$0")/lib.sh"
init_db

all=$(handler all <<EOF2
#!/bin/sh
echo "all \$SKED_TASK_KIND" >>"$T/ran"
EOF2
)
own=$(handler own <<EOF2
#!/bin/sh
echo "own \$SKED_TASK_KIND" >>"$T/ran"
EOF2
)
for k in alpha beta gamma; do sk enqueue "$k" >/dev/null; done
expect_rc 0 sk worker --handler "*=$all" --handler "gamma=$own" --until-empty
expect_eq "$(sort "$T/ran" | tr '\n' ' ')" "all alpha all beta own gamma " \
	"handlers run by --handler '*=…' and gamma's own"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done WHERE status = 2")" 3 "succeeded"

# the same from the config file
cp "$T/sked.conf" "$T/catch.conf"
printf '[handler.*]\ncommand = %s\n' "$all" >>"$T/catch.conf"
sk enqueue delta >/dev/null
SKED_CONFIG="$T/catch.conf" expect_rc 0 sk worker --until-empty
grep -qx 'all delta' "$T/ran" || fail "[handler.*] did not run kind delta"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done WHERE status = 2")" 4 "succeeded"

# still refused: a kind that is not a name, and '*' as part of one
expect_rc 64 sk worker --handler "a*=$all" --until-empty
stderr_one_line "$T/err"
grep -q "not a valid task kind" "$T/err" || fail "no reason for '--handler a*='"
cp "$T/sked.conf" "$T/bad.conf"
printf '[handler.**]\ncommand = %s\n' "$all" >>"$T/bad.conf"
SKED_CONFIG="$T/bad.conf" expect_rc 78 sk worker --until-empty
stderr_one_line "$T/err"
