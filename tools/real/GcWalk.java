// SPDX-License-Identifier: MIT
/*
 * Java program for tools/bench-real.sh: a heap of linked nodes, a full
 * collection, then a walk of the links.
 *
 *     java -Xms<heap> -Xmx<heap> GcWalk.java MIB
 *
 * Build: MIB MiB of nodes (each a long[64] payload and a link to the next
 * node, allocated in order).  GC: System.gc(), a full collection of the
 * whole heap (G1's full GC marks and compacts every live object).  Walk:
 * the list followed from its head, summing each payload's first value.
 * Prints one JSON line with the phase times; exits 3 if the sum is wrong.
 */
public class GcWalk {
	static final class Node {
		final long[] payload = new long[64];
		Node next;
	}

	public static void main(String[] args) {
		int mib = Integer.parseInt(args[0]);
		long n = (long) mib * 1024 * 1024 / (64 * 8 + 48);
		long t0 = System.nanoTime();
		Node head = new Node(), tail = head;
		head.payload[0] = 0;
		for (long i = 1; i < n; i++) {
			Node x = new Node();
			x.payload[0] = i;
			tail.next = x;
			tail = x;
		}
		long t1 = System.nanoTime();
		System.gc();
		long t2 = System.nanoTime();
		long sum = 0;
		for (Node x = head; x != null; x = x.next)
			sum += x.payload[0];
		long t3 = System.nanoTime();
		long want = n * (n - 1) / 2;
		System.out.printf("{\"phases\": {\"build\": %.4f, \"gc\": %.4f, \"walk\": %.4f}, "
					  + "\"bad\": %d}%n",
				  (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t3 - t2) / 1e9,
				  sum == want ? 0 : 1);
		System.exit(sum == want ? 0 : 3);
	}
}
