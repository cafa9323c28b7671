#!/bin/sh
# tests/build/t_monitoring.sh — the Prometheus rules and the Grafana
# dashboard under contrib/ (CTest: build/monitoring).
#
# `promtool check rules` accepts contrib/prometheus/sked-rules.yml;
# `promtool test rules` runs tests/monitoring/sked-rules.test.yml, whose
# series make each alert fire (the outage with no live node among them)
# and keep it quiet on healthy ones; every query of
# contrib/grafana/sked-dashboard.json is valid PromQL (checked by promtool
# as a recording rule, Grafana's $__rate_interval read as 5m) and each
# panel has one. That the metrics named exist in a real scrape is
# tests/integration/t_monitoring.sh's part. Skips (77) without promtool.
set -eu
: "${SKED_SRC:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v promtool >/dev/null ||
	{ echo "SKIP: promtool is not installed (Debian package prometheus)" >&2; exit 77; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
promtool check rules "$SKED_SRC/contrib/prometheus/sked-rules.yml" >"$W/check" 2>&1 ||
	{ cat "$W/check" >&2; fail "promtool check rules rejects contrib/prometheus/sked-rules.yml"; }
cat "$W/check"
(cd "$SKED_SRC/tests/monitoring" && promtool test rules sked-rules.test.yml) >"$W/test" 2>&1 ||
	{ cat "$W/test" >&2; fail "promtool test rules: tests/monitoring/sked-rules.test.yml"; }
cat "$W/test"
# every alert of the rules file has a test case
for a in $(sed -n 's/^ *- alert: *//p' "$SKED_SRC/contrib/prometheus/sked-rules.yml"); do
	grep -q "alertname: $a\$" "$SKED_SRC/tests/monitoring/sked-rules.test.yml" ||
		fail "alert $a has no case in tests/monitoring/sked-rules.test.yml"
done

# the Grafana dashboard's queries, as recording rules promtool checks
python3 - "$SKED_SRC/contrib/grafana/sked-dashboard.json" "$W/grafana-rules.yml" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
out = ["groups:", "  - name: grafana", "    rules:"]
n = 0
for p in d["panels"]:
    t = p.get("targets") or []
    if not t:
        sys.exit("panel %r has no query" % p["title"])
    for q in t:
        if q.get("datasource", {}).get("uid") != "${datasource}":
            sys.exit("panel %r: a query not on the ${datasource} variable" % p["title"])
        n += 1
        expr = q["expr"].replace("$__rate_interval", "5m")
        out += ["      - record: grafana:query%d" % n, "        expr: %s" % json.dumps(expr)]
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print("%d panels, %d queries" % (len(d["panels"]), n))
PY
promtool check rules "$W/grafana-rules.yml" >"$W/gcheck" 2>&1 ||
	{ cat "$W/gcheck" >&2; fail "a query of the Grafana dashboard is not valid PromQL"; }
echo "monitoring ok"
