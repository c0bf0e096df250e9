/* SPDX-License-Identifier: MIT */
/*
 * The device writes into mapped client memory as a NIC's DMA does: each
 * byte once, in ascending order (daemon/objects/store_order.h).  The
 * stores are traced: the destination page is read-only, every store
 * faults, the SIGSEGV handler records its address, opens the page and
 * single-steps the store (x86's trap flag), and the SIGTRAP handler
 * closes the page again.  A store seen twice at one address, or a lower
 * address after a higher one, fails.  It traces mr_write(), the path an
 * RDMA WRITE, a SEND or a READ response takes into a mapped MR: with a
 * plain memcpy there a 16-byte write (an rsockets credit SGE) is stored
 * twice, and a client that consumed the first store has its update
 * overwritten by the second.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "daemon/core/objects.h"
#include "daemon/objects/store_order.h"
#include "t_assert.h"

#if defined(__x86_64__)

#define MAX_STORES 1024
#define TRAP_FLAG 0x100

static uint8_t *page;
static size_t page_len;
static uintptr_t stores[MAX_STORES];
static volatile unsigned int nstores;

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uintptr_t a = (uintptr_t)si->si_addr;

	(void)sig;
	if (a < (uintptr_t)page || a >= (uintptr_t)page + page_len)
		_exit(T_EXIT_FAIL); /* a real fault */
	if (nstores < MAX_STORES)
		stores[nstores] = a;
	nstores++;
	mprotect(page, page_len, PROT_READ | PROT_WRITE);
	uc->uc_mcontext.gregs[REG_EFL] |= TRAP_FLAG;
}

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	mprotect(page, page_len, PROT_READ);
	uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)TRAP_FLAG;
}

typedef void (*copy_fn)(uint8_t *dst, const uint8_t *src, size_t n);

/* Run one copy with its stores traced; 0 when they were ascending, each
 * address once, and the bytes right. */
static int traced(copy_fn fn, size_t off, size_t n, const uint8_t *src,
		  bool quiet)
{
	memset(page, 0xee, page_len);
	nstores = 0;
	mprotect(page, page_len, PROT_READ);
	fn(page + off, src, n);
	mprotect(page, page_len, PROT_READ | PROT_WRITE);
	if (memcmp(page + off, src, n) || (off && page[off - 1] != 0xee) ||
	    page[off + n] != 0xee) {
		if (!quiet)
			fprintf(stderr, "copy of %zu at +%zu: wrong bytes\n", n,
				off);
		return -1;
	}
	if (nstores > MAX_STORES)
		return -1;
	for (unsigned int i = 1; i < nstores; i++) {
		if (stores[i] <= stores[i - 1]) {
			if (!quiet)
				fprintf(stderr,
					"copy of %zu at +%zu: store %u at +%zu "
					"after one at +%zu\n",
					n, off, i,
					(size_t)(stores[i] - (uintptr_t)page),
					(size_t)(stores[i - 1] -
						 (uintptr_t)page));
			return -1;
		}
	}
	return 0;
}

static void copy_ordered(uint8_t *dst, const uint8_t *src, size_t n)
{
	srd_store_ordered(dst, src, n);
}

/* mr_write() into a mapped MR whose iova differs from its address. */
static uint8_t *mr_dst;
static void copy_mr_write(uint8_t *dst, const uint8_t *src, size_t n)
{
	struct srd_mr mr = { 0 };

	mr.base = mr_dst;
	mr.iova = 0x5000000;
	mr.length = page_len;
	if (mr_write(&mr, mr.iova + (uint64_t)(dst - mr_dst), src, n))
		_exit(T_EXIT_FAIL);
}

static void copy_memcpy(uint8_t *dst, const uint8_t *src, size_t n)
{
	memcpy(dst, src, n);
}

int main(void)
{
	static const size_t sizes[] = { 1,  7,	8,  9,	15, 16,	 17,  24,
					31, 32, 33, 63, 64, 100, 257, 1000 };
	static const size_t offs[] = { 0, 1, 3, 8, 13 };
	struct sigaction sa = { .sa_flags = SA_SIGINFO };
	uint8_t src[1100];

	page_len = (size_t)sysconf(_SC_PAGESIZE);
	page = mmap(NULL, page_len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(page != MAP_FAILED);
	mr_dst = page;
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 1);
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = on_segv;
	T_ASSERT(!sigaction(SIGSEGV, &sa, NULL));
	sa.sa_sigaction = on_trap;
	T_ASSERT(!sigaction(SIGTRAP, &sa, NULL));

	/* Every length and alignment: the right bytes and nothing more. */
	for (size_t n = 0; n <= 300; n++)
		for (size_t off = 0; off < 16; off++) {
			memset(page, 0xee, page_len);
			srd_store_ordered(page + off, src + (n & 7), n);
			T_ASSERT(!memcmp(page + off, src + (n & 7), n));
			T_ASSERT(!off || page[off - 1] == 0xee);
			T_ASSERT(page[off + n] == 0xee);
		}

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (size_t j = 0; j < sizeof(offs) / sizeof(offs[0]); j++) {
			T_ASSERT(!traced(copy_ordered, offs[j], sizes[i], src,
					 false));
			T_ASSERT(!traced(copy_mr_write, offs[j], sizes[i],
					 src + 3, false));
		}
	/* The tracer sees what memcpy does with 16 bytes (here: two
	 * overlapping stores); informational, other C libraries differ. */
	printf("memcpy of 16 bytes stores %s\n",
	       traced(copy_memcpy, 0, 16, src, true) ? "out of order or twice"
						     : "once, ascending");
	printf("ok: every traced store ascending, each byte once\n");
	return T_EXIT_PASS;
}

#else

int main(void)
{
	printf("skip: the store tracer needs x86-64's trap flag\n");
	return T_EXIT_SKIP;
}

#endif
