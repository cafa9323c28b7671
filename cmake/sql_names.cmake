# Writes sql_names.h: the names of enum sked_sql's members, in order, read
# from src/dialect/dialect.h (one member per line, tab-indented). For
# tools/sked_sql.c, which checks at compile time that the count matches.
# Run at build time with -DHEADER=… -DOUT=….
file(STRINGS ${HEADER} members REGEX "^\tSKED_SQL_[A-Z0-9_]+,")
set(out "/* Generated from src/dialect/dialect.h by cmake/sql_names.cmake. */\n")
string(APPEND out "static const char *const sked_sql_names[] = {\n")
foreach(m ${members})
  string(REGEX REPLACE "^\tSKED_SQL_([A-Z0-9_]+),.*" "\\1" name "${m}")
  string(APPEND out "\t\"${name}\",\n")
endforeach()
string(APPEND out "};\n")
file(WRITE ${OUT}.tmp "${out}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
