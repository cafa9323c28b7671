# Test registration. Unit tests: every tests/unit/test_*.c is one cmocka
# program, linked with the static library (it may use internal headers).
# Integration tests: every tests/integration/t_*.sh runs once per backend
# its header names (`sked` processes against a real database), named
# "<backend>/<script>".
# A backend whose server was not given (SKED_TEST_<B>_URL unset) makes the
# test exit 77, which CTest reports as skipped, loudly.
if(CMOCKA_FOUND)
  file(GLOB SKED_UNIT_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/unit/test_*.c)
  # A driver's unit tests are built with the driver, never without it.
  set(SKED_DRIVER_TESTS test_pg:libpq test_mysql:mariadb test_odbc:odbc)
  foreach(t ${SKED_UNIT_TESTS})
    get_filename_component(name ${t} NAME_WE)
    set(needs "")
    foreach(dt ${SKED_DRIVER_TESTS})
      string(REPLACE ":" ";" dt ${dt})
      list(GET dt 0 dtname)
      if(dtname STREQUAL name)
        list(GET dt 1 needs)
      endif()
    endforeach()
    if(needs AND NOT " ${SKED_BUILT_DRIVERS} " MATCHES " ${needs} ")
      continue()
    endif()
    add_executable(${name} ${t})
    target_compile_options(${name} PRIVATE "SHELL:-iquote ${CMAKE_SOURCE_DIR}/src"
                           "SHELL:-iquote ${CMAKE_BINARY_DIR}")
    target_compile_definitions(${name} PRIVATE _GNU_SOURCE ${SKED_DEFS})
    target_compile_options(${name} PRIVATE ${SKED_WARN} -Wno-missing-prototypes)
    target_link_libraries(${name} PRIVATE sked_static PkgConfig::CMOCKA)
    if(name STREQUAL "test_mysql")
      # it speaks to the server beside the driver, to upset its cache
      target_link_libraries(${name} PRIVATE PkgConfig::MARIADB)
    endif()
    add_test(NAME unit/${name} COMMAND ${name})
    set_tests_properties(unit/${name} PROPERTIES
      ENVIRONMENT "SKED_TEST_TMP=${CMAKE_BINARY_DIR}/testtmp;SKED_LOG=warn"
      LABELS unit TIMEOUT 120)
  endforeach()
else()
  message(WARNING "cmocka not found: unit tests are not built")
endif()

# Each test says in its header which backends it runs on ("# backends:
# WORD..."): backend names, or the sets below; without the line, the three
# engines. What a test checks above the database runs on one or two
# backends, the database's own SQL on each engine, the claim on both
# strategies, what passes through a driver's types on the ODBC drivers
# too, and what a session carries through PgBouncer (docs/testing.md,
# "Which backends a test runs on").
set(SKED_BACKENDS sqlite sqlite-optimistic pg pg-optimistic mariadb
    mariadb-optimistic odbc-sqlite odbc-pg odbc-mariadb pgbouncer)
set(SKED_BACKENDS_all ${SKED_BACKENDS})
set(SKED_BACKENDS_strategies sqlite pg pg-optimistic mariadb
    mariadb-optimistic)
set(SKED_BACKENDS_engines sqlite pg mariadb)
set(SKED_BACKENDS_drivers odbc-sqlite odbc-pg odbc-mariadb)
file(GLOB SKED_INT_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/integration/t_*.sh)
foreach(t ${SKED_INT_TESTS})
  get_filename_component(name ${t} NAME_WE)
  # a test's header changed: configure again
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${t})
  file(STRINGS ${t} spec LIMIT_COUNT 1 REGEX "^# backends: ")
  if(spec)
    string(REGEX REPLACE "^# backends: " "" spec "${spec}")
    separate_arguments(spec UNIX_COMMAND "${spec}")
  else()
    set(spec engines)
  endif()
  set(backends "")
  foreach(word ${spec})
    list(FIND SKED_BACKENDS ${word} known)
    if(DEFINED SKED_BACKENDS_${word})
      list(APPEND backends ${SKED_BACKENDS_${word}})
    elseif(known GREATER -1)
      list(APPEND backends ${word})
    else()
      message(FATAL_ERROR "${t}: '# backends:' names '${word}', neither a backend nor a set")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES backends)
  # "# serial: WHY": the test loads the machine so (a fleet of worker
  # processes, a cluster of servers) that beside it other tests measure
  # the machine, not sked: CTest runs it alone
  file(STRINGS ${t} serial LIMIT_COUNT 1 REGEX "^# serial: ")
  # "# cluster: WHAT": the test starts a cluster of servers of its own,
  # which mostly waits (elections, state transfers): it runs beside the
  # other tests, but never beside another cluster (RESOURCE_LOCK; the
  # chaos runs on a standby and on Galera take the same lock below)
  file(STRINGS ${t} cluster LIMIT_COUNT 1 REGEX "^# cluster: ")
  foreach(b ${backends})
    add_test(NAME ${b}/${name} COMMAND bash ${t})
    set_tests_properties(${b}/${name} PROPERTIES
      ENVIRONMENT "SKED=$<TARGET_FILE:sked>;SKED_BACKEND=${b};SKED_BUILD=${CMAKE_BINARY_DIR};SKED_SRC=${CMAKE_SOURCE_DIR};SKED_DRIVERS_OFF=${SKED_DRIVERS_OFF}"
      SKIP_RETURN_CODE 77 LABELS "integration;${b}" TIMEOUT 600)
    if(serial)
      set_tests_properties(${b}/${name} PROPERTIES RUN_SERIAL TRUE)
    endif()
    if(cluster)
      set_property(TEST ${b}/${name} APPEND PROPERTY RESOURCE_LOCK sked_cluster)
    endif()
  endforeach()
endforeach()
# python/<backend>: the Python binding (bindings/python, unittest, the
# standard library only) against the shared library this build made, on
# SQLite and on PostgreSQL (SKED_TEST_PG_URL, else skipped loudly).
foreach(b sqlite pg)
  add_test(NAME python/${b} COMMAND python3
           ${CMAKE_SOURCE_DIR}/bindings/python/tests/test_sked.py)
  set_tests_properties(python/${b} PROPERTIES
    ENVIRONMENT "SKED_LIBRARY=$<TARGET_FILE:sked_shared>;SKED_TEST_BACKEND=${b};SKED_TEST_TMP=${CMAKE_BINARY_DIR}/testtmp;SKED_LOG=warn"
    SKIP_RETURN_CODE 77 LABELS "python;${b}" TIMEOUT 600)
endforeach()
# python-wait/<backend>: waiting from Python (db.wait, submit, result)
foreach(b sqlite pg)
  add_test(NAME python-wait/${b} COMMAND python3
           ${CMAKE_SOURCE_DIR}/bindings/python/tests/test_wait.py)
  set_tests_properties(python-wait/${b} PROPERTIES
    ENVIRONMENT "SKED_LIBRARY=$<TARGET_FILE:sked_shared>;SKED_TEST_BACKEND=${b};SKED_TEST_TMP=${CMAKE_BINARY_DIR}/testtmp;SKED_LOG=warn"
    SKIP_RETURN_CODE 77 LABELS "python;${b}" TIMEOUT 600)
endforeach()
# python-aio/<backend>: sked.aio (the async handle, async def handlers)
foreach(b sqlite pg)
  add_test(NAME python-aio/${b} COMMAND python3
           ${CMAKE_SOURCE_DIR}/bindings/python/tests/test_aio.py)
  set_tests_properties(python-aio/${b} PROPERTIES
    ENVIRONMENT "SKED_LIBRARY=$<TARGET_FILE:sked_shared>;SKED_TEST_BACKEND=${b};SKED_TEST_TMP=${CMAKE_BINARY_DIR}/testtmp;SKED_LOG=warn"
    SKIP_RETURN_CODE 77 LABELS "python;${b}" TIMEOUT 600)
endforeach()
# python-tx/pg: sked.wrap, enqueue inside the application's psycopg
# transaction (PostgreSQL only; python3-psycopg, else skipped loudly)
add_test(NAME python-tx/pg COMMAND python3
         ${CMAKE_SOURCE_DIR}/bindings/python/tests/test_tx.py)
set_tests_properties(python-tx/pg PROPERTIES
  ENVIRONMENT "SKED_LIBRARY=$<TARGET_FILE:sked_shared>;SKED_TEST_BACKEND=pg;SKED_TEST_TMP=${CMAKE_BINARY_DIR}/testtmp;SKED_LOG=warn"
  SKIP_RETURN_CODE 77 LABELS "python;pg" TIMEOUT 300)
# python/docs: docs/python.md's Python blocks run (SQLite, scratch folder)
add_test(NAME python/docs COMMAND python3
         ${CMAKE_SOURCE_DIR}/bindings/python/tests/test_docs.py)
set_tests_properties(python/docs PROPERTIES
  ENVIRONMENT "SKED_LIBRARY=$<TARGET_FILE:sked_shared>;SKED_TEST_TMP=${CMAKE_BINARY_DIR}/testtmp;SKED_LOG=warn"
  LABELS "python;sqlite" TIMEOUT 600)
# python/install: bindings/python installed with pip into a venv (no
# network), used from outside the tree, its hints checked with mypy.
add_test(NAME python/install COMMAND sh
         ${CMAKE_SOURCE_DIR}/bindings/python/tests/test_install.sh)
set_tests_properties(python/install PROPERTIES
  ENVIRONMENT "SKED_LIBRARY=$<TARGET_FILE:sked_shared>;SKED_SRC=${CMAKE_SOURCE_DIR};SKED_TEST_TMP=${CMAKE_BINARY_DIR}/testtmp;SKED_LOG=warn"
  SKIP_RETURN_CODE 77 LABELS "python" TIMEOUT 600)
# chaos/<backend>: tests/chaos/chaos.sh on a server of its own (kill -9 of
# a worker every 2 s, a server restart, a server frozen past the lease;
# pg-failover: the primary dies and the standby is promoted; galera: a
# node dies and later rejoins); CHAOS_SECONDS=300 by hand for the long
# run (docs/testing.md).
foreach(b sqlite pg mariadb pg-failover galera)
  add_test(NAME chaos/${b} COMMAND bash ${CMAKE_SOURCE_DIR}/tests/chaos/chaos.sh)
  set_tests_properties(chaos/${b} PROPERTIES
    ENVIRONMENT "SKED=$<TARGET_FILE:sked>;SKED_BACKEND=${b};SKED_BUILD=${CMAKE_BINARY_DIR};CHAOS_SECONDS=30"
    SKIP_RETURN_CODE 77 LABELS "chaos;${b}" TIMEOUT 400)
  if(b STREQUAL "pg-failover" OR b STREQUAL "galera")
    set_property(TEST chaos/${b} APPEND PROPERTY RESOURCE_LOCK sked_cluster)
  endif()
endforeach()
include(${CMAKE_SOURCE_DIR}/tests/pg_example.cmake)
include(${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz.cmake)

# docs/openapi: docs/openapi.yaml, the JSON API's description, is a valid
# OpenAPI 3 document (swagger-parser from npm; t_api.sh checks the API's
# answers against it).
add_test(NAME docs/openapi COMMAND sh ${CMAKE_SOURCE_DIR}/tests/openapi/check.sh)
set_tests_properties(docs/openapi PROPERTIES
  ENVIRONMENT "SKED_SRC=${CMAKE_SOURCE_DIR};SKED_BUILD=${CMAKE_BINARY_DIR}"
  SKIP_RETURN_CODE 77 LABELS docs TIMEOUT 300)

# build/drivers: every driver whose client library is installed now is in
# this build, unless it was turned off (-DSKED_WITH_…=OFF). A library
# installed after the build was configured fails it, with the fix.
add_test(NAME build/drivers COMMAND sh ${CMAKE_SOURCE_DIR}/tests/build/t_drivers.sh)
set_tests_properties(build/drivers PROPERTIES
  ENVIRONMENT "SKED_BUILT_DRIVERS=${SKED_BUILT_DRIVERS};SKED_DRIVERS_OFF=${SKED_DRIVERS_OFF};SKED_BUILD=${CMAKE_BINARY_DIR}"
  LABELS build TIMEOUT 60)

# build/layers: sked's floors (the folder-to-floor table in
# tests/build/t_layers.py, drawn in docs/design.md): no #include, no call
# and no header's declaration goes up a floor, in src/ and cli/ alike, no
# files call each other around a loop, only db.c calls a driver, the
# program uses only what libsked.so exports, and the Python package's
# modules import one way, no circle; then faults planted in a copy of the
# sources must each be reported. Includes are read from the sources,
# calls from the object files with nm; REQUIRED_FILES says the libraries
# and the program must be built.
add_test(NAME build/layers COMMAND python3 ${CMAKE_SOURCE_DIR}/tests/build/t_layers.py
         --shared $<TARGET_FILE:sked_shared>
         ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}/CMakeFiles/sked_objs.dir
         ${CMAKE_BINARY_DIR}/CMakeFiles/sked.dir)
set_tests_properties(build/layers PROPERTIES
  REQUIRED_FILES "$<TARGET_FILE:sked_static>;$<TARGET_FILE:sked_shared>;$<TARGET_FILE:sked>"
  LABELS build TIMEOUT 300)

# build/test_index: docs/test-index.md lists every test file, from its own
# header comment (tests/build/test_index.py; `make test-index` rewrites it).
add_test(NAME build/test_index COMMAND python3
         ${CMAKE_SOURCE_DIR}/tests/build/test_index.py ${CMAKE_SOURCE_DIR} --check)
set_tests_properties(build/test_index PROPERTIES LABELS build TIMEOUT 60)

# build/templates: every TPL call of the dashboard (cli/**/*.c) names a
# fragment of cli/web/dashboard/templates/ and gives exactly its
# placeholders a value (tests/build/t_templates.py), on every path, not
# only those the page tests take.
add_test(NAME build/templates COMMAND python3
         ${CMAKE_SOURCE_DIR}/tests/build/t_templates.py ${CMAKE_SOURCE_DIR})
set_tests_properties(build/templates PROPERTIES LABELS build TIMEOUT 60)

# build/sql: tools/sked_sql.c, every statement as each dialect renders it.
add_test(NAME build/sql COMMAND sh ${CMAKE_SOURCE_DIR}/tests/build/t_sql.sh
         $<TARGET_FILE:sked-sql> ${CMAKE_SOURCE_DIR}
         WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(build/sql PROPERTIES LABELS build TIMEOUT 60)

# build/sql-grammar: the SQL Server and Oracle dialects' statements and
# schema read by grammars from npm (node-sql-parser's T-SQL, antlr4ts-sql's
# PL/SQL), known grammar gaps listed in tests/sqlgrammar/gaps.txt. The
# PL/SQL grammar is slow: about 25 s of CPU.
add_test(NAME build/sql-grammar COMMAND sh ${CMAKE_SOURCE_DIR}/tests/build/t_sql_grammar.sh
         $<TARGET_FILE:sked-sql>)
set_tests_properties(build/sql-grammar PROPERTIES
  ENVIRONMENT "SKED_SRC=${CMAKE_SOURCE_DIR};SKED_BUILD=${CMAKE_BINARY_DIR}"
  SKIP_RETURN_CODE 77 LABELS build TIMEOUT 900)

# install/*: install into a scratch prefix and build programs against it;
# package/deb: build the Debian package and look inside it.
add_test(NAME install/consumer COMMAND sh ${CMAKE_SOURCE_DIR}/tests/build/t_install.sh)
set_tests_properties(install/consumer PROPERTIES
  ENVIRONMENT "SKED_BUILD=${CMAKE_BINARY_DIR};SKED_SRC=${CMAKE_SOURCE_DIR};SKED_BUILT_DRIVERS=${SKED_BUILT_DRIVERS}"
  LABELS build TIMEOUT 600 RUN_SERIAL ON)
add_test(NAME package/deb COMMAND sh ${CMAKE_SOURCE_DIR}/tests/build/t_deb.sh)
set_tests_properties(package/deb PROPERTIES
  ENVIRONMENT "SKED_BUILD=${CMAKE_BINARY_DIR};SKED_SRC=${CMAKE_SOURCE_DIR}"
  SKIP_RETURN_CODE 77 LABELS build TIMEOUT 600 RUN_SERIAL ON)
add_test(NAME build/completion COMMAND bash ${CMAKE_SOURCE_DIR}/tests/build/t_completion.sh)
# about 25 s alone; 60 s ran out beside three integration tests
set_tests_properties(build/completion PROPERTIES
  ENVIRONMENT "SKED=$<TARGET_FILE:sked>;SKED_SRC=${CMAKE_SOURCE_DIR}"
  LABELS build TIMEOUT 240)
# build/man: the man page help2man wrote, checked for "???" and for
# every command and flag of the command table
add_test(NAME build/man COMMAND sh ${CMAKE_SOURCE_DIR}/tests/build/t_man.sh)
set_tests_properties(build/man PROPERTIES
  ENVIRONMENT "SKED=$<TARGET_FILE:sked>;SKED_BUILD=${CMAKE_BINARY_DIR}"
  SKIP_RETURN_CODE 77 LABELS build TIMEOUT 60)
# build/monitoring: promtool checks and tests the alert rules, and the
# Grafana dashboard's queries (contrib/); t_monitoring checks them
# against real scrapes
add_test(NAME build/monitoring COMMAND sh ${CMAKE_SOURCE_DIR}/tests/build/t_monitoring.sh)
set_tests_properties(build/monitoring PROPERTIES
  ENVIRONMENT "SKED_SRC=${CMAKE_SOURCE_DIR}"
  SKIP_RETURN_CODE 77 LABELS build TIMEOUT 60)
add_test(NAME build/docs COMMAND sh ${CMAKE_SOURCE_DIR}/tests/build/t_docs.sh)
set_tests_properties(build/docs PROPERTIES
  ENVIRONMENT "SKED=$<TARGET_FILE:sked>;SKED_SRC=${CMAKE_SOURCE_DIR}"
  LABELS build TIMEOUT 60)
# The fleet and Patroni tests (t_fleet: 100 worker processes on a server
# of its own; t_patroni: three Patroni-run nodes, etcd, HAProxy, 8
# workers) each load the machine alone: one at a time, beside the rest.
foreach(b pg pgbouncer mariadb)
  set_tests_properties(${b}/t_fleet PROPERTIES RESOURCE_LOCK sked_fleet TIMEOUT 900)
endforeach()
set_property(TEST pg/t_patroni APPEND PROPERTY RESOURCE_LOCK sked_fleet)
# t_patroni runs in 60-150 s; a stuck failure path (one CI preview hung
# to its bound after a FAIL) should not cost a quarter of an hour
set_tests_properties(pg/t_patroni PROPERTIES TIMEOUT 420)
