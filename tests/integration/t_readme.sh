# t_readme — the README's commands run as written. Every ```sh block of
# README.md but two runs, in order, in a folder of its own (where `build`
# is this build's folder) with `sh -e`: any command that fails fails the
# test. The two left out are the set-up block (apt-get, make demo, make
# test: they install and build) and the block of the Tests section (it
# runs the test suite, this test among it). Then what the quick start
# promises: the email task succeeded with one attempt, whose recorded
# output is the payload (cat), the resize tasks succeeded and the report
# task waits. Then docs/workflows.md's blocks run the same way, after its
# first block has put build/sked on the PATH as `sked`, as it tells a
# reader of a source tree to do: the fan-in report counts 9 words, the
# mended graph ends with its three tasks succeeded.
# backends: sqlite
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in
sqlite) ;;
*) not_here "the README's quick start is on SQLite" ;;
esac
SRC=${SKED_SRC:-$(dirname "$0")/../..}
readme="$SRC/README.md"

# the blocks, one file each, with the heading of the section they are in
awk -v dir="$T" '
	/^## / { section = $0 }
	/^```sh$/ { n++; file = dir "/block" n ".sh"; print section > (dir "/block" n ".section"); inblock = 1; next }
	inblock && /^```$/ { inblock = 0; close(file); next }
	inblock { print > file }' "$readme"
[ -f "$T/block1.sh" ] || fail "no sh block in README.md"
grep -q 'make demo' "$T/block1.sh" || fail "the README's first block is not the set-up block"

mkdir "$T/readme"
ln -s "$(dirname "$SKED")" "$T/readme/build"
ran=0
n=2
while [ -f "$T/block$n.sh" ]; do
	if [ "$(cat "$T/block$n.section")" = "## Tests" ]; then
		n=$((n + 1))
		continue
	fi
	note "README block $n ($(cat "$T/block$n.section"))"
	# as a user's shell would have it: no test config, the default log
	(cd "$T/readme" && env -u SKED_CONFIG -u SKED_LOG -u SKED_DATABASE_URL \
		sh -e "$T/block$n.sh") >"$T/block$n.out" 2>"$T/block$n.err" || {
		cat "$T/block$n.out" "$T/block$n.err" >&2
		fail "README block $n ($(cat "$T/block$n.section")) failed"
	}
	ran=$((ran + 1))
	n=$((n + 1))
done
[ "$ran" -ge 1 ] || fail "no README block ran"

# what the quick start says happened
db="$T/readme/quickstart.db"
[ -f "$db" ] || fail "the quick start made no quickstart.db in its folder"
q() { sqlite3 -batch -noheader "$db" "$1"; }
expect_eq "$(q "SELECT status, attempts FROM sked_task_done WHERE kind = 'email'")" "2|1" \
	"the email task: succeeded, one attempt"
expect_eq "$(q "SELECT COUNT(*) FROM sked_task_done WHERE kind = 'resize' AND status = 2")" 3 \
	"resize tasks succeeded"
expect_eq "$(q "SELECT status FROM sked_task WHERE kind = 'report'")" 0 "the report task waits"
# the attempt that ended the task is on its ended row (schema 5)
case "$(q "SELECT output FROM sked_run WHERE task_id = 1 UNION ALL SELECT output FROM sked_task_done WHERE id = 1")" in
*ada@example.com*) ;;
*) fail "the email task's run did not keep cat's output" ;;
esac
qs=$(grep -lx '## Quick start (SQLite)' "$T"/block*.section | sed 's/section$/out/')
grep -q 'succeeded' "$qs" || fail "show 1 does not show the attempt"

# ---- docs/workflows.md's blocks, run as its first block says ----
# The page calls `sked` as installed; its first block puts a source
# tree's build/sked on the PATH (the README's readers have no other:
# issue 36). Sourced in a folder where `build` is this build's, it must
# make `sked` that program; then every other block runs in an empty
# folder of its own with `sh -e`.
awk -v dir="$T" '
	/^```sh$/ { n++; file = dir "/wf" n ".sh"; inblock = 1; next }
	inblock && /^```$/ { inblock = 0; close(file); next }
	inblock { print > file }' "$SRC/docs/workflows.md"
mkdir "$T/wf"
ln -s "$(dirname "$SKED")" "$T/wf/build"
n=2
while [ -f "$T/wf$n.sh" ]; do
	mkdir "$T/wf/block$n"
	(cd "$T/wf" && set -e && . "$T/wf1.sh" &&
		[ "$(command -v sked)" = "$T/wf/build/sked" ] &&
		cd "block$n" && env -u SKED_CONFIG -u SKED_LOG -u SKED_DATABASE_URL \
		sh -e "$T/wf$n.sh") >"$T/wf$n.out" 2>"$T/wf$n.err" || {
		cat "$T/wf$n.out" "$T/wf$n.err" >&2
		fail "docs/workflows.md block $n failed (its first block: $(head -3 "$T/wf1.sh"))"
	}
	n=$((n + 1))
done
[ "$n" -ge 4 ] || fail "docs/workflows.md has fewer blocks than its two examples"
expect_eq "$(cat "$T/wf/block2/report.txt")" "words: 9" "the fan-in report of docs/workflows.md"
expect_eq "$(sqlite3 -batch -noheader "$T/wf/block3/sked.db" \
	"SELECT COUNT(*) FROM sked_task_done WHERE kind = 'step' AND status = 2")" 3 \
	"the mended graph of docs/workflows.md: all three succeeded"
# the graph in one transaction (issue 37): enqueued with one command,
# it ran parents first: fetch first, the two middle tasks after it, report last
wl="$T/wf/block4/log.txt"
expect_eq "$(head -2 "$wl" | paste -sd, -)" "start fetch,end fetch" \
	"docs/workflows.md's graph: fetch ran first"
expect_eq "$(tail -2 "$wl" | paste -sd, -)" "start report,end report" \
	"docs/workflows.md's graph: report ran last"
expect_eq "$(grep -c . "$wl")" 8 "docs/workflows.md's graph: four tasks, each once"
