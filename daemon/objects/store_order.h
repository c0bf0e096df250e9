/* SPDX-License-Identifier: MIT */
/*
 * Writing into a client's mapped memory the way a NIC's DMA does: every
 * destination byte is stored exactly once, in ascending address order,
 * and each aligned 8-byte word with one store.
 *
 * memcpy promises none of this.  For short and unaligned lengths it
 * stores overlapping vectors (16 bytes are stored twice), and for long
 * ones it may go backwards or use weakly ordered stores.  A client that
 * sees the first store, acts on it and changes those bytes (rsockets
 * consumes a credit SGE the peer wrote and advances it in place) has its
 * change overwritten by the second store: with a vCPU preempted between
 * the two, that window is milliseconds wide.  And programs that poll the
 * last bytes of a buffer (a flag after the data) need those bytes to
 * land last.
 */
#ifndef SRD_STORE_ORDER_H
#define SRD_STORE_ORDER_H

#include <stddef.h>

/* Copy n bytes from src (daemon memory or a mapping) to dst (a client's
 * mapping), dst and src not overlapping; stores as described above. */
void srd_store_ordered(void *dst, const void *src, size_t n);

#endif
