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
