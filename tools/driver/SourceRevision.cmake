# Run at every build (target tgc-source-revision): writes OUTPUT with
# `git describe --always --dirty` of SOURCE_DIR ("unknown" outside a git
# checkout), touching it only when the revision changed, so a commit after
# configuring is what the next build's manifests record.
set(revision "unknown")
if(GIT_EXECUTABLE)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty
                  WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE described OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE status ERROR_QUIET)
  if(status EQUAL 0 AND described)
    set(revision "${described}")
  endif()
endif()
file(CONFIGURE OUTPUT ${OUTPUT}
     CONTENT "// Generated at build time by tools/driver/SourceRevision.cmake.\n#define TGC_SOURCE_REVISION \"${revision}\"\n"
     @ONLY)
