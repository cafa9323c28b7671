#!/bin/sh
# tests/build/t_drivers.sh — the build has every driver whose client
# library is installed (CTest: build/drivers).
#
# A library installed after the build was configured (`make demo` before
# `make test`) would leave its driver out, and every test of that backend
# would skip instead of running. This fails instead, naming the fix. A
# driver turned off on purpose (-DSKED_WITH_ODBC=OFF) is not asked for.
# SKED_BUILT_DRIVERS and SKED_DRIVERS_OFF come from CMake.
set -eu
: "${SKED_BUILT_DRIVERS:?}"
status=0
for pair in libpq:libpq mariadb:libmariadb odbc:odbc; do
	drv=${pair%%:*}
	mod=${pair#*:}
	case " ${SKED_DRIVERS_OFF:-} " in *" $mod "*) continue ;; esac
	case " $SKED_BUILT_DRIVERS " in *" $drv "*) continue ;; esac
	if pkg-config --exists "$mod"; then
		echo "FAIL: $mod is installed but this build has no $drv driver" \
			"(built: $SKED_BUILT_DRIVERS): configure again" \
			"(cmake -S . -B ${SKED_BUILD:-build}, or make build)" >&2
		status=1
	fi
done
[ $status = 0 ] && echo "drivers built: $SKED_BUILT_DRIVERS"
exit $status
