/* An embedding program that loads Python late: it allocates first (the
 * trace starts with no Python in the process), then loads libpython with
 * RTLD_LOCAL (so its symbols are not in the global scope) and runs a
 * script that allocates, through a function of ours, RUNS times from one
 * Python function. memtrace looks for Python again every 4096 calls on a
 * thread (docs/python.md): the later allocations must get Python frames.
 *
 *   py-embed LIBPYTHON RUNS
 *   py-embed - RUNS          no Python at all: RUNS allocations, natively
 *
 * Python's C API is reached through dlsym: the program needs no Python
 * headers and works with any version. Exit status 0 when all went well. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void PyObject;
typedef PyObject *(*PyCFunction)(PyObject *, PyObject *);
struct PyMethodDef {
	const char *ml_name;
	PyCFunction ml_meth;
	int ml_flags;
	const char *ml_doc;
};
#define METH_O 0x0008

static struct {
	void (*Py_InitializeEx)(int);
	int (*PyRun_SimpleString)(const char *);
	PyObject *(*PyImport_AddModule)(const char *);
	PyObject *(*PyCFunction_NewEx)(struct PyMethodDef *, PyObject *, PyObject *);
	int (*PyObject_SetAttrString)(PyObject *, const char *, PyObject *);
	long (*PyLong_AsLong)(PyObject *);
	PyObject *(*PyLong_FromLong)(long);
} py;

static int failures;

/* native_alloc(bytes) -> the CUDA status */
static PyObject *native_alloc(PyObject *self, PyObject *arg)
{
	void *p;
	int rc = cudaMalloc(&p, (size_t)py.PyLong_AsLong(arg));
	failures += rc != 0;
	return py.PyLong_FromLong(rc);
}

static struct PyMethodDef native_alloc_def = { "native_alloc", native_alloc, METH_O, NULL };

#define LOOKUP(h, name) (*(void **)&py.name = dlsym(h, #name))

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s LIBPYTHON RUNS\n", argv[0]);
		return 2;
	}
	void *p;
	if (cudaMalloc(&p, 4096) != 0)
		return 1;
	if (!strcmp(argv[1], "-")) {
		for (int i = 0; i < atoi(argv[2]); i++)
			if (cudaMalloc(&p, 256) != 0)
				return 1;
		printf("native done\n");
		return 0;
	}
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	if (!LOOKUP(h, Py_InitializeEx) || !LOOKUP(h, PyRun_SimpleString) ||
	    !LOOKUP(h, PyImport_AddModule) || !LOOKUP(h, PyCFunction_NewEx) ||
	    !LOOKUP(h, PyObject_SetAttrString) || !LOOKUP(h, PyLong_AsLong) ||
	    !LOOKUP(h, PyLong_FromLong)) {
		fprintf(stderr, "libpython lacks a function this program uses\n");
		return 1;
	}
	py.Py_InitializeEx(0);
	PyObject *main_module = py.PyImport_AddModule("__main__");
	PyObject *fn = py.PyCFunction_NewEx(&native_alloc_def, NULL, NULL);
	if (!main_module || !fn || py.PyObject_SetAttrString(main_module, "native_alloc", fn))
		return 1;
	char script[256];
	snprintf(script, sizeof(script),
		 "def embedded_alloc():\n"
		 "    for _ in range(%d):\n"
		 "        native_alloc(256)\n"
		 "embedded_alloc()\n",
		 atoi(argv[2]));
	if (py.PyRun_SimpleString(script) != 0 || failures)
		return 1;
	printf("embedded done\n");
	return 0;
}
