# The package's generated files (script mode, from packaging/CMakeLists.txt), from the built binary:
#   -DWHAT=completion  OUTPUT: `DRIVELAB --bash-completion`
#   -DWHAT=man         OUTPUT (gzip -9n): help2man on DRIVELAB's --help and --version, with INCLUDE
#   -DWHAT=changelog   OUTPUT (gzip -9n): a Debian changelog with one entry, this package version
#                      (VERSION_FILE), the commit it is built from and its date, by MAINTAINER
# Every step that fails stops the build with its output.
function(run)  # run(COMMAND... [OUTPUT_FILE F]): execute_process that fails the build on error
  execute_process(${ARGN} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " what)
    message(FATAL_ERROR "failed (${rc}): ${what}\n${err}")
  endif()
endfunction()
function(gzip_to FILE)  # gzip -9n FILE.tmp into FILE (-n: no name or time stamp; reproducible)
  run(COMMAND gzip -9nc ${FILE}.tmp OUTPUT_FILE ${FILE})
  file(REMOVE ${FILE}.tmp)
endfunction()

if(WHAT STREQUAL "completion")
  run(COMMAND ${DRIVELAB} --bash-completion OUTPUT_FILE ${OUTPUT})
elseif(WHAT STREQUAL "man")
  # The page's date is the commit's (SOURCE_DATE_EPOCH, which help2man honours), so the same
  # commit gives the same page; in UTF-8, so that help2man keeps the help's non-ASCII characters
  # (the em dash of its first line).
  execute_process(COMMAND git log -1 --format=%ct WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE epoch OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT epoch MATCHES "^[0-9]+$")
    string(TIMESTAMP epoch "%s" UTC)
  endif()
  run(COMMAND ${CMAKE_COMMAND} -E env SOURCE_DATE_EPOCH=${epoch} ${HELP2MAN} --locale=C.UTF-8 --no-info --section=1 --name=${NAME} --include=${INCLUDE} --output=${OUTPUT}.tmp ${DRIVELAB})
  gzip_to(${OUTPUT})
elseif(WHAT STREQUAL "changelog")
  file(STRINGS ${VERSION_FILE} version LIMIT_COUNT 1)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C
                    git log -1 "--date=format:%a, %d %b %Y %H:%M:%S %z" --format=%h%n%cd
                  WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND commit MATCHES "^([0-9a-f]+)\n(.+)$")
    set(what "Built from git commit ${CMAKE_MATCH_1}; the changes are in the project's git history.")
    set(date "${CMAKE_MATCH_2}")
  else()  # a source tree without git
    set(what "Built from a source tree without git history.")
    string(TIMESTAMP date "%a, %d %b %Y %H:%M:%S +0000" UTC)
  endif()
  file(WRITE ${OUTPUT}.tmp "drivelab (${version}) unstable; urgency=medium

  * ${what}

 -- ${MAINTAINER}  ${date}
")
  gzip_to(${OUTPUT})
else()
  message(FATAL_ERROR "generate.cmake: WHAT must be completion, man or changelog, not '${WHAT}'")
endif()
