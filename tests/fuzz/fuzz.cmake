# Fuzz targets. Each runs over its seed corpus in every build (a plain
# program, test "fuzz/<name>"); with -DSKED_FUZZ=ON and clang the same
# source is also built for libFuzzer as <name>_lf (`make fuzz`).
set(SKED_FUZZ_LIBS sked_static)
if(" ${SKED_BUILT_DRIVERS} " MATCHES " libpq ")
  list(APPEND SKED_FUZZ_LIBS PkgConfig::LIBPQ)
endif()

foreach(name fuzz_url_redact)
  set(src ${CMAKE_SOURCE_DIR}/tests/fuzz/${name}.c)
  add_executable(${name} ${src})
  target_compile_options(${name} PRIVATE "SHELL:-iquote ${CMAKE_SOURCE_DIR}/src"
                         ${SKED_WARN} -Wno-missing-prototypes)
  target_compile_definitions(${name} PRIVATE _GNU_SOURCE ${SKED_DEFS})
  target_link_libraries(${name} PRIVATE ${SKED_FUZZ_LIBS})
  add_test(NAME fuzz/${name}
           COMMAND ${name} ${CMAKE_SOURCE_DIR}/tests/fuzz/corpus/url)
  set_tests_properties(fuzz/${name} PROPERTIES LABELS "unit;fuzz" TIMEOUT 60)
  if(SKED_FUZZ AND CMAKE_C_COMPILER_ID MATCHES "Clang")
    add_executable(${name}_lf ${src} ${CMAKE_SOURCE_DIR}/src/util/url.c)
    target_compile_options(${name}_lf PRIVATE "SHELL:-iquote ${CMAKE_SOURCE_DIR}/src"
                           -fsanitize=fuzzer,address,undefined -g)
    target_compile_definitions(${name}_lf PRIVATE _GNU_SOURCE SKED_LIBFUZZER ${SKED_DEFS})
    target_include_directories(${name}_lf PRIVATE ${CMAKE_SOURCE_DIR}/include)
    target_link_options(${name}_lf PRIVATE -fsanitize=fuzzer,address,undefined)
    if(" ${SKED_BUILT_DRIVERS} " MATCHES " libpq ")
      target_link_libraries(${name}_lf PRIVATE PkgConfig::LIBPQ)
    endif()
  endif()
endforeach()

# The parsers of outside input beside the URL: cron expressions, TZif
# bytes, durations and times, the config file, the pipe: protocol, what
# the HTTP server reads from a request, the dashboard's templates; and
# the SQL splitter, which reads sked's own multi-statement texts; the
# wake-up payload a worker reads from every notification; the workflow
# file of enqueue --graph and POST /api/graphs.
# name:sources compiled with the fuzzer's instrumentation ("-": none
# beside the target, which may include the file it fuzzes; the rest comes
# from sked_static).
set(SKED_FUZZ_PARSERS
  "fuzz_cron:src/time/cron.c,src/time/tz.c,src/util/timefmt.c"
  "fuzz_tzif:src/time/tz.c,src/time/cron.c,src/util/timefmt.c"
  "fuzz_dur_time:src/util/dur.c,src/util/timefmt.c"
  "fuzz_config:cli/base/config.c,cli/base/values.c"
  "fuzz_pipe:-"
  "fuzz_outcome:src/util/text.c"
  "fuzz_http:cli/http/http.c"
  "fuzz_tpl:cli/web/dashboard/dashboard_tpl.c,cli/http/http.c"
  "fuzz_sqlsplit:src/util/sqlsplit.c"
  "fuzz_wake:src/util/wake.c,src/util/ident.c"
  "fuzz_graph:cli/view/graph_json.c,cli/base/values.c")
foreach(entry ${SKED_FUZZ_PARSERS})
  string(REPLACE ":" ";" entry ${entry})
  list(GET entry 0 name)
  list(GET entry 1 srcs)
  string(REPLACE "," ";" srcs ${srcs})
  list(REMOVE_ITEM srcs "-")
  string(REPLACE "fuzz_" "" corpus ${name})
  set(src ${CMAKE_SOURCE_DIR}/tests/fuzz/${name}.c)
  set(libs sked_static)
  if(name STREQUAL "fuzz_config")
    list(APPEND libs PkgConfig::INIH)
  elseif(name STREQUAL "fuzz_pipe" OR name STREQUAL "fuzz_graph")
    list(APPEND libs PkgConfig::JANSSON)
  endif()
  # the program's own files (cli/) are in no library: compiled in
  set(plainsrc ${src})
  foreach(s ${srcs})
    if(s MATCHES "^cli/")
      list(APPEND plainsrc ${CMAKE_SOURCE_DIR}/${s})
    endif()
  endforeach()
  # fuzz_tpl: the templates sked embeds too (all must parse), and each
  # of them replayed as an input
  set(extra_corpus "")
  if(name STREQUAL "fuzz_tpl")
    list(APPEND plainsrc ${SKED_TEMPLATES_C})
    set(extra_corpus ${CMAKE_SOURCE_DIR}/cli/web/dashboard/templates)
  endif()
  add_executable(${name} ${plainsrc})
  target_compile_options(${name} PRIVATE "SHELL:-iquote ${CMAKE_SOURCE_DIR}/src"
                         "SHELL:-iquote ${CMAKE_SOURCE_DIR}/cli"
                         "SHELL:-iquote ${CMAKE_BINARY_DIR}"
                         ${SKED_WARN} -Wno-missing-prototypes)
  target_compile_definitions(${name} PRIVATE _GNU_SOURCE ${SKED_DEFS})
  target_link_libraries(${name} PRIVATE ${libs})
  add_test(NAME fuzz/${name}
           COMMAND ${name} ${CMAKE_SOURCE_DIR}/tests/fuzz/corpus/${corpus} ${extra_corpus})
  set_tests_properties(fuzz/${name} PROPERTIES LABELS "unit;fuzz" TIMEOUT 60)
  if(SKED_FUZZ AND CMAKE_C_COMPILER_ID MATCHES "Clang")
    set(lfsrc ${src})
    foreach(s ${srcs})
      list(APPEND lfsrc ${CMAKE_SOURCE_DIR}/${s})
    endforeach()
    if(name STREQUAL "fuzz_tpl")
      list(APPEND lfsrc ${SKED_TEMPLATES_C})
    endif()
    add_executable(${name}_lf ${lfsrc})
    target_compile_options(${name}_lf PRIVATE "SHELL:-iquote ${CMAKE_SOURCE_DIR}/src"
                           "SHELL:-iquote ${CMAKE_SOURCE_DIR}/cli"
                           "SHELL:-iquote ${CMAKE_BINARY_DIR}"
                           -fsanitize=fuzzer,address,undefined -g)
    target_compile_definitions(${name}_lf PRIVATE _GNU_SOURCE SKED_LIBFUZZER ${SKED_DEFS})
    target_include_directories(${name}_lf PRIVATE ${CMAKE_SOURCE_DIR}/include)
    target_link_options(${name}_lf PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(${name}_lf PRIVATE ${libs})
  endif()
endforeach()
