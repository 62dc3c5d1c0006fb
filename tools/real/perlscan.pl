#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# Perl program for tools/bench-real.sh: a string filled, then scanned.
#
#     perlscan.pl MIB STRIDE
#
# Fill: a MIB MiB string of zero bytes, then one byte written per page in
# order (a read-modify-write stream past the memory limit).  Scan: one byte
# read per page, STRIDE pages apart, STRIDE passes (every page once), each
# checked against the fill.  Prints one JSON line; exits 3 on a wrong byte.
use strict;
use warnings;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);

my ($mib, $k) = @ARGV;
die "usage: perlscan.pl MIB STRIDE\n" unless defined $k && $mib > 0 && $k > 0;
my $n = $mib * 256;
my $t0 = clock_gettime(CLOCK_MONOTONIC);
my $s = "\0" x ($mib << 20);
vec($s, $_ << 12, 8) = ($_ * 7 + 1) & 0xff for 0 .. $n - 1;
my $t1 = clock_gettime(CLOCK_MONOTONIC);
my $bad = 0;
for my $start (0 .. $k - 1) {
	for (my $i = $start; $i < $n; $i += $k) {
		$bad++ if vec($s, $i << 12, 8) != (($i * 7 + 1) & 0xff);
	}
}
my $t2 = clock_gettime(CLOCK_MONOTONIC);
printf "{\"phases\": {\"fill\": %.6f, \"scan\": %.6f}, \"bad\": %d}\n", $t1 - $t0, $t2 - $t1, $bad;
exit($bad ? 3 : 0);
