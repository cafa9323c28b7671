/*
 * fuzz_main.h — the plain-program driver shared by the fuzz targets.
 *
 * Included at the end of a target's source. Built with -DSKED_LIBFUZZER
 * the target is a libFuzzer program and this adds nothing; otherwise it
 * is a main() that feeds every file named on the command line (or every
 * file in every folder named: the seed corpus in tests/fuzz/corpus/NAME)
 * to LLVMFuzzerTestOneInput once, so every build replays the corpus as a
 * CTest test. A finding aborts (the oracles call abort()).
 */
#ifndef SKED_LIBFUZZER
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

static int
fuzz_run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 1;
	}
	static uint8_t buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

int
main(int argc, char **argv)
{
	int bad = 0, ran = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			struct dirent *e;
			while (d && (e = readdir(d)) != NULL) {
				if (e->d_name[0] == '.')
					continue;
				char p[4096];
				snprintf(p, sizeof p, "%s/%s", argv[i],
				         e->d_name);
				bad |= fuzz_run_file(p);
				ran++;
			}
			if (d)
				closedir(d);
		} else {
			bad |= fuzz_run_file(argv[i]);
			ran++;
		}
	}
	printf("%d input(s), no finding\n", ran);
	return bad || ran == 0;
}
#endif
