// endings-cxx: the endings of endings.c that only C++ has. Allocations and
// an out-of-memory failure as in endings.c (3 x 1 MiB, then 2 TiB), "ending
// MODE" on stdout, a sleep of SLEEP_MS, then:
//   throw     an exception nobody catches (std::terminate, then SIGABRT)
//   noexcept  an exception thrown through a noexcept function (same)
#include <cuda_runtime_api.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

static void *held[3];

static __attribute__((noinline)) void hold_buffers()
{
	for (auto &p : held)
		if (cudaMalloc(&p, std::size_t(1) << 20) != cudaSuccess)
			std::exit(2);
}

static __attribute__((noinline)) void too_much()
{
	void *p;
	if (cudaMalloc(&p, std::size_t(2) << 40) != cudaErrorMemoryAllocation)
		std::exit(2);
	cudaGetLastError();
}

static void thrower()
{
	throw std::runtime_error("nobody catches this");
}

static void wall() noexcept
{
	thrower();
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		std::fprintf(stderr, "usage: endings-cxx throw|noexcept [SLEEP_MS]\n");
		return 64;
	}
	hold_buffers();
	too_much();
	std::printf("ending %s\n", argv[1]);
	std::fflush(stdout);
	if (argc > 2)
		std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(argv[2])));
	if (!std::strcmp(argv[1], "throw"))
		thrower();
	if (!std::strcmp(argv[1], "noexcept"))
		wall();
	std::fprintf(stderr, "endings-cxx: unknown mode %s\n", argv[1]);
	return 64;
}
