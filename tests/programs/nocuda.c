/* nocuda: a program that never touches CUDA and is not linked against it.
 * With the tool preloaded it must run unchanged and leave no trace file.
 * Prints one line and exits 0. */
#include <stdio.h>

int
main(void)
{
	printf("nocuda: no CUDA here\n");
	return 0;
}
