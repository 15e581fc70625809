/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * replay: a main() for fuzz targets built without libFuzzer. Feeds every file named on the
 * command line (directories are walked one level) to LLVMFuzzerTestOneInput and prints a TAP
 * line per file, so the corpus runs as part of the tests.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int n;

static void replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		printf("not ok %d - %s: cannot open\n", ++n, path);
		return;
	}
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 4096;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		size_t k = fread(buf + len, 1, cap - len, f);
		if (k == 0)
			break;
		len += k;
	}
	fclose(f);
	/* An exact-size copy, so ASan sees reads past the end of the input. */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact)
		abort();
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	printf("ok %d - %s\n", ++n, path);
}

static void replay_path(const char *arg)
{
	struct stat st;

	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
		DIR *d = opendir(arg);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char path[4096];
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", arg, de->d_name);
			replay_file(path);
		}
		if (d)
			closedir(d);
	} else
		replay_file(arg);
}

int main(int argc, char **argv)
{
#ifdef CORPUS_DIR
	if (argc == 1)
		replay_path(CORPUS_DIR); /* run from the source root, as tests/run does */
#endif
	for (int i = 1; i < argc; i++)
		replay_path(argv[i]);
	printf("1..%d\n", n);
	return n > 0 ? 0 : 1; /* an empty corpus is a broken test */
}
