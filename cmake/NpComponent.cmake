# np_component(NAME DIR SOURCES... [PUBLIC deps...] [PRIVATE deps...]): one static,
# position-independent library per concern, from DIR (relative to the calling CMakeLists.txt),
# with its headers in DIR/numaplace/. Its dependencies are PRIVATE unless its headers expose them
# (PUBLIC), so a target can include only the headers of what it links. Used by lib/ (mechanism)
# and policies/ (decisions); the layers: docs/architecture.md, checked by scripts/lint-layers.sh.
function(np_component name dir)
  cmake_parse_arguments(arg "" "" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  list(TRANSFORM arg_SOURCES PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/)
  add_library(${name} STATIC ${arg_SOURCES})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON C_VISIBILITY_PRESET hidden)
  target_include_directories(${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/${dir})
  target_link_libraries(${name} PUBLIC ${arg_PUBLIC} PRIVATE ${arg_PRIVATE})
endfunction()
