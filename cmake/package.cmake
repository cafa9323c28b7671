# cmake/package.cmake — what `cmake --install` and `make deb` add beside the
# program, the libraries and the header: the CMake package (sked::sked,
# sked::sked_static), sked.pc written at install time for the prefix
# actually installed into, the man page made from `sked --help` by
# help2man, bash completion, the docs, the systemd units, the sysusers.d
# file and the config file. The Debian packages are made from this install
# by scripts/mkdeb.sh (make deb, docs/packaging.md). Included from
# CMakeLists.txt.

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

# --- systemd: the hardened unit, its template form, the user, the config ---
# The units name /usr/bin/sked and /etc/sked/…; they are installed with
# those replaced by the folders of the prefix actually installed into
# (known only at install time, as for sked.pc): BINDIR under the prefix,
# and SYSCONFDIR, which is /etc for the prefix /usr (GNUInstallDirs'
# rule) and PREFIX/etc otherwise. systemd, systemd-sysusers and
# systemd-tmpfiles read PREFIX/lib/… for /usr and /usr/local alike; the
# Debian package moves the units to /lib/systemd/system (bookworm's
# place). The config file is installed only where none exists yet: an
# install never overwrites the operator's settings.
set(SKED_UNITDIR lib/systemd/system CACHE STRING
  "where the systemd units go, relative to the install prefix")
set(SKED_SYSUSERSDIR lib/sysusers.d CACHE STRING
  "where the sysusers.d file goes, relative to the install prefix")
install(CODE "
  set(_p \"\${CMAKE_INSTALL_PREFIX}\")
  if(_p STREQUAL \"/usr\")
    set(_etc /etc)
  else()
    set(_etc \"\${_p}/etc\")
  endif()
  foreach(_u sked-worker.service sked@.service sked-dashboard.service)
    file(READ \"${CMAKE_SOURCE_DIR}/examples/systemd/\${_u}\" _t)
    string(REPLACE \"/usr/bin/sked\" \"\${_p}/${CMAKE_INSTALL_BINDIR}/sked\" _t \"\${_t}\")
    string(REPLACE \"/etc/sked/\" \"\${_etc}/sked/\" _t \"\${_t}\")
    file(WRITE \"${CMAKE_BINARY_DIR}/unit-install/\${_u}\" \"\${_t}\")
    file(INSTALL DESTINATION \"\${_p}/${SKED_UNITDIR}\" TYPE FILE
         PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
         FILES \"${CMAKE_BINARY_DIR}/unit-install/\${_u}\")
  endforeach()
  if(NOT EXISTS \"\$ENV{DESTDIR}\${_etc}/sked/sked.conf\")
    file(INSTALL DESTINATION \"\${_etc}/sked\" TYPE FILE
         PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
         FILES \"${CMAKE_SOURCE_DIR}/examples/systemd/sked.conf\")
  endif()")
install(FILES examples/systemd/sked.sysusers.conf
  DESTINATION ${SKED_SYSUSERSDIR} RENAME sked.conf)

# --- docs and examples ---
file(GLOB SKED_DOCS ${CMAKE_SOURCE_DIR}/docs/*.md ${CMAKE_SOURCE_DIR}/docs/*.yaml)
install(FILES README.md ${SKED_DOCS} DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES examples/systemd/sked-worker.service examples/systemd/sked@.service
  examples/systemd/sked-dashboard.service
  examples/systemd/sked.conf examples/systemd/sked.sysusers.conf
  contrib/sked.ini examples/pg_enqueue_tx.c
  contrib/prometheus/sked-rules.yml contrib/grafana/sked-dashboard.json
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
