# Checks the includes of one folder library against the layering
# (docs/layering.md): run by the build before the library compiles
# (CMakeLists.txt, fs_layer).  A quoted #include must resolve, relative to
# the including file, to a file of the same folder, of a folder the library
# links (ALLOWED), or be one of the EXCEPTIONS ("from-file>to-file" paths
# relative to the source root, each one a wrong-way edge docs/layering.md
# lists).  Anything else stops the build, naming the file and the line.
#
#   cmake -DROOT=<source root> -DFOLDERS=<dirs of this library> -DALLOWED=<dirs>
#         -DEXCEPTIONS=<list> -DFILES=<files> -DSTAMP=<file> -P layering.cmake
cmake_minimum_required(VERSION 3.20)
# Every folder of the graph, the deepest first (sim/cli before sim).
set(all_folders sim/cli sim/api sim traces models scenarios analysis)

function(folder_of path out)
  file(RELATIVE_PATH rel "${ROOT}" "${path}")
  set(${out} "" PARENT_SCOPE)
  foreach(f IN LISTS all_folders)
    if(rel MATCHES "^${f}/[^/]+$")
      set(${out} "${f}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

set(bad "")
foreach(file IN LISTS FILES)
  get_filename_component(dir "${file}" DIRECTORY)
  file(RELATIVE_PATH from "${ROOT}" "${file}")
  folder_of("${file}" from_folder)
  file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*$" "\\1" inc "${line}")
    get_filename_component(target "${dir}/${inc}" ABSOLUTE)
    if(NOT EXISTS "${target}")
      # generated files and system headers spelt with quotes: not ours
      continue()
    endif()
    folder_of("${target}" to_folder)
    if(to_folder STREQUAL "" OR to_folder STREQUAL from_folder)
      continue()
    endif()
    file(RELATIVE_PATH to "${ROOT}" "${target}")
    if(to_folder IN_LIST ALLOWED OR to_folder IN_LIST FOLDERS OR "${from}>${to}" IN_LIST EXCEPTIONS)
      continue()
    endif()
    string(APPEND bad "${from}: #include \"${inc}\": ${from_folder}/ may not include ${to_folder}/ (it links: ${FOLDERS};${ALLOWED}; docs/layering.md)\n")
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "wrong-way includes:\n${bad}")
endif()
file(WRITE "${STAMP}" "ok\n")
