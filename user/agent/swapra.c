// SPDX-License-Identifier: MIT
/* Which swap readahead the kernel does (swapra.h). */
#include <stdio.h>
#include <string.h>
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

/* Whether the area at path lies on a rotational block device: 1, 0, or -1
 * unknown (a filesystem on no single block device). */
static int area_rotational(const char *path)
{
	char sys[96];
	struct stat st;
	dev_t dev;
	int v;

	if (stat(path, &st))
		return -1;
	dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/queue/rotational", major(dev),
		 minor(dev));
	if (read_int(sys, &v) == 0)
		return v;
	/* A partition: the queue is its disk's, one directory up. */
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/../queue/rotational", major(dev),
		 minor(dev));
	return read_int(sys, &v) == 0 ? v : -1;
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
	}
	out->kind = swapra_kind_of(page_cluster, vma, out->rotational[0] != '\0');
	out->max_pages = swapra_max_pages(out->kind, page_cluster);
}

void swapra_describe(const struct swapra *ra, char *out, size_t len)
{
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
}
