/* Python frames: not yet read (see python.h for the contract). */
#include "python.h"

#include <stddef.h>

void mt_python_init(void)
{
}

unsigned mt_python_splice(uintptr_t *ips, unsigned n, unsigned max)
{
	(void)ips;
	(void)max;
	return n;
}

bool mt_python_frame(uintptr_t token, const char **function, const char **file,
		     unsigned *line)
{
	(void)token;
	*function = *file = NULL;
	*line = 0;
	return false;
}
