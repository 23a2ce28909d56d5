# `cmake --install BUILD_DIR --prefix PREFIX` and find_package(flashtick) (docs/deploy.md,
# "Installing under a prefix"). Under PREFIX:
#   bin/                         flashtickd, flashtick, flashtick_make_model and, when
#                                benchmarks are built, flashtick_sweep
#   lib/libflashtick_*.a         the libraries (static)
#   include/flashtick/<layer>/   their headers, laid out as in the source tree, and the
#                                headers generated from proto/; consumers include them
#                                as the code does: "client/inference_client.h"
#   share/flashtick/             plot_report.py, which the binaries find relative to
#                                themselves (research/report/plot_runner.h)
#   lib/cmake/flashtick/         flashtickConfig.cmake, its version file and the
#                                exported targets flashtick::common, ::ticks,
#                                ::kernels, ::model, ::trainer, ::config_proto,
#                                ::research and, with
#                                the server, ::proto, ::server, ::client
# Checked by ctest install_consumer_test (tests/install_consumer/).

set(_ft_install_include ${CMAKE_INSTALL_INCLUDEDIR}/flashtick)

# The libraries, exported as flashtick::<name>, the names of the in-tree aliases.
set(_ft_export_libs common ticks kernels model trainer config_proto research)
if(FLASHTICK_WITH_SERVER)
  # flashtick_proto_objs is what flashtick::proto links whole-archive.
  list(APPEND _ft_export_libs proto proto_objs server client)
endif()
set(_ft_export_targets)
foreach(name ${_ft_export_libs})
  set_target_properties(flashtick_${name} PROPERTIES EXPORT_NAME ${name})
  list(APPEND _ft_export_targets flashtick_${name})
endforeach()
install(TARGETS ${_ft_export_targets} EXPORT flashtickTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${_ft_install_include})

# Headers, layer by layer. kernels/cpu/ and kernels/cuda/ are private to kernels/
# (ARCHITECTURE.md) and no installed header includes them; model/tools/ is a program.
set(_ft_header_layers common ticks kernels model trainer research)
if(FLASHTICK_WITH_SERVER)
  list(APPEND _ft_header_layers server client)
endif()
foreach(layer ${_ft_header_layers})
  install(DIRECTORY ${FLASHTICK_ROOT}/${layer}/ DESTINATION ${_ft_install_include}/${layer}
    FILES_MATCHING PATTERN "*.h"
    PATTERN "cpu" EXCLUDE PATTERN "cuda" EXCLUDE PATTERN "tools" EXCLUDE)
endforeach()
# The generated messages (with the server, and stubs): flashtick/v1/ and, with the
# server, inference/ and grpc/health/v1/.
install(DIRECTORY ${CMAKE_BINARY_DIR}/proto/gen/ DESTINATION ${_ft_install_include}
  FILES_MATCHING PATTERN "*.h")

# Executables, and the script the report writer runs.
set(_ft_programs flashtick_make_model)
foreach(program flashtickd flashtick flashtick_sweep)
  if(TARGET ${program})
    list(APPEND _ft_programs ${program})
  endif()
endforeach()
# Installed binaries keep the run path to the libraries they were linked from outside
# the system's folders (the CUDA toolkit's, for one); the build tree's is dropped.
set_target_properties(${_ft_programs} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS ${_ft_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${FLASHTICK_ROOT}/research/report/plot_report.py
  DESTINATION ${CMAKE_INSTALL_DATADIR}/flashtick)

# The package: targets, config (it finds what the targets link) and version.
set(_ft_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/flashtick)
install(EXPORT flashtickTargets NAMESPACE flashtick:: DESTINATION ${_ft_cmake_dir})
include(CMakePackageConfigHelpers)
configure_package_config_file(${FLASHTICK_ROOT}/cmake/flashtickConfig.cmake.in
  ${CMAKE_BINARY_DIR}/flashtickConfig.cmake
  INSTALL_DESTINATION ${_ft_cmake_dir})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/flashtickConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/flashtickConfig.cmake
              ${CMAKE_BINARY_DIR}/flashtickConfigVersion.cmake
        DESTINATION ${_ft_cmake_dir})
