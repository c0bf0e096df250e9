/* SPDX-License-Identifier: MIT */
/*
 * Two MPI ranks: messages of 1 B to 4 MiB (20 of each size) from rank 0
 * to rank 1, which adds one to every byte and sends them back; rank 0
 * checks every byte.  Then 10000 one-int round trips, timed.  Prints
 * "mpi_pingpong: data ok" (or "BAD") and the half round trip; exits 1 on
 * bad data.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 20
#define LAT_ITERS 10000

static unsigned char pattern(int i, int it, int len)
{
	return (unsigned char)(i * 7 + it + len);
}

static int exchange(int rank, int len)
{
	unsigned char *b = malloc((size_t)len);
	int bad = 0;

	if (!b)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int it = 0; it < ROUNDS; it++) {
		if (rank == 0) {
			for (int i = 0; i < len; i++)
				b[i] = pattern(i, it, len);
			MPI_Send(b, len, MPI_BYTE, 1, it, MPI_COMM_WORLD);
			MPI_Recv(b, len, MPI_BYTE, 1, it, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			for (int i = 0; i < len && !bad; i++)
				bad = b[i] !=
				      (unsigned char)(pattern(i, it, len) + 1);
		} else {
			MPI_Recv(b, len, MPI_BYTE, 0, it, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			for (int i = 0; i < len; i++)
				b[i]++;
			MPI_Send(b, len, MPI_BYTE, 0, it, MPI_COMM_WORLD);
		}
	}
	free(b);
	return bad;
}

int main(int argc, char **argv)
{
	int rank, bad = 0, x = 0;
	double t0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int len = 1; len <= (4 << 20); len *= 4)
		bad += exchange(rank, len);
	t0 = MPI_Wtime();
	for (int it = 0; it < LAT_ITERS; it++) {
		if (rank == 0) {
			MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			x++;
			MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
		}
	}
	if (rank == 0) {
		if (x != LAT_ITERS)
			bad++;
		printf("mpi_pingpong: %s, half round trip %.2f us\n",
		       bad ? "BAD" : "data ok",
		       (MPI_Wtime() - t0) / LAT_ITERS / 2 * 1e6);
	}
	MPI_Finalize();
	return bad != 0;
}
