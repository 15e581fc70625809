/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/connect: the cost of one TCP connect to a loopback listener, for bench/net to run bare
 * and inside sandlock (direct rule: Landlock; on-behalf rule: the supervisor connects).
 *
 *   connect PORT [N]    N connect + close to 127.0.0.1:PORT; prints the median, p10 and p90
 *                       microseconds per connect over batches of 50
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "bench.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: connect PORT [N]\n");
		return 2;
	}
	int port = atoi(argv[1]);
	size_t n = argc > 2 ? (size_t)atol(argv[2]) : 2000, batch = 50, nb = n / batch;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	double *us = calloc(nb ? nb : 1, sizeof(*us));

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	for (size_t b = 0; b < nb; b++) {
		int64_t t0 = bench_now_ns();
		for (size_t i = 0; i < batch; i++) {
			int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
				perror("connect");
				return 1;
			}
			close(fd);
		}
		us[b] = (double)(bench_now_ns() - t0) / 1000.0 / (double)batch;
	}
	struct bench_stats st = bench_stats_of(us, nb);
	printf("%.2f %.2f %.2f\n", st.median, st.p10, st.p90);
	free(us);
	return 0;
}
