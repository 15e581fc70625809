/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * check: the kernel's Landlock ABI, the minimum sandlock needs, and each protection with its
 * floor and availability. Exits 0 when a default (all strict) sandbox can run here.
 */
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#include "sandlock.h"

int verb_check(int argc, char **argv)
{
	if (argc > 1)
		return cli_usage_error("check");

	int abi = sandlock_landlock_abi_version();
	int min = sandlock_min_landlock_abi();

	if (abi < 0)
		printf("Landlock ABI: unavailable\n");
	else
		printf("Landlock ABI: %d\n", abi);
	printf("Minimum ABI: %d (every protection strict; 1 with every protection allowed to "
	       "degrade)\n\n",
	       min);
	/* Where workdir branches live (the library's store root, cow/store.c). */
	printf("Workdir branches: /var/tmp/sandlock-%u/ (out of every sandbox's grants; what a "
	       "killed run left in its workdir is taken away by the next run of it, or by "
	       "`sandlock ps`)\n\n",
	       (unsigned)geteuid());
	printf("%-26s %-6s %s\n", "PROTECTION", "FLOOR", "STATUS");
	for (uint32_t p = 0; p < SANDLOCK_PROTECTION_COUNT; p++) {
		int floor = sandlock_protection_abi_floor(p);
		printf("%-26s v%-5d %s\n", sandlock_protection_name(p), floor,
		       abi >= floor ? "available" : "unavailable");
	}
	if (abi < min) {
		printf("\nA default sandbox cannot run here; allow the missing protections to "
		       "degrade (--allow-degraded) or disable them (--disable).\n");
		return 1;
	}
	printf("\nA default sandbox can run here.\n");
	return 0;
}
