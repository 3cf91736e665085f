/* PyTorch's autograd engine, torch::autograd::Engine::execute (exported
 * by libtorch_cpu.so, imported by libtorch_python.so, which calls it
 * through its PLT from PythonEngine::execute): loss.backward() and
 * torch.autograd.grad() reach it from THPEngine_run_backward with the GIL
 * released. A graph on a CUDA device runs on autograd's device thread,
 * which has no Python state, while the calling thread waits inside this
 * call; the gradients made there would hold no Python line. So the
 * caller publishes its Python frames for the time of the call, as for
 * TensorFlow's TFE_Execute (tensorflow.c; carry/python-launch.c;
 * docs/architecture.md, "Frames borrowed from the launching thread").
 *
 * The library is C: the member function is declared by its mangled name,
 * in the Itanium C++ ABI's convention on x86-64. It returns a
 * std::vector<at::Tensor>, not trivially copyable, so the caller passes
 * the address of the result first, then `this`, then the parameters
 * (roots and inputs and outputs by reference, three bools), and gets that
 * address back. Engine::execute throws (an error in a backward function,
 * torch's OutOfMemoryError): this file is built with -fexceptions, so the
 * cleanup below unpublishes the frames while the exception passes.
 *
 * Engine::thread_init starts each of autograd's device threads (from
 * PythonEngine::thread_init, through libtorch_python.so's PLT too, after
 * it gave the thread its Python state) and runs the thread's loop until
 * the process ends. The thread is marked a worker: when it runs Python
 * for the graph (a __torch_dispatch__ mode such as torch's MemTracker, a
 * Python autograd Function), its stacks get the caller's frames after its
 * own, which are torch's.
 * Part of PyTorch's adapter (torch.c; its row of frameworks.def exports
 * both). */
#include "frameworks.h"
#include "python.h"

#include <stdbool.h>

#define ENGINE_EXECUTE                                                                        \
	_ZN5torch8autograd6Engine7executeERKSt6vectorINS0_4EdgeESaIS3_EERKS2_IN2at6TensorESaIS9_\
EEbbbS7_
#define ENGINE_THREAD_INIT _ZN5torch8autograd6Engine11thread_initEiRKSt10shared_ptrINS0_10ReadyQueueEEb
#define STR_(x) #x
#define STR(x) STR_(x)

typedef void *(*engine_execute_fn)(void *result, void *engine, const void *roots,
				   const void *inputs, bool keep_graph, bool create_graph,
				   bool accumulate_grad, const void *outputs);

MT_EXPORT void *ENGINE_EXECUTE(void *result, void *engine, const void *roots, const void *inputs,
			       bool keep_graph, bool create_graph, bool accumulate_grad,
			       const void *outputs);

typedef void (*engine_thread_init_fn)(void *engine, int device, const void *ready_queue,
				      bool should_increment);

MT_EXPORT void ENGINE_THREAD_INIT(void *engine, int device, const void *ready_queue,
				  bool should_increment);

static engine_execute_fn _Atomic real_execute_ptr;

static engine_execute_fn real_execute(void)
{
	engine_execute_fn fn = atomic_load_explicit(&real_execute_ptr, memory_order_relaxed);
	if (MT_LIKELY(fn != NULL))
		return fn;
	fn = (engine_execute_fn)mt_framework_loaded(STR(ENGINE_EXECUTE), (void *)ENGINE_EXECUTE);
	if (fn)
		atomic_store_explicit(&real_execute_ptr, fn, memory_order_relaxed);
	return fn;
}

/* run on return and while an exception unwinds this frame */
static void leave(bool *entered)
{
	if (*entered)
		mt_launch_leave();
}

MT_EXPORT void *ENGINE_EXECUTE(void *result, void *engine, const void *roots, const void *inputs,
			       bool keep_graph, bool create_graph, bool accumulate_grad,
			       const void *outputs)
{
	engine_execute_fn fn = real_execute();
	if (MT_UNLIKELY(!fn))
		return result; /* cannot be: only torch's libraries call it */
	__attribute__((cleanup(leave))) bool entered = false;
	mt_launch_enter();
	entered = true;
	return fn(result, engine, roots, inputs, keep_graph, create_graph, accumulate_grad,
		  outputs);
}

MT_EXPORT void ENGINE_THREAD_INIT(void *engine, int device, const void *ready_queue,
				  bool should_increment)
{
	engine_thread_init_fn fn = (engine_thread_init_fn)mt_framework_loaded(
		STR(ENGINE_THREAD_INIT), (void *)ENGINE_THREAD_INIT);

	if (MT_UNLIKELY(!fn))
		return; /* cannot be: only torch's libraries call it */
	mt_launch_worker();
	fn(engine, device, ready_queue, should_increment);
}
