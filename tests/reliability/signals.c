/* signals: memtrace leaves the program's signals alone. The program
 * installs handlers and a signal mask before its first CUDA call, then
 * allocates from two threads, and checks:
 *   - every signal's disposition (handler, flags, mask) and the main
 *     thread's signal mask are what it set, after the trace has started
 *     and again at the end;
 *   - a process-directed signal (kill(getpid(), SIGUSR1)), sent 50 times
 *     while a worker allocates, is handled every time, and never on a
 *     thread the program did not create (memtrace's writer takes none);
 *   - the workers' cudaMalloc and cudaFree, interrupted by those
 *     signals, still succeed.
 * Prints what it found; exit status 0 when all holds, 1 otherwise. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KILLS 50

static atomic_int handled;
static atomic_int foreign; /* handled on a thread the program did not make */
static pid_t mine[3];
static atomic_bool stop;
static struct sigaction before[NSIG];
static sigset_t mask_before;

static void on_usr1(int sig, siginfo_t *info, void *ctx)
{
	(void)sig, (void)info, (void)ctx;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	if (tid != mine[0] && tid != mine[1] && tid != mine[2])
		atomic_fetch_add(&foreign, 1);
	atomic_fetch_add(&handled, 1);
}

static void on_usr2(int sig)
{
	(void)sig;
}

static void install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaction(SIGUSR1, &sa, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL); /* no SA_RESTART */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sa.sa_mask, NULL);
	for (int s = 1; s < NSIG; s++)
		sigaction(s, NULL, &before[s]);
	pthread_sigmask(SIG_BLOCK, NULL, &mask_before);
}

static bool same_action(const struct sigaction *a, const struct sigaction *b)
{
	if (a->sa_flags != b->sa_flags)
		return false;
	if ((a->sa_flags & SA_SIGINFO) ? a->sa_sigaction != b->sa_sigaction
				       : a->sa_handler != b->sa_handler)
		return false;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&a->sa_mask, s) != sigismember(&b->sa_mask, s))
			return false;
	return true;
}

static int changed_signals(const char *when)
{
	struct sigaction now;
	sigset_t mask;
	int changed = 0;

	for (int s = 1; s < NSIG; s++) {
		if (sigaction(s, NULL, &now) == 0 && !same_action(&now, &before[s])) {
			printf("%s: the action of signal %d (%s) changed\n", when, s, strsignal(s));
			changed++;
		}
	}
	pthread_sigmask(SIG_BLOCK, NULL, &mask);
	for (int s = 1; s < NSIG; s++) {
		if (sigismember(&mask, s) != sigismember(&mask_before, s)) {
			printf("%s: signal %d is %s blocked\n", when, s,
			       sigismember(&mask, s) ? "now" : "no longer");
			changed++;
		}
	}
	return changed;
}

static void *churn(void *arg)
{
	mine[(size_t)arg] = (pid_t)syscall(SYS_gettid);
	while (!atomic_load(&stop)) {
		void *p;
		if (cudaMalloc(&p, 4096) != cudaSuccess || cudaFree(p) != cudaSuccess) {
			printf("a CUDA call failed under signals\n");
			return (void *)1;
		}
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	void *p, *r1, *r2;
	int bad = 0;

	mine[0] = (pid_t)syscall(SYS_gettid);
	install();
	if (cudaMalloc(&p, 4096) != cudaSuccess)
		return 2;
	bad += changed_signals("after the first cudaMalloc");
	pthread_create(&t[0], NULL, churn, (void *)1);
	pthread_create(&t[1], NULL, churn, (void *)2);
	while (!mine[1] || !mine[2])
		usleep(100);
	/* one at a time: pending standard signals do not queue */
	for (int i = 0; i < KILLS; i++) {
		kill(getpid(), SIGUSR1);
		for (int wait = 0; wait < 1000 && atomic_load(&handled) <= i; wait++)
			usleep(1000);
	}
	atomic_store(&stop, true);
	pthread_join(t[0], &r1);
	pthread_join(t[1], &r2);
	bad += r1 != NULL || r2 != NULL;
	cudaFree(p);
	bad += changed_signals("at the end");
	printf("SIGUSR1: %d of %d handled, %d on a thread the program did not create\n",
	       atomic_load(&handled), KILLS, atomic_load(&foreign));
	bad += atomic_load(&handled) != KILLS || atomic_load(&foreign) != 0;
	return bad ? 1 : 0;
}
