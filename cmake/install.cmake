# `cmake --install build --prefix P` installs tensorgraph like a library
# (included from the top-level CMakeLists.txt):
#   P/include/tg/*.h                      the public headers
#   P/lib/libtg.so*, P/lib/libtg.a        shared and static libraries
#   P/bin/tg                              the command-line tool
#   P/lib/pkgconfig/tensorgraph.pc        pkg-config --cflags --libs tensorgraph
#   P/lib/cmake/tensorgraph/              find_package(tensorgraph): the
#                                         imported targets tensorgraph::tg
#                                         (shared) and tensorgraph::tg_static
# Both descriptions are relocatable: they find the prefix from where they
# are installed, so P is free at install time. tests/install checks them.
include(CMakePackageConfigHelpers)

install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/tg
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(TARGETS tg_shared tg_static EXPORT tensorgraphTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tg RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(TG_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tensorgraph)
install(EXPORT tensorgraphTargets NAMESPACE tensorgraph:: DESTINATION ${TG_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/tensorgraphConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/tensorgraphConfig.cmake
                              INSTALL_DESTINATION ${TG_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/tensorgraphConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/tensorgraphConfig.cmake
              ${CMAKE_BINARY_DIR}/tensorgraphConfigVersion.cmake
        DESTINATION ${TG_CMAKE_DIR})

# pkg-config: the prefix relative to the .pc file; what a static link needs
# besides libtg.a in Libs.private
file(RELATIVE_PATH TG_PC_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" TG_PC_PREFIX "${TG_PC_PREFIX}")
set(TG_PC_LIBS_PRIVATE "")
foreach(dep ${TG_LINK_LIBS})
  if(dep STREQUAL "Threads::Threads")
    string(APPEND TG_PC_LIBS_PRIVATE " -pthread")
  elseif(IS_ABSOLUTE "${dep}")
    string(APPEND TG_PC_LIBS_PRIVATE " ${dep}")
  else()
    string(APPEND TG_PC_LIBS_PRIVATE " -l${dep}")
  endif()
endforeach()
configure_file(${CMAKE_SOURCE_DIR}/cmake/tensorgraph.pc.in
               ${CMAKE_BINARY_DIR}/tensorgraph.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/tensorgraph.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
