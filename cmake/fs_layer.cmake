# The floors of the build and the checks that hold them (docs/layering.md).
# Included by CMakeLists.txt, and by the small projects of tests/layering/,
# which check that the checks stop a build.
#
# fs_layer(NAME DIRS dir... [SOURCES extra...] [LINKS lib...])
#   The OBJECT library fleetsim_NAME of the .c files of DIRS (paths relative
#   to the source root), linking (PUBLIC) fleetsim_common when it exists and
#   the fleetsim_* libraries and others in LINKS.  The folders it may include
#   are its own and those of every fleetsim_* library it links, directly or
#   not.  Before it compiles, cmake/layering.cmake checks the quoted includes
#   of its .c and .h files: direction, and no include circle inside a folder
#   (FS_LAYER_EXCEPTIONS, FS_INCLUDE_CYCLE_EXCEPTIONS: the known exceptions).
#   Appends fleetsim_NAME to FS_LAYER_TARGETS in the caller's scope.
#
# fs_layer_symbols(TARGET name FLOORS lib... [PUBLIC_MAPS map...]
#                  [LISTS file...] [KEEP symbol...])
#   The custom target NAME, built after the OBJECT libraries FLOORS (bottom
#   up), that runs cmake/symbols.cmake on their objects: no floor's object
#   uses a symbol a higher floor defines, and no floor exports a symbol
#   nothing else uses (public symbols, KEEP and the LISTS aside).  Make the
#   targets that must not be built before it (the core archive) depend on it.
set(FS_LAYER_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

function(fs_layer name)
  cmake_parse_arguments(L "" "" "DIRS;SOURCES;LINKS" ${ARGN})
  set(srcs)
  set(checked)
  set(allowed)
  foreach(d IN LISTS L_DIRS)
    file(GLOB c CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${d}/*.c)
    file(GLOB h CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${d}/*.h)
    list(APPEND srcs ${c})
    list(APPEND checked ${c} ${h})
  endforeach()
  list(FILTER srcs EXCLUDE REGEX ".*/sim/cli/main\\.c$")
  foreach(l IN LISTS L_LINKS)
    if(TARGET ${l})
      get_property(dirs GLOBAL PROPERTY FS_LAYER_DIRS_${l})
      list(APPEND allowed ${dirs})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  set_property(GLOBAL PROPERTY FS_LAYER_DIRS_fleetsim_${name} ${L_DIRS} ${allowed})
  set_property(GLOBAL PROPERTY FS_LAYER_OWN_DIRS_fleetsim_${name} ${L_DIRS})
  add_library(fleetsim_${name} OBJECT ${srcs} ${L_SOURCES})
  if(TARGET fleetsim_common)
    target_link_libraries(fleetsim_${name} PUBLIC fleetsim_common)
  endif()
  target_link_libraries(fleetsim_${name} PUBLIC ${L_LINKS})
  set_target_properties(fleetsim_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  set(stamp ${CMAKE_BINARY_DIR}/layering/${name}.ok)
  # rewritten only when it changes: a removed file or a new exception reruns
  # the check (the Makefile generator does not compare commands)
  set(args ${CMAKE_BINARY_DIR}/layering/${name}.args)
  file(CONFIGURE OUTPUT ${args} CONTENT
       "${L_DIRS}\n${allowed}\n${FS_LAYER_EXCEPTIONS}\n${FS_INCLUDE_CYCLE_EXCEPTIONS}\n${checked}\n" @ONLY)
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DROOT=${CMAKE_SOURCE_DIR} "-DFOLDERS=${L_DIRS}"
            "-DALLOWED=${allowed}" "-DEXCEPTIONS=${FS_LAYER_EXCEPTIONS}"
            "-DCYCLE_EXCEPTIONS=${FS_INCLUDE_CYCLE_EXCEPTIONS}" "-DFILES=${checked}"
            -DSTAMP=${stamp} -P ${FS_LAYER_CMAKE_DIR}/layering.cmake
    DEPENDS ${checked} ${args} ${FS_LAYER_CMAKE_DIR}/layering.cmake
    COMMENT "Checking the includes of ${L_DIRS} against the layering" VERBATIM)
  add_custom_target(fleetsim_${name}_layering DEPENDS ${stamp})
  add_dependencies(fleetsim_${name} fleetsim_${name}_layering)
  set(FS_LAYER_TARGETS ${FS_LAYER_TARGETS} fleetsim_${name} PARENT_SCOPE)
endfunction()

# The nm that reads this compiler's objects, LTO ones included: GCC's slim
# LTO objects hold GIMPLE and a symbol table only gcc-nm (nm with GCC's
# plugin) reads; clang's are bitcode, read by llvm-nm.  Found beside the
# archiver CMake chose for LTO (gcc-ar-12 -> gcc-nm-12, llvm-ar-14 ->
# llvm-nm-14), else by name, else CMake's nm.
function(fs_layer_find_nm out)
  set(cands)
  if(CMAKE_C_COMPILER_AR)
    get_filename_component(ar_dir "${CMAKE_C_COMPILER_AR}" DIRECTORY)
    get_filename_component(ar_name "${CMAKE_C_COMPILER_AR}" NAME)
    string(REGEX REPLACE "ar(-[0-9.]+)?$" "nm\\1" nm_name "${ar_name}")
    if(NOT nm_name STREQUAL ar_name)
      list(APPEND cands "${ar_dir}/${nm_name}")
    endif()
  endif()
  string(REGEX MATCH "^[0-9]+" major "${CMAKE_C_COMPILER_VERSION}")
  if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
    set(names gcc-nm-${major} gcc-nm)
  elseif(CMAKE_C_COMPILER_ID MATCHES "Clang")
    set(names llvm-nm-${major} llvm-nm)
  endif()
  foreach(c IN LISTS cands)
    if(EXISTS "${c}")
      set(${out} "${c}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  get_filename_component(cc_dir "${CMAKE_C_COMPILER}" DIRECTORY)
  find_program(FS_LAYER_NM NAMES ${names} HINTS ${cc_dir})
  if(FS_LAYER_NM)
    set(${out} "${FS_LAYER_NM}" PARENT_SCOPE)
  elseif(CMAKE_NM)
    set(${out} "${CMAKE_NM}" PARENT_SCOPE)
  else()
    message(FATAL_ERROR "fs_layer_symbols: no nm found for ${CMAKE_C_COMPILER_ID}")
  endif()
endfunction()

function(fs_layer_symbols)
  cmake_parse_arguments(S "" "TARGET" "FLOORS;PUBLIC_MAPS;LISTS;KEEP" ${ARGN})
  fs_layer_find_nm(nm)
  set(dir ${CMAKE_BINARY_DIR}/layering)
  set(stamp ${dir}/symbols.ok)
  set(inputs ${dir}/symbols-inputs-$<CONFIG>.cmake)
  set(content "# written by fs_layer_symbols (cmake/fs_layer.cmake)\n")
  string(APPEND content "set(NM [==[${nm}]==])\nset(ROOT [==[${CMAKE_SOURCE_DIR}]==])\n")
  string(APPEND content "set(STAMP [==[${stamp}]==])\n")
  string(APPEND content "set(PUBLIC_MAPS [==[${S_PUBLIC_MAPS}]==])\n")
  string(APPEND content "set(EXPORT_LISTS [==[${S_LISTS}]==])\nset(KEEP [==[${S_KEEP}]==])\n")
  set(floors)
  set(objects)
  foreach(t IN LISTS S_FLOORS)
    string(REGEX REPLACE "^fleetsim_" "" f "${t}")
    list(APPEND floors ${f})
    get_property(own GLOBAL PROPERTY FS_LAYER_OWN_DIRS_${t})
    string(APPEND content "set(OBJECTS_${f} [==[$<TARGET_OBJECTS:${t}>]==])\n")
    string(APPEND content "set(DIRS_${f} [==[${own}]==])\n")
    list(APPEND objects $<TARGET_OBJECTS:${t}>)
  endforeach()
  string(APPEND content "set(FLOORS ${floors})\n")
  file(GENERATE OUTPUT ${inputs} CONTENT "${content}")
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DINPUTS=${inputs} -P ${FS_LAYER_CMAKE_DIR}/symbols.cmake
    DEPENDS ${objects} ${inputs} ${S_LISTS} ${S_PUBLIC_MAPS} ${FS_LAYER_CMAKE_DIR}/symbols.cmake
    COMMENT "Checking the floors' symbols against the layering" VERBATIM)
  add_custom_target(${S_TARGET} DEPENDS ${stamp})
  add_dependencies(${S_TARGET} ${S_FLOORS})
endfunction()
