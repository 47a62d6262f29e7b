# `opdb grid` library sources, plus the shipped grid configuration
# (src/grid/grid_config.yaml) embedded as the built-in default.
file(GLOB OPDB_GRID_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/grid/*.c)
set(OPDB_GRID_YAML ${CMAKE_CURRENT_SOURCE_DIR}/src/grid/grid_config.yaml)
set(OPDB_GRID_YAML_C ${CMAKE_CURRENT_BINARY_DIR}/generated/grid_config_yaml.c)
add_custom_command(
  OUTPUT ${OPDB_GRID_YAML_C}
  COMMAND ${CMAKE_COMMAND} -DIN=${OPDB_GRID_YAML} -DOUT=${OPDB_GRID_YAML_C}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/src/grid/embed.cmake
  DEPENDS ${OPDB_GRID_YAML} ${CMAKE_CURRENT_SOURCE_DIR}/src/grid/embed.cmake
  COMMENT "Embedding grid_config.yaml")
list(APPEND OPDB_LIB_SOURCES ${OPDB_GRID_SOURCES} ${OPDB_GRID_YAML_C})
