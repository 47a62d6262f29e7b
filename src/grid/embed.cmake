# cmake -DIN=file.yaml -DOUT=file.c -P embed.cmake: the YAML as a C byte array.
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "/* Generated from src/grid/grid_config.yaml by src/grid/embed.cmake. */\n#include <stddef.h>\n"
  "#include \"opdb/grid.h\"\n/* ASCII only: the bytes fit a plain char. */\nconst char opdb_grid_default_config[] = {\n${bytes}0x00};\n"
  "const size_t opdb_grid_default_config_len = ${len};\n")
