/* The library's life: the constructor (settings, NVTX, MEMTRACE_FOLLOW),
 * the start of a trace at the first recorded CUDA call (the file, the
 * queue, the stack table, the writer, CUPTI, each handed what it calls
 * back), its stop at exit, fork, and the public API (memtrace.h). This is
 * the top layer: it wires the others (core/core.h names them) and nothing calls up
 * into it but the start callback it gives record.c. The hook-path rules
 * are in record.c, where every wrapper goes through. */
#include "clock.h"
#include "config.h"
#include "carry.h"
#include "cupti.h"
#include "hook-real.h"
#include "memtrace.h"
#include "python.h"
#include "writer.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <alloca.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MT_QUEUE_LOG2 16 /* 65536 cells of 128 bytes (an 80-byte event, aligned): 8 MiB */
#define MT_STACK_SLOTS_LOG2 21 /* up to 1M distinct stacks */
#define MT_STACK_ARENA_FRAMES (64u << 20) /* 512 MiB reserved, touched on use */
#define MT_INTERVAL_MS 50

static struct mt_config config;
static struct mt_queue *queue;
static struct mt_stack_table *stacks;
static struct mt_writer *writer;
static char trace_path[MT_PATH_MAX];

/* ---- start and stop ---- */

static bool make_path(void)
{
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	if (mt_config_expand_output(config.output, getpid(), host, config.rank, trace_path,
				    sizeof(trace_path))) {
		mt_log(MT_USER, "MEMTRACE_OUTPUT=%.200s has an unknown %%-sequence or is too "
				"long (use %%p, %%h, %%r, %%%%); not tracing",
		       config.output);
		return false;
	}
	return true;
}

/* The status the program passed to exit() (or returned from main). -1:
 * not seen. The handler is registered when the trace starts, not in the
 * constructor: exit handlers run last-registered first, and the one that
 * runs the library destructors (ld.so's, registered when main's process
 * starts, after preloaded constructors ran) must come after ours. */
static int exit_status = -1;
static bool exit_noted;

static void note_exit(int status, void *arg)
{
	(void)arg;
	exit_status = status & 0377;
}

/* MEMTRACE_RUN_TRACES (memtrace run --report): the file where each trace
 * made is listed, so that the script can report on those of a process
 * that was killed before it could. */
static void list_trace(void)
{
	const char *list = getenv("MEMTRACE_RUN_TRACES");
	char line[MT_PATH_MAX + 1];
	if (!list || !*list)
		return;
	int fd = open(list, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	snprintf(line, sizeof(line) - 1, "%s", trace_path);
	size_t n = strlen(line);
	line[n++] = '\n';
	ssize_t w = write(fd, line, n); /* one write: O_APPEND keeps lines whole */
	(void)w;
	close(fd);
}

/* Whether this process made a CUDA call (start ran) or a child by fork:
 * memtrace run's process that did neither says it wrote no trace. */
static bool started, forked;
/* The process whose trace this is: a vfork child shares our memory, and
 * its _exit must not end the parent's trace. */
static pid_t trace_pid;

/* Under record.c's start lock, at the first recorded call. Without
 * mt_record_begin, tracing is off. */
static void start(void)
{
	started = true;
	mt_unwind_init();
	mt_python_init();
	if (!make_path())
		return;
	/* before the writer opens it: the trace's descriptors go high and are
	 * guarded (fd-guard.c) */
	if (!mt_fdguard_sqlite(trace_path))
		mt_log(MT_ENV, "this libsqlite3 does not let memtrace guard the trace's file "
			       "descriptors; a program that closes descriptors it did not open "
			       "may get them");
	/* The queue in a file beside the trace, so that what a killed
	 * process had pushed can be recovered (ring-file.c); the full trace
	 * only (flight mode keeps its own bounded file). */
	uint64_t start_ns = mt_now_ns();
	uint64_t ring_id = (start_ns ^ ((uint64_t)getpid() << 40)) | 1;
	int ring_fd = config.flight ? -1 : mt_ring_create(trace_path, MT_QUEUE_LOG2, start_ns, ring_id);
	int ring_errno = errno;
	queue = mt_queue_new(MT_QUEUE_LOG2, ring_fd);
	if (!queue && ring_fd >= 0) {
		/* a file system that cannot map it shared: the queue in memory */
		ring_errno = errno;
		mt_fdguard_close(ring_fd);
		mt_ring_remove(trace_path);
		ring_fd = -1;
		queue = mt_queue_new(MT_QUEUE_LOG2, -1);
	}
	stacks = mt_stack_table_new(MT_STACK_SLOTS_LOG2, MT_STACK_ARENA_FRAMES);
	if (!queue || !stacks) {
		mt_log(MT_ENV, "cannot reserve memory for the event queue; not tracing");
		if (ring_fd >= 0)
			mt_ring_remove(trace_path);
		return;
	}
	struct mt_writer_options opt = {
		.path = trace_path,
		.queue = queue,
		.stacks = stacks,
		.depth = config.depth,
		.interval_ms = MT_INTERVAL_MS,
		.start_ns = start_ns,
		.rank = config.rank,
		.flight = config.flight,
		.what_fits = config.what_fits,
		.ring_id = ring_fd >= 0 ? ring_id : 0,
		.op_name = mt_nvtx_name,
		.pyframe = mt_python_frame,
	};
	writer = mt_writer_start(&opt);
	if (!writer) {
		if (ring_fd >= 0)
			mt_ring_remove(trace_path);
		return;
	}
	/* Said only when the trace itself could be made (else the writer
	 * said why), and not as an error: the trace is as it was before the
	 * ring file, which a program killed with SIGKILL needs. */
	if (ring_fd < 0 && !config.flight)
		mt_log(MT_INFO, "cannot create %s-ring: %s; the events not yet written when the "
				"process is killed will be lost", trace_path, strerror(ring_errno));
	mt_log(MT_INFO, "tracing to %s", trace_path);
	/* by a path that the program's chdir does not break (the report at
	 * exit, memtrace run's list) */
	char abs[PATH_MAX];
	if (realpath(trace_path, abs) && strlen(abs) < sizeof(trace_path))
		snprintf(trace_path, sizeof(trace_path), "%s", abs);
	list_trace();
	trace_pid = getpid();
	if (!exit_noted) /* once a process: a fork child inherits it */
		exit_noted = on_exit(note_exit, NULL) == 0;
	mt_record_begin(&(struct mt_record_options){
		.queue = queue,
		.stacks = stacks,
		.writer = writer,
		.path = trace_path,
		.depth = config.depth,
		.device = mt_real_device,
		.mem_info = mt_real_mem_info,
		.flush = mt_cupti_flush,
	});
	/* the second witness, when it can be had */
	mt_cupti_start(&(struct mt_cupti_options){
		.stacks = stacks,
		.sink = mt_record_external,
		.dlsym = mt_real_dlsym,
	});
}

/* MEMTRACE_FOLLOW=0: programs this one executes must not load us. The
 * entries of LD_PRELOAD that are this library are dropped; the rest stays
 * as it was. */
static void stop_following(void)
{
	const char *preload = getenv("LD_PRELOAD");
	Dl_info self;
	if (!preload || !dladdr((void *)stop_following, &self) || !self.dli_fname)
		return;
	char kept[MT_PATH_MAX];
	size_t n = 0;
	const char *p = preload;
	while (*p) {
		size_t len = strcspn(p, ": ");
		const char *slash = memrchr(p, '/', len);
		const char *base = slash ? slash + 1 : p;
		bool ours = (len == strlen(self.dli_fname) && !strncmp(p, self.dli_fname, len)) ||
			    ((size_t)(p + len - base) == strlen("libmemtrace.so") &&
			     !strncmp(base, "libmemtrace.so", strlen("libmemtrace.so")));
		if (len && !ours && n + len + 2 < sizeof(kept)) {
			if (n)
				kept[n++] = ':';
			memcpy(kept + n, p, len);
			n += len;
		}
		p += len;
		p += strspn(p, ": ");
	}
	kept[n] = '\0';
	if (n)
		setenv("LD_PRELOAD", kept, 1);
	else
		unsetenv("LD_PRELOAD");
}

/* NVTX finds its injection library through this variable: point it at us
 * unless the user chose another tool. */
static void offer_nvtx(void)
{
	Dl_info self;
	const char *set = getenv("NVTX_INJECTION64_PATH");
	if (!dladdr((void *)offer_nvtx, &self) || !self.dli_fname)
		return;
	if (!set || !*set)
		setenv("NVTX_INJECTION64_PATH", self.dli_fname, 1);
	else if (strcmp(set, self.dli_fname))
		mt_log(MT_INFO, "NVTX_INJECTION64_PATH is set to %.200s: NVTX ranges go there, "
				"and events carry no operation names",
		       set);
}

__attribute__((constructor)) static void mt_constructor(void)
{
	mt_log_init();
	mt_hook_fd_init();
	mt_config_load(&config, (mt_getenv_fn)getenv);
	mt_what_fits = config.what_fits;
	mt_record_set_start(start);
	mt_frameworks_init(&(struct mt_frameworks_options){
		.tensors = config.tensors,
		.loaded = mt_real_loaded,
		.mem_info = mt_real_mem_info,
	});
	if (!config.follow)
		stop_following();
	offer_nvtx();
}

/* ---- the report at exit (MEMTRACE_REPORT_AT_EXIT) ---- */

static bool executable(const char *path)
{
	return access(path, X_OK) == 0;
}

/* memtrace-report: $MEMTRACE_REPORT, else beside this library as the
 * build tree, a wheel or an installation lays them out, else where meson
 * installs it. */
static bool find_reporter(char *out, size_t outsz)
{
	static const char *const beside[] = {
		"../report/memtrace-report", "../bin/memtrace-report", "../../bin/memtrace-report",
	};
	const char *env = getenv("MEMTRACE_REPORT");
	Dl_info self;
	char dir[MT_PATH_MAX];

	if (env && *env) {
		snprintf(out, outsz, "%s", env);
		return executable(out);
	}
	if (dladdr((void *)find_reporter, &self) && self.dli_fname &&
	    realpath(self.dli_fname, dir)) {
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		for (size_t i = 0; i < sizeof(beside) / sizeof(beside[0]); i++) {
			snprintf(out, outsz, "%s/%s", dir, beside[i]);
			if (executable(out))
				return true;
		}
	}
	snprintf(out, outsz, "%s", MEMTRACE_INSTALLED_REPORT);
	return executable(out);
}

/* The environment of the reporter: ours without LD_PRELOAD (it must not
 * trace itself) and without NVTX's injection variable. */
static char **reporter_env(void)
{
	extern char **environ;
	size_t n = 0, k = 0;
	while (environ && environ[n])
		n++;
	char **env = calloc(n + 1, sizeof(*env));
	for (size_t i = 0; env && i < n; i++) {
		if (strncmp(environ[i], "LD_PRELOAD=", 11) &&
		    strncmp(environ[i], "NVTX_INJECTION64_PATH=", 22))
			env[k++] = environ[i];
	}
	return env;
}

/* The report beside the trace: TRACE less .db, plus .txt, .json or .html. */
static void report_at_exit(void)
{
	char reporter[MT_PATH_MAX], out[MT_PATH_MAX + 8];
	const char *format = config.report_at_exit;
	size_t n = strlen(trace_path);

	if (!format[0])
		return;
	if (!find_reporter(reporter, sizeof(reporter))) {
		mt_log(MT_ENV, "MEMTRACE_REPORT_AT_EXIT: cannot find memtrace-report (set "
			       "MEMTRACE_REPORT to it); run: memtrace report %s",
		       trace_path);
		return;
	}
	if (n > 3 && !strcmp(trace_path + n - 3, ".db"))
		n -= 3;
	snprintf(out, sizeof(out), "%.*s.%s", (int)n, trace_path,
		 strcmp(format, "text") ? format : "txt");
	char *argv[] = { reporter, trace_path, "--format", (char *)format, "-o", out,
			 "--no-progress", NULL };
	char **env = reporter_env();
	pid_t pid;
	int status = 0, rc = env ? posix_spawn(&pid, reporter, NULL, NULL, argv, env) : ENOMEM;
	free(env);
	if (rc) {
		mt_log(MT_ENV, "MEMTRACE_REPORT_AT_EXIT: cannot run %s: %s", reporter, strerror(rc));
		return;
	}
	/* the program's own SIGCHLD handler may reap it first: then its
	 * status is unknown, and the report is likely there */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		mt_log(MT_INFO, "report written to %s", out);
	else if (WIFEXITED(status) || WIFSIGNALED(status))
		mt_log(MT_ENV, "MEMTRACE_REPORT_AT_EXIT: %s failed on %s; run: memtrace report %s",
		       reporter, trace_path, trace_path);
}

/* MEMTRACE_RUN_PID (memtrace run, which execs the program): the process
 * the user started. When it ends without a CUDA call, and without a child
 * that may have made one, say so: otherwise the run ends without a word
 * and no trace. */
/* What of PyTorch the process loaded: a CPU-only build has libtorch_cpu.so
 * and never libtorch_cuda.so, which is why its program made no CUDA call. */
struct torch_libs {
	bool cpu, cuda;
};

static int find_torch(struct dl_phdr_info *info, size_t size, void *data)
{
	struct torch_libs *found = data;
	const char *slash = strrchr(info->dlpi_name, '/');
	const char *base = slash ? slash + 1 : info->dlpi_name;

	(void)size;
	if (strcmp(base, "libtorch_cpu.so") == 0)
		found->cpu = true;
	else if (strcmp(base, "libtorch_cuda.so") == 0)
		found->cuda = true;
	return 0;
}

static void say_no_trace(void)
{
	const char *pid = getenv("MEMTRACE_RUN_PID");
	struct torch_libs torch = { false, false };

	if (!pid || strtol(pid, NULL, 10) != (long)getpid())
		return;
	mt_dl_iterate_phdr(find_torch, &torch);
	if (torch.cpu && !torch.cuda)
		mt_log(MT_INFO, "no CUDA call; no trace written: the PyTorch here is a CPU-only "
				"build (libtorch_cpu.so, no libtorch_cuda.so): install a CUDA build");
	else
		mt_log(MT_INFO, "no CUDA call; no trace written");
}

/* Runs after the program's atexit handlers and after the destructors of
 * the libraries loaded after us, so late frees are still recorded. */
__attribute__((destructor)) static void mt_destructor(void)
{
	mt_record_lock();
	if (mt_record_running()) {
		mt_cupti_stop();
		mt_record_stop();
		mt_writer_stop(writer, true, exit_status);
		mt_queue_close(queue);
		if (!mt_writer_failed(writer))
			mt_log(MT_INFO, "%llu events written to %s",
			       (unsigned long long)mt_writer_committed(writer), trace_path);
		/* writer stays allocated: a thread still in a hook may use it */
		report_at_exit();
	} else if (!started && !forked) {
		say_no_trace();
	}
	mt_record_unlock();
}

/* ---- _exit and _Exit ---- */

/* os._exit in Python, forked workers, launchers: the process ends without
 * exit handlers or destructors. The writer thread drains the queue,
 * writes the end with the status and closes the file before the real
 * call (mt_writer_finish: no lock waited for, so also from a signal
 * handler or a thread that holds one; bounded when the writer makes no
 * progress). Not from the writer thread, not in a child whose trace is
 * not started (a fork's, a vfork's sharing our memory), not before the
 * trace started. */
#define MT_FINISH_IDLE_MS 2000

typedef void (*exit_fn)(int);
static exit_fn real_exit_fn, real_Exit_fn;

static void finish_before(int status)
{
	struct mt_writer *w = writer;
	if (!mt_record_running() || !w || getpid() != trace_pid || mt_writer_is_self(w))
		return;
	mt_writer_finish(w, status & 0377, MT_FINISH_IDLE_MS);
}

static __attribute__((noreturn)) void end_process(exit_fn real, int status)
{
	if (real)
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

MT_EXPORT void _exit(int status)
{
	finish_before(status);
	end_process(real_exit_fn, status);
}

MT_EXPORT void _Exit(int status)
{
	finish_before(status);
	end_process(real_Exit_fn, status);
}

/* At load, so that a call from a signal handler finds them ready. */
__attribute__((constructor)) static void mt_find_exits(void)
{
	real_exit_fn = (exit_fn)mt_real_dlsym(RTLD_NEXT, "_exit");
	real_Exit_fn = (exit_fn)mt_real_dlsym(RTLD_NEXT, "_Exit");
}

/* ---- exec ---- */

/* An exec that succeeds ends this image without exit handlers: every
 * event pushed so far is committed first (bounded as for _exit), and the
 * writer goes on, since an exec may fail. The trace stays unfinished
 * (end = running) and becomes one file at its first report. glibc's
 * exec functions call execve inside, not through its symbol: each is
 * wrapped. The l-forms build their argv and go through the v-forms. */
typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
static execve_fn real_execve_fn, real_execvpe_fn;
static execv_fn real_execv_fn, real_execvp_fn;
static fexecve_fn real_fexecve_fn;

static void commit_pushed(void)
{
	struct mt_writer *w = writer;
	int saved = errno;
	if (mt_record_running() && w && getpid() == trace_pid && !mt_writer_is_self(w))
		mt_writer_commit_now(w, MT_FINISH_IDLE_MS);
	errno = saved;
}

static int no_exec(void)
{
	errno = ENOSYS;
	return -1;
}

MT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	commit_pushed();
	return real_execve_fn ? real_execve_fn(path, argv, envp) : no_exec();
}

MT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	commit_pushed();
	return real_execvpe_fn ? real_execvpe_fn(file, argv, envp) : no_exec();
}

MT_EXPORT int execv(const char *path, char *const argv[])
{
	commit_pushed();
	return real_execv_fn ? real_execv_fn(path, argv) : no_exec();
}

MT_EXPORT int execvp(const char *file, char *const argv[])
{
	commit_pushed();
	return real_execvp_fn ? real_execvp_fn(file, argv) : no_exec();
}

MT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	commit_pushed();
	return real_fexecve_fn ? real_fexecve_fn(fd, argv, envp) : no_exec();
}

__attribute__((constructor)) static void mt_find_execs(void)
{
	real_execve_fn = (execve_fn)mt_real_dlsym(RTLD_NEXT, "execve");
	real_execvpe_fn = (execve_fn)mt_real_dlsym(RTLD_NEXT, "execvpe");
	real_execv_fn = (execv_fn)mt_real_dlsym(RTLD_NEXT, "execv");
	real_execvp_fn = (execv_fn)mt_real_dlsym(RTLD_NEXT, "execvp");
	real_fexecve_fn = (fexecve_fn)mt_real_dlsym(RTLD_NEXT, "fexecve");
}

/* The arguments of an l-form after arg0, up to its NULL, counted. */
static size_t count_args(va_list *ap)
{
	size_t n = 1;
	while (va_arg(*ap, const char *))
		n++;
	return n;
}

static void fill_args(char **argv, const char *arg0, va_list *ap)
{
	size_t i = 0;
	argv[i++] = (char *)arg0;
	while ((argv[i] = va_arg(*ap, char *)) != NULL)
		i++;
}

MT_EXPORT int execl(const char *path, const char *arg0, ...)
{
	va_list ap;
	va_start(ap, arg0);
	size_t n = count_args(&ap);
	va_end(ap);
	char **argv = alloca((n + 1) * sizeof(*argv)); /* no malloc: async-signal-safe */
	va_start(ap, arg0);
	fill_args(argv, arg0, &ap);
	va_end(ap);
	return execv(path, argv);
}

MT_EXPORT int execlp(const char *file, const char *arg0, ...)
{
	va_list ap;
	va_start(ap, arg0);
	size_t n = count_args(&ap);
	va_end(ap);
	char **argv = alloca((n + 1) * sizeof(*argv)); /* no malloc: async-signal-safe */
	va_start(ap, arg0);
	fill_args(argv, arg0, &ap);
	va_end(ap);
	return execvp(file, argv);
}

MT_EXPORT int execle(const char *path, const char *arg0, ...)
{
	va_list ap;
	va_start(ap, arg0);
	size_t n = count_args(&ap);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	char **argv = alloca((n + 1) * sizeof(*argv)); /* no malloc: async-signal-safe */
	va_start(ap, arg0);
	fill_args(argv, arg0, &ap);
	va_end(ap);
	return execve(path, argv, envp);
}

/* ---- abort ---- */

/* abort() from the program, and from libstdc++'s std::terminate (an
 * uncaught exception), which call it through its symbol: every event
 * pushed so far is committed first, as for exec, then the real call. The
 * program may catch SIGABRT and go on, so the writer goes on too, and the
 * trace says running. (glibc's own aborts, assert and heap corruption,
 * call it inside, not through its symbol.) */
typedef void (*abort_fn)(void);
static abort_fn real_abort_fn;

MT_EXPORT void abort(void)
{
	commit_pushed();
	if (real_abort_fn)
		real_abort_fn();
	for (;;) /* not reached: the real abort does not return */
		raise(SIGKILL);
}

__attribute__((constructor)) static void mt_find_abort(void)
{
	real_abort_fn = (abort_fn)mt_real_dlsym(RTLD_NEXT, "abort");
}

/* ---- fork ---- */

/* The locks first, then the gate: no thread waits at the gate holding
 * either lock (fork-gate.c). */
static void before_fork(void)
{
	mt_record_lock();
	if (writer)
		mt_writer_lock(writer);
	mt_fork_gate_close();
}

static void after_fork_parent(void)
{
	forked = true;
	mt_fork_gate_open(false);
	if (writer)
		mt_writer_unlock(writer);
	mt_record_unlock();
}

/* The child has no writer thread. Forget the parent's trace (its memory
 * stays mapped but unused, its descriptors are closed) and start a new one
 * at the first CUDA call. */
static void after_fork_child(void)
{
	mt_fork_gate_open(true);
	mt_record_after_fork_child(config.follow);
	writer = NULL;
	queue = NULL;
	stacks = NULL;
	mt_fdguard_after_fork_child();
	mt_log_reset();
}

__attribute__((constructor)) static void mt_register_fork(void)
{
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* ---- public API (memtrace.h) ---- */

MT_EXPORT void memtrace_mark(const char *label)
{
	mt_record_mark(MT_API_memtrace_mark, mt_nvtx_intern(label ? label : ""));
}

MT_EXPORT int memtrace_flush(void)
{
	if (!mt_record_running())
		return -1;
	mt_cupti_flush();
	uint64_t pushed = mt_queue_tickets(queue);
	if (pushed == 0)
		return 0;
	return mt_writer_sync(writer, pushed - 1, 2000) ? 0 : -1;
}
