# Writes OUTPUT, a C++ source defining `const unsigned char SYMBOL[]` (NUL-terminated)
# and `const unsigned long SYMBOL_size` with the bytes of INPUT, so that a
# binary carries its data and needs no file at run time.
# Usage: cmake -DINPUT=... -DOUTPUT=... -DSYMBOL=... -DNAMESPACE=... -P embed_file.cmake
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x[0-9a-f][0-9a-f],){32}" "\\0\n" bytes "${bytes}")
file(WRITE "${OUTPUT}" "// Generated from ${INPUT} by cmake/embed_file.cmake. Do not edit.\n"
  "namespace ${NAMESPACE} {\n"
  "extern const unsigned char ${SYMBOL}[] = {\n${bytes}0x00};\n"
  "extern const unsigned long ${SYMBOL}_size = ${size};\n"
  "}  // namespace ${NAMESPACE}\n")
