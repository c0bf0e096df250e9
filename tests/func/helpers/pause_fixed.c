/* SPDX-License-Identifier: MIT */
/* A program whose image sits at a fixed address (built static, not
 * position-independent: its ELF header is mapped at 0x400000), which
 * waits to be killed.  func.exec_mem runs a set-uid-root copy of it. */
#include <unistd.h>

int main(void)
{
	for (;;)
		pause();
}
