/* torus: see torus.h. */
#include "network/torus.h"

unsigned torus_neighbour(unsigned size_x, unsigned size_y, unsigned node, torus_dir_t d) {
  unsigned x = node % size_x, y = node / size_x;
  switch (d) {
    case TORUS_XPOS: x = (x + 1) % size_x; break;
    case TORUS_XNEG: x = (x + size_x - 1) % size_x; break;
    case TORUS_YPOS: y = (y + 1) % size_y; break;
    case TORUS_YNEG: y = (y + size_y - 1) % size_y; break;
    default: break;
  }
  return y * size_x + x;
}
