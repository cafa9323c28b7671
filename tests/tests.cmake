# Test registration. Unit tests: every tests/unit/test_*.c is one cmocka
# program, linked with the static library (it may use internal headers).
# Integration tests: every tests/integration/t_*.sh runs once per backend
# (`sked` processes against a real database), named "<backend>/<script>".
# A backend whose server was not given (SKED_TEST_<B>_URL unset) makes the
# test exit 77, which CTest reports as skipped, loudly.
if(CMOCKA_FOUND)
  file(GLOB SKED_UNIT_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/unit/test_*.c)
  foreach(t ${SKED_UNIT_TESTS})
    get_filename_component(name ${t} NAME_WE)
    add_executable(${name} ${t})
    target_compile_options(${name} PRIVATE "SHELL:-iquote ${CMAKE_SOURCE_DIR}/src"
                           "SHELL:-iquote ${CMAKE_BINARY_DIR}")
    target_compile_definitions(${name} PRIVATE _GNU_SOURCE ${SKED_DEFS})
    target_compile_options(${name} PRIVATE ${SKED_WARN} -Wno-missing-prototypes)
    target_link_libraries(${name} PRIVATE sked_static PkgConfig::CMOCKA)
    add_test(NAME unit/${name} COMMAND ${name})
    set_tests_properties(unit/${name} PROPERTIES
      ENVIRONMENT "SKED_TEST_TMP=${CMAKE_BINARY_DIR}/testtmp;SKED_LOG=warn"
      LABELS unit TIMEOUT 120)
  endforeach()
else()
  message(WARNING "cmocka not found: unit tests are not built")
endif()

set(SKED_BACKENDS sqlite sqlite-optimistic pg pg-optimistic mariadb
    mariadb-optimistic odbc-sqlite odbc-pg odbc-mariadb)
file(GLOB SKED_INT_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/integration/t_*.sh)
foreach(t ${SKED_INT_TESTS})
  get_filename_component(name ${t} NAME_WE)
  foreach(b ${SKED_BACKENDS})
    add_test(NAME ${b}/${name} COMMAND bash ${t})
    set_tests_properties(${b}/${name} PROPERTIES
      ENVIRONMENT "SKED=$<TARGET_FILE:sked>;SKED_BACKEND=${b};SKED_BUILD=${CMAKE_BINARY_DIR};SKED_SRC=${CMAKE_SOURCE_DIR}"
      SKIP_RETURN_CODE 77 LABELS "integration;${b}" TIMEOUT 600)
  endforeach()
endforeach()
include(${CMAKE_SOURCE_DIR}/tests/pg_example.cmake)
