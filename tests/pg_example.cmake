# The transactional-enqueue example (examples/pg_enqueue_tx.c), built and
# run as a test where the PostgreSQL driver is built. It reads
# SKED_TEST_PG_URL and exits 77 (skipped) when that is unset; under
# CI=true a missing server is a failure instead.
if(LIBPQ_FOUND AND EXISTS ${CMAKE_SOURCE_DIR}/src/db/driver/libpq.c)
  add_executable(pg_enqueue_tx ${CMAKE_SOURCE_DIR}/examples/pg_enqueue_tx.c)
  target_compile_definitions(pg_enqueue_tx PRIVATE _GNU_SOURCE)
  target_compile_options(pg_enqueue_tx PRIVATE ${SKED_WARN})
  target_link_libraries(pg_enqueue_tx PRIVATE sked_static PkgConfig::LIBPQ)
  add_test(NAME pg/example_enqueue_tx COMMAND pg_enqueue_tx)
  set_tests_properties(pg/example_enqueue_tx PROPERTIES
    SKIP_RETURN_CODE 77 LABELS "example;pg" TIMEOUT 60)
endif()
