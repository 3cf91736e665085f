/* ipc: CUDA IPC between two processes, as PyTorch multiprocessing and
 * NCCL's peers share memory. Run without arguments, the program is the
 * exporter: it allocates, makes an IPC handle, shows that a process cannot
 * open its own handle, then runs itself again (fork + exec, argv:
 * "import" HANDLE-IN-HEX) as the importer and waits for it. The importer
 * opens the handle, uses the memory and closes it. On the simulated 1 GiB
 * device, in this order:
 *
 *   export_buffer    (exporter) cudaMalloc(16777216), cudaIpcGetMemHandle
 *   open_own_handle  (exporter) cudaIpcOpenMemHandle of its own handle:
 *                    fails with cudaErrorDeviceUninitialized ("invalid
 *                    device context"), as on real CUDA
 *   main             fork + exec of the importer; wait
 *   import_buffer    (importer) cudaIpcOpenMemHandle
 *                    (cudaIpcMemLazyEnablePeerAccess): succeeds with an
 *                    address of the importer's own for the exporter's
 *                    16777216 bytes, which the importer's device does not
 *                    count as used; cudaMemset of all of it
 *   close_buffer     (importer) cudaIpcCloseMemHandle
 *   release_buffer   (exporter) cudaFree
 *
 * Expected numbers, exporter: cudaMalloc 1 (16777216, export_buffer),
 * cudaFree 1 (release_buffer); cudaIpcGetMemHandle 1; 1 failed
 * cudaIpcOpenMemHandle (cudaErrorDeviceUninitialized, open_own_handle).
 * Live at exit: nothing. Peak 16777216 bytes.
 * Importer (a process of its own): cudaIpcOpenMemHandle 1 (import_buffer,
 * 16777216 bytes of another process's memory), cudaIpcCloseMemHandle 1
 * (close_buffer); no allocation of its own; nothing open at exit; 0 bytes
 * of its device in use.
 * Exit status 0 (both); 2 if a CUDA call fails unexpectedly, 4 if the
 * importer cannot be run or fails.
 */
#include "cuda-check.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BUFFER_BYTES ((size_t)16 << 20)

static void
to_hex(const cudaIpcMemHandle_t *h, char *hex)
{
	const unsigned char *b = (const unsigned char *)h;

	for (size_t i = 0; i < sizeof(*h); i++)
		sprintf(hex + 2 * i, "%02x", b[i]);
}

static int
from_hex(const char *hex, cudaIpcMemHandle_t *h)
{
	unsigned char *b = (unsigned char *)h;

	if (strlen(hex) != 2 * sizeof(*h))
		return -1;
	for (size_t i = 0; i < sizeof(*h); i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		b[i] = (unsigned char)v;
	}
	return 0;
}

static __attribute__((noinline)) void *
export_buffer(cudaIpcMemHandle_t *h)
{
	void *p;

	must(cudaMalloc(&p, BUFFER_BYTES), "export_buffer: cudaMalloc");
	must(cudaIpcGetMemHandle(h, p), "export_buffer: cudaIpcGetMemHandle");
	printf("export_buffer: %zu bytes, handle made\n", BUFFER_BYTES);
	return p;
}

static __attribute__((noinline)) void
open_own_handle(cudaIpcMemHandle_t h)
{
	void *p = NULL;
	cudaError_t err = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);

	printf("open_own_handle: %s\n", cudaGetErrorName(err));
	if (err != cudaErrorDeviceUninitialized)
		exit(PROGRAM_CUDA_FAILED);
	cudaGetLastError();
}

static __attribute__((noinline)) void
release_buffer(void *p)
{
	must(cudaFree(p), "release_buffer: cudaFree");
	printf("release_buffer: freed\n");
}

static int
run_importer(const cudaIpcMemHandle_t *h)
{
	char hex[2 * sizeof(*h) + 1];
	int status = -1;
	pid_t pid;

	to_hex(h, hex);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "ipc", "import", hex, (char *)NULL);
		perror("exec");
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static __attribute__((noinline)) void *
import_buffer(cudaIpcMemHandle_t h)
{
	size_t free_bytes, total;
	void *p;

	must(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess),
	     "import_buffer: cudaIpcOpenMemHandle");
	must(cudaMemset(p, 0, BUFFER_BYTES), "import_buffer: cudaMemset");
	must(cudaMemGetInfo(&free_bytes, &total), "import_buffer: cudaMemGetInfo");
	printf("import_buffer: opened, %zu bytes set, %zu bytes of this device in use\n",
	       BUFFER_BYTES, total - free_bytes);
	return p;
}

static __attribute__((noinline)) void
close_buffer(void *p)
{
	must(cudaIpcCloseMemHandle(p), "close_buffer: cudaIpcCloseMemHandle");
	printf("close_buffer: closed\n");
}

static int
importer(const char *hex)
{
	cudaIpcMemHandle_t h;

	if (from_hex(hex, &h) != 0) {
		fprintf(stderr, "ipc: bad handle\n");
		return 4;
	}
	close_buffer(import_buffer(h));
	return 0;
}

int
main(int argc, char **argv)
{
	cudaIpcMemHandle_t h;
	void *p;
	int status;

	if (argc == 3 && strcmp(argv[1], "import") == 0)
		return importer(argv[2]);
	p = export_buffer(&h);
	open_own_handle(h);
	status = run_importer(&h);
	printf("ipc: importer exited with status %d\n", status);
	release_buffer(p);
	return status == 0 ? 0 : 4;
}
