// SPDX-License-Identifier: MIT
/*
 * Node.js program for tools/bench-real.sh: a heap of linked objects, a
 * full collection, then a walk of the links.
 *
 *     node --expose-gc --max-old-space-size=<MiB> gcwalk.js MIB
 *
 * Build: MIB MiB of objects (each an array of 64 numbers and a link to the
 * next, allocated in order) on V8's heap.  GC: global.gc(), a full
 * mark-compact of the whole heap.  Walk: the list followed from its head,
 * summing each array's first value.  Prints one JSON line with the phase
 * times; exits 3 if the sum is wrong.
 */
'use strict';
const mib = Number(process.argv[2]);
const n = Math.floor((mib * 1024 * 1024) / (64 * 8 + 64));
const now = () => Number(process.hrtime.bigint()) / 1e9;
const t0 = now();
const head = { payload: new Array(64).fill(0.5), next: null };
head.payload[0] = 0;
let tail = head;
for (let i = 1; i < n; i++) {
	const x = { payload: new Array(64).fill(0.5), next: null };
	x.payload[0] = i;
	tail.next = x;
	tail = x;
}
const t1 = now();
global.gc();
const t2 = now();
let sum = 0;
for (let x = head; x !== null; x = x.next) sum += x.payload[0];
const t3 = now();
const ok = sum === (n * (n - 1)) / 2;
console.log(JSON.stringify({ phases: { build: t1 - t0, gc: t2 - t1, walk: t3 - t2 }, bad: ok ? 0 : 1 }));
process.exit(ok ? 0 : 3);
