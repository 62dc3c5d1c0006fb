// SPDX-License-Identifier: MIT
/* Which swap readahead the kernel does (swapra.h). */
#include <ctype.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "swapra.h"

enum swapra_kind swapra_kind_of(int page_cluster, bool vma_ra_enabled, bool rotational_on)
{
	if (page_cluster <= 0)
		return SWAPRA_OFF;
	return vma_ra_enabled && !rotational_on ? SWAPRA_VMA : SWAPRA_CLUSTER;
}

uint32_t swapra_max_pages(enum swapra_kind kind, int page_cluster)
{
	if (kind == SWAPRA_OFF || page_cluster <= 0 || page_cluster > 30)
		return 0;
	/* swap_vma_ra_win() caps its window at SWAP_RA_ORDER_CEILING (5 on
	 * 64-bit); swapin_nr_pages() for slot clusters does not. */
	if (kind == SWAPRA_VMA && page_cluster > 5)
		page_cluster = 5;
	return 1u << page_cluster;
}

bool swapra_area_path(const char *swaps_text, int nth, char *out, size_t len)
{
	const char *line = strchr(swaps_text, '\n'); /* past the header */
	size_t n = 0;

	for (int i = 0; line && i < nth; i++)
		line = strchr(line + 1, '\n');
	if (!line || !line[1] || len == 0)
		return false;
	for (const char *p = line + 1; *p && *p != ' ' && *p != '\t' && *p != '\n'; p++) {
		char c = *p;

		if (c == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' &&
		    p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
			c = (char)((p[1] - '0') << 6 | (p[2] - '0') << 3 | (p[3] - '0'));
			p += 3;
		}
		if (n + 1 < len)
			out[n++] = c;
	}
	out[n] = '\0';
	return n > 0;
}

static int read_int(const char *path, int *v)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%d", v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

int swapra_page_cluster(void)
{
	int pc;

	return read_int("/proc/sys/vm/page-cluster", &pc) == 0 && pc > 0 ? pc : 0;
}

bool swapra_dev_synchronous(const char *name)
{
	static const char *const prefixes[] = {"zram", "ram", "pmem"};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t n = strlen(prefixes[i]);

		if (strncmp(name, prefixes[i], n) == 0 && isdigit((unsigned char)name[n]))
			return true;
	}
	return false;
}

/* The block device the area at path lies on (the device itself, or a swap
 * file's filesystem's), as /sys/dev/block/MAJ:MIN; false if none. */
static bool area_sysfs(const char *path, char *sys, size_t len)
{
	struct stat st;
	dev_t dev;

	if (stat(path, &st))
		return false;
	dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	snprintf(sys, len, "/sys/dev/block/%u:%u", major(dev), minor(dev));
	return access(sys, F_OK) == 0;
}

/* Whether the area at path lies on a rotational block device: 1, 0, or -1
 * unknown (a filesystem on no single block device). */
static int area_rotational(const char *path)
{
	char dev[64], sys[96];
	int v;

	if (!area_sysfs(path, dev, sizeof(dev)))
		return -1;
	snprintf(sys, sizeof(sys), "%s/queue/rotational", dev);
	if (read_int(sys, &v) == 0)
		return v;
	/* A partition: the queue is its disk's, one directory up. */
	snprintf(sys, sizeof(sys), "%s/../queue/rotational", dev);
	return read_int(sys, &v) == 0 ? v : -1;
}

/* Whether the area at path lies on a synchronous device (a partition's
 * name carries its disk's: zram0p1 is zram's). */
static bool area_synchronous(const char *path)
{
	char dev[64], target[PATH_MAX];
	ssize_t n;

	if (!area_sysfs(path, dev, sizeof(dev)))
		return false;
	n = readlink(dev, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return swapra_dev_synchronous(basename(target));
}

void swapra_probe(struct swapra *out)
{
	char text[8192], path[sizeof(out->rotational)];
	int page_cluster = swapra_page_cluster();
	bool vma = false;
	size_t n = 0;
	FILE *f;

	memset(out, 0, sizeof(*out));
	f = fopen("/sys/kernel/mm/swap/vma_ra_enabled", "re");
	if (f) {
		char word[8] = "";

		vma = fgets(word, sizeof(word), f) && strncmp(word, "true", 4) == 0;
		fclose(f);
	}
	f = fopen("/proc/swaps", "re");
	if (f) {
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
	}
	text[n] = '\0';
	for (int i = 0; swapra_area_path(text, i, path, sizeof(path)); i++) {
		out->areas++;
		if (!out->rotational[0] && area_rotational(path) == 1)
			snprintf(out->rotational, sizeof(out->rotational), "%s", path);
		if (area_synchronous(path) && !out->synchronous_areas++)
			snprintf(out->synchronous, sizeof(out->synchronous), "%s", path);
	}
	out->kind = swapra_kind_of(page_cluster, vma, out->rotational[0] != '\0');
	out->max_pages = swapra_max_pages(out->kind, page_cluster);
}

void swapra_describe(const struct swapra *ra, char *out, size_t len)
{
	size_t used;

	if (ra->areas && ra->synchronous_areas == ra->areas) {
		snprintf(out, len,
			 "none: swap area %s is on a synchronous device, whose "
			 "swap-ins skip the swap cache and its readahead",
			 ra->synchronous);
		return;
	}
	switch (ra->kind) {
	case SWAPRA_OFF:
		snprintf(out, len, "off (vm.page-cluster 0)");
		break;
	case SWAPRA_VMA:
		snprintf(out, len, "VMA-based, up to %u pages%s", ra->max_pages,
			 ra->areas ? "" : " (no swap area on yet)");
		break;
	case SWAPRA_CLUSTER:
		if (ra->rotational[0])
			snprintf(out, len,
				 "swap-slot clusters, up to %u pages (rotational swap "
				 "area %s)",
				 ra->max_pages, ra->rotational);
		else
			snprintf(out, len,
				 "swap-slot clusters, up to %u pages (vma_ra_enabled "
				 "false)",
				 ra->max_pages);
		break;
	}
	used = strlen(out);
	if (ra->synchronous_areas && used < len)
		snprintf(out + used, len - used, "; none from %s (a synchronous device)",
			 ra->synchronous);
}
