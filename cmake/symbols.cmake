# The layering by linked symbols (docs/layering.md), run by the build once
# every floor's objects are built and before the core archive is made
# (cmake/fs_layer.cmake, fs_layer_symbols).  The include check
# (layering.cmake) reads literal #include lines; this one reads what the
# objects need and define, so a declaration written by hand (`extern`), an
# include through a macro or a copied prototype is caught too.  Two rules:
#
# 1. Down only.  An undefined symbol of a floor's object must be defined by an
#    object of the same floor or of a floor below, or by none of them (then a
#    system or external library: libc, GSL, HDF5, the sanitizers' runtime;
#    the final link checks those).  A symbol a higher floor defines stops the
#    build, naming the object, the symbol and the floor and object that
#    define it.  A symbol defined (strongly) by two objects stops it too.
# 2. No unused exports.  An external symbol a floor defines must be used by
#    another object of the floors (the program's main included), unless it is
#    public (matches a `global:` pattern of a version script in PUBLIC_MAPS:
#    sim/api/fleetsim.map, the API of fleetsim.h and the plugin ABI), in KEEP
#    (entry points such as main), or listed in one of EXPORT_LISTS (one symbol per
#    line, `#` starts a comment: cmake/exports-for-tests.txt for what only
#    tests and the fuzz entry points call).  A listed symbol that is not
#    defined, or that production code uses after all, stops the build too, so
#    the lists stay true.  Names starting with "__" or "_" and a capital (the
#    compiler's and the sanitizers') and weak definitions are not exports.
#
#   cmake -DINPUTS=<file> [-DEXTRA_FLOOR=<floor> -DEXTRA_OBJECTS=<objs>]
#         [-DSTAMP=<file>] -P symbols.cmake
#
# INPUTS (written by fs_layer_symbols with file(GENERATE)) sets NM, ROOT,
# FLOORS (bottom up), OBJECTS_<floor>, DIRS_<floor>, PUBLIC_MAPS, KEEP,
# EXPORT_LISTS and STAMP.  EXTRA_OBJECTS are checked as if they were objects of
# EXTRA_FLOOR (tests/layering/ uses it to add a purpose-built object).
cmake_minimum_required(VERSION 3.20)
set(stamp_given "${STAMP}")
include("${INPUTS}")
if(stamp_given)
  set(STAMP "${stamp_given}")
endif()
if(DEFINED EXTRA_FLOOR)
  list(APPEND OBJECTS_${EXTRA_FLOOR} ${EXTRA_OBJECTS})
endif()

# Where an object came from: build/CMakeFiles/T.dir/traces/fs_x.c.o ->
# traces/fs_x.c (the layout of the Makefile and Ninja generators).
function(source_of obj out)
  if(obj MATCHES "\\.dir/(.+)\\.(o|obj)$")
    set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
  else()
    set(${out} "${obj}" PARENT_SCOPE)
  endif()
endfunction()

# ---- read every floor's objects ----
set(refs "")          # "floor|object|symbol" for every undefined symbol
set(defined "")       # every strongly defined external symbol
set(duplicates "")
set(rank 0)
foreach(floor IN LISTS FLOORS)
  set(rank_${floor} ${rank})
  math(EXPR rank "${rank} + 1")
  if(NOT OBJECTS_${floor})
    continue()
  endif()
  # -A: the object on every line; -g: external symbols only; -P: "name type"
  execute_process(COMMAND "${NM}" -A -g -P ${OBJECTS_${floor}}
                  OUTPUT_VARIABLE out ERROR_VARIABLE nm_err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "layering: ${NM} failed on the objects of ${floor} (${rc}):\n${nm_err}")
  endif()
  string(REGEX MATCHALL "[^\n]+" lines "${out}")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^(.+): ([A-Za-z_][A-Za-z0-9_.]*) ([A-Za-z])( |$)")
      continue()
    endif()
    set(obj "${CMAKE_MATCH_1}")
    set(sym "${CMAKE_MATCH_2}")
    set(type "${CMAKE_MATCH_3}")
    if(sym MATCHES "^(__|_[A-Z])")
      continue()
    endif()
    if(type MATCHES "^[Uwv]$")
      list(APPEND refs "${floor}|${obj}|${sym}")
      list(APPEND users_${sym} "${obj}")
    elseif(type MATCHES "^[wWvV]$")
      # weak: not an export of ours, but it satisfies a reference
      if(NOT DEFINED def_${sym})
        set(def_${sym} "${obj}")
        set(floor_${sym} "${floor}")
        set(weak_${sym} TRUE)
      endif()
    else()
      if(DEFINED def_${sym} AND NOT weak_${sym})
        source_of("${def_${sym}}" a)
        source_of("${obj}" b)
        string(APPEND duplicates "  ${sym}: ${a} (${floor_${sym}}) and ${b} (${floor})\n")
        continue()
      endif()
      set(def_${sym} "${obj}")
      set(floor_${sym} "${floor}")
      unset(weak_${sym})
      list(APPEND defined "${sym}")
    endif()
  endforeach()
endforeach()

# ---- 1. down only ----
set(up "")
foreach(r IN LISTS refs)
  string(REPLACE "|" ";" r "${r}")
  list(GET r 0 floor)
  list(GET r 1 obj)
  list(GET r 2 sym)
  if(NOT DEFINED def_${sym})
    continue()
  endif()
  set(dfloor "${floor_${sym}}")
  if(rank_${dfloor} GREATER rank_${floor})
    source_of("${obj}" user)
    source_of("${def_${sym}}" where)
    string(APPEND up "  ${user} (floor ${floor}: ${DIRS_${floor}}) uses ${sym}, "
                     "defined by ${where} (floor ${dfloor}: ${DIRS_${dfloor}}, above it)\n")
  endif()
endforeach()

# ---- 2. unused exports ----
set(public_res "")
foreach(map IN LISTS PUBLIC_MAPS)
  file(READ "${map}" text)
  string(REGEX REPLACE "#[^\n]*" "" text "${text}")
  string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" "" text "${text}")
  string(REGEX MATCHALL "global:[^:]*(local:|})" sections "${text}")
  foreach(sec IN LISTS sections)
    string(REGEX REPLACE "^global:|(local:|})$" "" sec "${sec}")
    string(REGEX MATCHALL "[A-Za-z0-9_*?]+" pats "${sec}")
    foreach(p IN LISTS pats)
      string(REPLACE "*" ".*" p "${p}")
      string(REPLACE "?" "." p "${p}")
      list(APPEND public_res "^${p}$")
    endforeach()
  endforeach()
endforeach()

set(listed "")
foreach(lf IN LISTS EXPORT_LISTS)
  file(STRINGS "${lf}" entries)
  foreach(e IN LISTS entries)
    string(REGEX REPLACE "#.*$" "" e "${e}")
    string(STRIP "${e}" e)
    if(e STREQUAL "")
      continue()
    endif()
    list(APPEND listed "${e}")
    set(list_of_${e} "${lf}")
  endforeach()
endforeach()

set(unused "")
set(stale "")
foreach(sym IN LISTS defined)
  set(used FALSE)
  foreach(u IN LISTS users_${sym})
    if(NOT u STREQUAL def_${sym})
      set(used TRUE)
      break()
    endif()
  endforeach()
  set(exempt FALSE)
  if(sym IN_LIST KEEP)
    set(exempt TRUE)
  else()
    foreach(re IN LISTS public_res)
      if(sym MATCHES "${re}")
        set(exempt TRUE)
        break()
      endif()
    endforeach()
  endif()
  if(sym IN_LIST listed)
    set(was_listed TRUE)
    set(listed_def_${sym} TRUE)
  else()
    set(was_listed FALSE)
  endif()
  if(used OR exempt)
    if(was_listed)
      source_of("${def_${sym}}" where)
      string(APPEND stale "  ${sym} (${where}) is used by the program: remove it from ${list_of_${sym}}\n")
    endif()
    continue()
  endif()
  if(NOT was_listed)
    source_of("${def_${sym}}" where)
    string(APPEND unused "  ${where}: ${sym} (floor ${floor_${sym}})\n")
  endif()
endforeach()
foreach(sym IN LISTS listed)
  if(NOT listed_def_${sym})
    string(APPEND stale "  ${sym} is defined by no object: remove it from ${list_of_${sym}}\n")
  endif()
endforeach()

set(msg "")
if(up)
  string(APPEND msg "symbols pointing up the floors (docs/layering.md; a floor may use only "
                    "its own and lower floors):\n${up}")
endif()
if(duplicates)
  string(APPEND msg "symbols defined twice:\n${duplicates}")
endif()
if(unused)
  string(APPEND msg "unused exports (external, used by no other object of the program; "
                    "make them static or remove them, or list a symbol only tests use "
                    "in cmake/exports-for-tests.txt):\n${unused}")
endif()
if(stale)
  string(APPEND msg "stale entries in the export lists:\n${stale}")
endif()
if(msg)
  message(FATAL_ERROR "layering by symbols:\n${msg}")
endif()
list(LENGTH defined n_def)
list(LENGTH refs n_refs)
file(WRITE "${STAMP}" "ok: ${n_def} exports, ${n_refs} references\n")
