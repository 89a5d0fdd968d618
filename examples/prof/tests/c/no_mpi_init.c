/* A program that never initialises MPI (the profiler must say so and change nothing). */
#include <stdio.h>

int main(void) {
  puts("no MPI here");
  return 7;
}
