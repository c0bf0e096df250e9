/* SPDX-License-Identifier: MIT */
/*
 * Two MPI ranks: MPI_Allreduce (sum and max) over arrays whose result is
 * known, then point-to-point ping-pongs of 1 B to 4 MiB with every byte
 * checked, then timings: the one-way latency of 8 B messages and the
 * bandwidth of 1 MiB messages.  Rank 0 prints "mpich_check: data ok" and
 * the figures; any mismatch aborts with a non-zero exit.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LEN (4u << 20)
#define N_ELEMS 65536

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)((i * 31u + seed * 7u) ^ (i >> 8));
}

static void die(const char *what, size_t at)
{
	fprintf(stderr, "mpich_check: %s (at %zu)\n", what, at);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check_allreduce(int rank, int size)
{
	int64_t *in = malloc(N_ELEMS * sizeof(*in));
	int64_t *out = malloc(N_ELEMS * sizeof(*out));

	if (!in || !out)
		die("out of memory", 0);
	for (int64_t i = 0; i < N_ELEMS; i++)
		in[i] = i * (rank + 1) + rank;
	MPI_Allreduce(in, out, N_ELEMS, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (int64_t i = 0; i < N_ELEMS; i++) {
		int64_t want = 0;

		for (int r = 0; r < size; r++)
			want += i * (r + 1) + r;
		if (out[i] != want)
			die("allreduce sum wrong", (size_t)i);
	}
	MPI_Allreduce(in, out, N_ELEMS, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
	for (int64_t i = 0; i < N_ELEMS; i++)
		if (out[i] != i * size + (size - 1))
			die("allreduce max wrong", (size_t)i);
	free(in);
	free(out);
}

static void check_p2p(int rank, unsigned char *buf, unsigned char *want)
{
	int peer = !rank;

	for (size_t len = 1; len <= MAX_LEN; len *= 4) {
		unsigned int seed = (unsigned int)len;

		if (rank == 0) {
			fill(buf, len, seed);
			MPI_Send(buf, (int)len, MPI_BYTE, peer, 1,
				 MPI_COMM_WORLD);
			memset(buf, 0, len);
			MPI_Recv(buf, (int)len, MPI_BYTE, peer, 2,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			fill(want, len, seed + 1);
		} else {
			MPI_Recv(buf, (int)len, MPI_BYTE, peer, 1,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			fill(want, len, seed);
			if (memcmp(buf, want, len))
				die("received data differs", len);
			fill(buf, len, seed + 1);
			MPI_Send(buf, (int)len, MPI_BYTE, peer, 2,
				 MPI_COMM_WORLD);
			continue;
		}
		if (memcmp(buf, want, len))
			die("returned data differs", len);
	}
}

static double pingpong_us(int rank, unsigned char *buf, int len, int iters)
{
	int peer = !rank;
	double t0;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++) {
		if (rank == 0) {
			MPI_Send(buf, len, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
			MPI_Recv(buf, len, MPI_BYTE, peer, 3, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, len, MPI_BYTE, peer, 3, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(buf, len, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - t0) * 1e6 / iters / 2;
}

/* Rank 0 streams `iters` messages, rank 1 acknowledges the last. */
static double bandwidth_mbs(int rank, unsigned char *buf, int len, int iters)
{
	MPI_Request req[16];
	MPI_Status st[16];
	double t0;
	char ack = 0;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int i = 0; i < iters; i += 16) {
		for (int j = 0; j < 16; j++) {
			if (rank == 0)
				MPI_Isend(buf, len, MPI_BYTE, 1, 4,
					  MPI_COMM_WORLD, &req[j]);
			else
				MPI_Irecv(buf, len, MPI_BYTE, 0, 4,
					  MPI_COMM_WORLD, &req[j]);
		}
		MPI_Waitall(16, req, st);
	}
	if (rank == 0)
		MPI_Recv(&ack, 1, MPI_BYTE, 1, 5, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	else
		MPI_Send(&ack, 1, MPI_BYTE, 0, 5, MPI_COMM_WORLD);
	return (double)len * (iters / 16 * 16) / (MPI_Wtime() - t0) / 1e6;
}

int main(int argc, char **argv)
{
	unsigned char *buf, *want;
	double lat, bw;
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "mpich_check: run 2 ranks\n");
		MPI_Finalize();
		return 1;
	}
	buf = malloc(MAX_LEN);
	want = malloc(MAX_LEN);
	if (!buf || !want)
		die("out of memory", 0);
	check_allreduce(rank, size);
	check_p2p(rank, buf, want);
	lat = pingpong_us(rank, buf, 8, 2000);
	bw = bandwidth_mbs(rank, buf, 1 << 20, 256);
	if (rank == 0)
		printf("mpich_check: data ok; allreduce ok; latency 8 B %.2f "
		       "us; bandwidth 1 MiB %.0f MB/s\n",
		       lat, bw);
	free(buf);
	free(want);
	MPI_Finalize();
	return 0;
}
