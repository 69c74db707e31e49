# cmake -DIN=header.h -DOUT=out.h -P inline_header.cmake
# Writes OUT: IN with each quoted include (#include "relative/path.h",
# relative to IN's folder) replaced by that file's text.  The installed
# fleetsim.h is sim/api/fleetsim.h with models/fs_plugin_abi.h inlined, so
# that the public API stays one self-contained header (docs/layering.md).
file(READ "${IN}" text)
get_filename_component(dir "${IN}" DIRECTORY)
string(REGEX MATCHALL "#include \"[^\"]+\"" incs "${text}")
foreach(inc IN LISTS incs)
  string(REGEX REPLACE "#include \"([^\"]+)\"" "\\1" rel "${inc}")
  if(NOT EXISTS "${dir}/${rel}")
    message(FATAL_ERROR "${IN}: ${inc}: no such file ${dir}/${rel}")
  endif()
  file(READ "${dir}/${rel}" body)
  get_filename_component(name "${rel}" NAME)
  string(REPLACE "${inc}" "/* ---- ${name}, inlined ---- */\n${body}/* ---- end of ${name} ---- */"
         text "${text}")
endforeach()
file(WRITE "${OUT}.tmp" "${text}")
file(RENAME "${OUT}.tmp" "${OUT}")
