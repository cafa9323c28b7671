# cmake/package.cmake — what `cmake --install` and `make deb` add beside the
# program, the libraries and the header: the CMake package (sked::sked,
# sked::sked_static), sked.pc written at install time for the prefix
# actually installed into, the man page made from `sked --help` by
# help2man, bash completion, the docs and the example systemd unit, and
# the Debian package (CPack). Included from CMakeLists.txt.

include(CMakePackageConfigHelpers)
set(SKED_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/sked)

# --- the CMake package: find_package(sked CONFIG) ---
# The static library's link interface names the pkg-config targets of
# sqlite3 and of every driver built; skedConfig.cmake recreates them.
set(SKED_CMAKE_DEPS "SQLITE3:sqlite3" "JANSSON:jansson" ${SKED_CMAKE_DRIVERS})
install(EXPORT skedTargets NAMESPACE sked:: DESTINATION ${SKED_CMAKEDIR})
configure_package_config_file(cmake/skedConfig.cmake.in
  ${CMAKE_BINARY_DIR}/skedConfig.cmake INSTALL_DESTINATION ${SKED_CMAKEDIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/skedConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/skedConfig.cmake
  ${CMAKE_BINARY_DIR}/skedConfigVersion.cmake DESTINATION ${SKED_CMAKEDIR})

# --- pkg-config: the prefix is the one installed into, known only then ---
set(SKED_PC_PREFIX "@SKED_PC_PREFIX@") # kept for the install step
configure_file(sked.pc.in ${CMAKE_BINARY_DIR}/sked.pc.in @ONLY)
install(CODE "
  set(SKED_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${CMAKE_BINARY_DIR}/sked.pc.in\"
                 \"${CMAKE_BINARY_DIR}/pc-install/sked.pc\" @ONLY)
  file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\"
       TYPE FILE FILES \"${CMAKE_BINARY_DIR}/pc-install/sked.pc\")")

# --- the man page, from the same text as --help ---
find_program(HELP2MAN help2man)
if(HELP2MAN)
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/sked.1.gz
    COMMAND sh ${CMAKE_SOURCE_DIR}/scripts/manpage.sh $<TARGET_FILE:sked>
            ${HELP2MAN} ${CMAKE_BINARY_DIR}/sked.1
    DEPENDS sked ${CMAKE_SOURCE_DIR}/scripts/manpage.sh
    COMMENT "Writing the man page from sked --help")
  add_custom_target(sked_man ALL DEPENDS ${CMAKE_BINARY_DIR}/sked.1.gz)
  install(FILES ${CMAKE_BINARY_DIR}/sked.1.gz
    DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "help2man not found: no man page (scripts/deps.sh test installs it)")
endif()

# --- bash completion, where bash-completion looks for it: DATADIR's
# bash-completion/completions, searched for every folder of XDG_DATA_DIRS
# (by default /usr/local/share and /usr/share) ---
install(FILES contrib/sked.bash
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
  RENAME sked)

# --- docs and examples ---
file(GLOB SKED_DOCS ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES README.md ${SKED_DOCS} DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES contrib/sked-worker.service contrib/sked.ini
  examples/pg_enqueue_tx.c DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# --- the Debian package: make deb (cpack -G DEB in the build folder) ---
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME sked)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "sked developers <sked@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "distributed task scheduler on the database you already run")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON) # and ldconfig on install
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "sked runs tasks, cron schedules and cluster locks on PostgreSQL, MariaDB,\n SQLite or ODBC, with no coordinator of its own. This package holds the\n sked program and daemon, libsked (shared and static), its header, its\n CMake and pkg-config files, the man page and bash completion.")
include(CPack)
