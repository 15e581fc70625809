/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/openloop: the cost of one open + close of a file, for bench/overhead to run bare and
 * inside sandlock (where opens may be trapped to the supervisor).
 *
 *   openloop PATH [N]    N open(O_RDONLY) + close of PATH; prints the median nanoseconds per
 *                        pair over batches of 100
 */
#include <fcntl.h>

#include "bench.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: openloop PATH [N]\n");
		return 2;
	}
	size_t n = argc > 2 ? (size_t)atol(argv[2]) : 5000, batch = 100, nb = n / batch;
	double *ns = calloc(nb ? nb : 1, sizeof(*ns));

	for (size_t b = 0; ns && b < nb; b++) {
		int64_t t0 = bench_now_ns();
		for (size_t i = 0; i < batch; i++) {
			int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				perror(argv[1]);
				return 1;
			}
			close(fd);
		}
		ns[b] = (double)(bench_now_ns() - t0) / (double)batch;
	}
	if (!ns || !nb)
		return 1;
	qsort(ns, nb, sizeof(*ns), bench_cmp_double);
	printf("%.0f\n", ns[nb / 2]);
	free(ns);
	return 0;
}
