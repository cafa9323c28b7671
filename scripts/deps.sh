#!/bin/sh
# scripts/deps.sh — install the Debian packages sked needs, when missing.
#
#   scripts/deps.sh demo   build and run the showcase (SQLite only)
#   scripts/deps.sh test   everything the test suite needs, database
#                          servers and ODBC drivers included
#
# Runs apt-get only for what is missing, so a second run costs nothing.
set -eu

demo_pkgs="gcc make cmake pkg-config libc6-dev libsqlite3-dev libinih-dev
libjansson-dev tzdata"
test_pkgs="$demo_pkgs libcmocka-dev libpq-dev postgresql postgresql-client
libmariadb-dev mariadb-server mariadb-client unixodbc unixodbc-dev
odbc-postgresql odbc-mariadb libsqliteodbc sqlite3 procps psmisc e2fsprogs
clang-format jq python3 help2man man-db bash-completion dpkg-dev lintian
binutils libmicrohttpd-dev libsystemd-dev systemd prometheus chromium curl
pgbouncer galera-4 rsync clang libcurl4-openssl-dev libssl-dev gdb
nodejs python3-venv python3-pip python3-setuptools python3-wheel python3-mypy
patroni etcd-server etcd-client haproxy python3-psycopg"

case "${1:-demo}" in
demo) want=$demo_pkgs ;;
test) want=$test_pkgs ;;
*) echo "usage: $0 demo|test" >&2; exit 64 ;;
esac
# the browser test's npm (tests/browser): Debian's, unless a nodejs from
# elsewhere brought its own
if [ "${1:-demo}" = test ] && ! command -v npm >/dev/null; then
	want="$want npm"
fi

missing=""
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing Debian packages:$missing" >&2
	echo "deps: run as root, or install them with apt-get" >&2
	exit 69
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# Servers are started by the test scripts in folders of their own; keep
# the packages' own service instances from starting at install time.
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod +x /usr/sbin/policy-rc.d
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
