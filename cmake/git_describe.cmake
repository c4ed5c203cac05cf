# Writes `git describe` into a generated source at every build (script mode: cmake -P).
# Inputs: SOURCE_DIR (the repository), INPUT (the template), OUTPUT (the generated file).
# configure_file rewrites OUTPUT only when the text changes, so a build with an unchanged
# commit recompiles nothing; a new commit or a dirty tree recompiles one file.
execute_process(COMMAND git describe --always --dirty --tags
                WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE DRIVELAB_GIT_DESCRIBE OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET)
if(NOT DRIVELAB_GIT_DESCRIBE)
  set(DRIVELAB_GIT_DESCRIBE "unknown")
endif()
configure_file(${INPUT} ${OUTPUT} @ONLY)
