/* fork-gate.c without preload: fork waits for memtrace's calls that hold
 * the loader's lock, and the child can then use the loader. The fork
 * handlers are registered here as preload.c registers them (around its
 * own locks). */
#include <check.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

static atomic_int in_callback, left_callback, entered;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Inside dl_iterate_phdr, the loader's write lock held: linger. */
static int linger(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)info;
	(void)size;
	(void)data;
	atomic_store(&in_callback, 1);
	sleep_ms(200);
	atomic_store(&left_callback, 1);
	return 1; /* the first object is enough */
}

static void *iterate(void *arg)
{
	(void)arg;
	mt_dl_iterate_phdr(linger, NULL);
	return NULL;
}

static void *enter_and_leave(void *arg)
{
	(void)arg;
	mt_fork_gate_enter();
	atomic_store(&entered, 1);
	mt_fork_gate_leave();
	return NULL;
}

static void wait_in_callback(void)
{
	while (!atomic_load(&in_callback))
		sleep_ms(1);
}

static int count_objects(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)info;
	(void)size;
	(*(int *)data)++;
	return 0;
}

static void gate_close(void)
{
	mt_fork_gate_close();
}
static void gate_open_parent(void)
{
	mt_fork_gate_open(false);
}
static void gate_open_child(void)
{
	mt_fork_gate_open(true);
}

START_TEST(close_waits_for_a_call_inside)
{
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, iterate, NULL), 0);
	wait_in_callback();
	mt_fork_gate_close();
	ck_assert_int_eq(atomic_load(&left_callback), 1);
	mt_fork_gate_open(false);
	pthread_join(t, NULL);
}
END_TEST

START_TEST(a_closed_gate_holds_a_new_call)
{
	mt_fork_gate_close();
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, enter_and_leave, NULL), 0);
	sleep_ms(100);
	ck_assert_int_eq(atomic_load(&entered), 0);
	mt_fork_gate_open(false);
	pthread_join(t, NULL);
	ck_assert_int_eq(atomic_load(&entered), 1);
}
END_TEST

/* The forking thread inside the gate itself (nested, too) is not waited
 * for: the close returns. */
START_TEST(the_closer_inside_is_not_waited_for)
{
	mt_fork_gate_enter();
	mt_fork_gate_enter();
	mt_fork_gate_close();
	mt_fork_gate_open(false);
	mt_fork_gate_leave();
	mt_fork_gate_leave();
	/* balanced: a close with nobody inside returns at once */
	mt_fork_gate_close();
	mt_fork_gate_open(false);
}
END_TEST

/* The finding itself (tests/reliability/FINDINGS.md F16): a fork while
 * another thread is inside dl_iterate_phdr. With the gate in fork's
 * handlers, the child's own dl_iterate_phdr returns; without them, it
 * waits forever for a lock held by a thread the child does not have
 * (here: killed by its alarm). */
START_TEST(the_child_can_use_the_loader)
{
	ck_assert_int_eq(pthread_atfork(gate_close, gate_open_parent, gate_open_child), 0);
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, iterate, NULL), 0);
	wait_in_callback();
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		signal(SIGALRM, SIG_DFL); /* not Check's timeout handler */
		alarm(5);
		int n = 0;
		dl_iterate_phdr(count_objects, &n);
		/* the raw exit: under ThreadSanitizer, _exit would report the
		 * parent's thread as leaked and change the status */
		syscall(SYS_exit_group, n > 0 ? 0 : 1);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the child %s", WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ?
				      "hung in dl_iterate_phdr" : "failed");
	pthread_join(t, NULL);
}
END_TEST

Suite *fork_gate_suite(void);

Suite *fork_gate_suite(void)
{
	Suite *s = suite_create("fork-gate");
	TCase *tc = tcase_create("fork-gate");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, close_waits_for_a_call_inside);
	tcase_add_test(tc, a_closed_gate_holds_a_new_call);
	tcase_add_test(tc, the_closer_inside_is_not_waited_for);
	tcase_add_test(tc, the_child_can_use_the_loader);
	suite_add_tcase(s, tc);
	return s;
}
