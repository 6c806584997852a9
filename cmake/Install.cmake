# cmake --install <build> [--prefix P]  (make install PREFIX=P):
#   <P>/bin/ragd                     the server and command line
#   <P>/share/ragd/web/              the browser pages (found relative to the binary: app/server/web_dir.h)
#   <P>/etc/ragd/ragd.jsonc          the default configuration, every key documented
#                                    (packages: -DCMAKE_INSTALL_SYSCONFDIR=/etc)
#   <P>/share/doc/ragd/              README, LICENSE and the user guide (docs/sample/, also a sample corpus)
#   <P>/lib/systemd/system/ragd.service, <P>/lib/sysusers.d/ragd.conf
#                                    the service and its user (packaging/), unless RAGD_INSTALL_SYSTEMD_UNIT=OFF
# DESTDIR=... stages the files for a package.
option(RAGD_INSTALL_SYSTEMD_UNIT "Install the systemd unit (packaging/ragd.service.in)" ON)

install(TARGETS ragd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/web/ DESTINATION ${RAGD_INSTALL_WEB_DIR} PATTERN README.md EXCLUDE)
install(FILES ${CMAKE_SOURCE_DIR}/config/ragd.jsonc DESTINATION ${CMAKE_INSTALL_SYSCONFDIR}/ragd)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/sample/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/guide)

if(RAGD_INSTALL_SYSTEMD_UNIT)
  # The unit names the installed binary and configuration by their final paths,
  # so it is written at install time, when the prefix is known.
  install(CODE "
    set(RAGD_BINARY \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/ragd\")
    set(RAGD_CONFIG_FILE \"${CMAKE_INSTALL_SYSCONFDIR}/ragd/ragd.jsonc\")
    if(NOT IS_ABSOLUTE \"\${RAGD_CONFIG_FILE}\")
      set(RAGD_CONFIG_FILE \"\${CMAKE_INSTALL_PREFIX}/\${RAGD_CONFIG_FILE}\")
    endif()
    set(RAGD_DOC_DIR \"${CMAKE_INSTALL_DOCDIR}\")
    if(NOT IS_ABSOLUTE \"\${RAGD_DOC_DIR}\")
      set(RAGD_DOC_DIR \"\${CMAKE_INSTALL_PREFIX}/\${RAGD_DOC_DIR}\")
    endif()
    configure_file(${CMAKE_SOURCE_DIR}/packaging/ragd.service.in ${CMAKE_BINARY_DIR}/packaging/ragd.service @ONLY)
  ")
  install(FILES ${CMAKE_BINARY_DIR}/packaging/ragd.service DESTINATION lib/systemd/system)
  install(FILES ${CMAKE_SOURCE_DIR}/packaging/ragd.sysusers DESTINATION lib/sysusers.d RENAME ragd.conf)
endif()
