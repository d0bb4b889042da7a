/*===- check_program.c - the program object of oflow-cuda-runtime-check ----===*
 *
 * The manifest is filled in at run time (main picks the mesh from the
 * launcher's world size), so it is a plain writable array here: this file
 * does not include abi.h, whose declaration is `const`.
 *===----------------------------------------------------------------------===*/
#include <stdint.h>

char oflow_manifest[4096];
char *oflow_manifest_buffer(void) { return oflow_manifest; }
/* w = {1.0f, 2.0f, 3.0f, 4.0f} as little-endian IEEE bytes */
const uint8_t oflow_state_init[16] = {0, 0, 0x80, 0x3F, 0, 0, 0, 0x40,
                                      0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40};
const uint64_t oflow_state_init_size = sizeof(oflow_state_init);
