/* cxx-local: a C program that loads the C++ library libcxx-local.so (next
 * to it) with dlopen(RTLD_LOCAL) and runs it: an OOM in a C++ function
 * while libstdc++ is outside the global scope. Expected: one cudaMalloc of
 * 64 MiB, live at exit; one of 2 GiB that fails; exit status 0 (1 when
 * the library cannot be loaded, 2 when a call did not go as above). */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	if (n <= 0)
		return 1;
	path[n] = '\0';
	strcpy(strrchr(path, '/') + 1, "libcxx-local.so");
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "cxx-local: %s\n", dlerror());
		return 1;
	}
	int (*run)(void) = (int (*)(void))dlsym(lib, "cxx_local_run");
	int rc = run ? run() : 1;
	printf("cxx-local: %s\n", rc == 0 ? "the 2 GiB request failed, as expected" : "failed");
	return rc;
}
