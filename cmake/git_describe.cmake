# Writes `git describe` and the package version into a generated source at every build (script
# mode: cmake -P).
# Inputs: SOURCE_DIR (the repository), INPUT (the template), OUTPUT (the generated file),
# BASE_VERSION (project(VERSION)), VERSION_FILE (optional: the package version alone, which CPack
# reads at package time: packaging/cpack_project_config.cmake).
# configure_file rewrites OUTPUT only when the text changes, so a build with an unchanged
# commit recompiles nothing; a new commit or a dirty tree recompiles one file.
#
# The package version is what `drivelab --version` prints and the .deb carries (a Debian
# upstream version, Debian policy 5.6.12: digits first, then [A-Za-z0-9.+~]):
#   HEAD at tag vX.Y.Z (or X.Y.Z), clean tree   X.Y.Z
#   N commits after that tag                    X.Y.Z+N.g<hash>
#   no such tag                                 BASE_VERSION~N.g<hash>  (N commits in all; "~" sorts
#                                               before BASE_VERSION itself, so the tagged release
#                                               of BASE_VERSION supersedes these snapshots)
#   uncommitted changes                         ... .dirty appended
#   no git (a source tarball)                   BASE_VERSION
function(drivelab_git NAME)  # drivelab_git(OUT args...): git's output, empty on failure
  execute_process(COMMAND git ${ARGN} WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE out OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    set(out "")
  endif()
  set(${NAME} "${out}" PARENT_SCOPE)
endfunction()

drivelab_git(DRIVELAB_GIT_DESCRIBE describe --always --dirty --tags)
if(NOT DRIVELAB_GIT_DESCRIBE)
  set(DRIVELAB_GIT_DESCRIBE "unknown")
endif()

set(DRIVELAB_PACKAGE_VERSION "${BASE_VERSION}")
drivelab_git(tagged describe --tags --long --dirty --match "v[0-9]*" --match "[0-9]*")
drivelab_git(hash rev-parse --short HEAD)
if(tagged MATCHES "^v?([0-9][A-Za-z0-9.+~]*)-([0-9]+)-g([0-9a-f]+)(-dirty)?$")
  set(DRIVELAB_PACKAGE_VERSION "${CMAKE_MATCH_1}")
  if(NOT CMAKE_MATCH_2 EQUAL 0)
    string(APPEND DRIVELAB_PACKAGE_VERSION "+${CMAKE_MATCH_2}.g${CMAKE_MATCH_3}")
  endif()
elseif(hash)
  drivelab_git(count rev-list --count HEAD)
  string(APPEND DRIVELAB_PACKAGE_VERSION "~${count}.g${hash}")
endif()
if(DRIVELAB_GIT_DESCRIBE MATCHES "-dirty$")
  string(APPEND DRIVELAB_PACKAGE_VERSION ".dirty")
endif()

configure_file(${INPUT} ${OUTPUT} @ONLY)
if(VERSION_FILE)
  file(CONFIGURE OUTPUT ${VERSION_FILE} CONTENT "${DRIVELAB_PACKAGE_VERSION}\n")
endif()
