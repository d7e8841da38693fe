package sgr.launcher;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;

import com.sun.management.GarbageCollectionNotificationInfo;

import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.internal.kernel.api.connectioninfo.ClientConnectionInfo;
import org.neo4j.kernel.api.KernelTransactionHandle;
import org.neo4j.kernel.api.TerminationMark;
import org.neo4j.kernel.api.exceptions.Status;
import org.neo4j.kernel.api.net.NetworkConnectionTracker;
import org.neo4j.kernel.api.net.TrackedNetworkConnection;
import org.neo4j.kernel.impl.api.KernelTransactions;
import org.neo4j.kernel.internal.GraphDatabaseAPI;

/**
 * Makes a transaction's deadline and the heap hold while Cypher evaluates one long or huge expression.
 *
 * <p>Neo4j stops a transaction past its timeout by marking it for termination; the query notices the mark only
 * when it next reads from the store. An expression such as {@code reduce(s = 0, i IN range(1, 3000000000) | s + i)}
 * reads nothing while it runs, so it carries on for minutes after Neo4j has listed it as terminated; string
 * doubling ({@code reduce(s = 'x', i IN range(1, 40) | s + s)}) fills the heap, which Neo4j's transaction memory
 * limits do not see (they count what operators hold, not expression values).
 *
 * <p>This thread looks at the open transactions every {@value #TICK_MILLIS} ms:
 * <ul>
 *   <li>one past its deadline is marked for termination; one still running Cypher {@code graceMillis} after its
 *       mark has its Bolt worker thread stopped ({@link Thread#stop()}, which unwinds the evaluation and rolls the
 *       transaction back) and its Bolt connection closed (the stopped worker cannot answer, so the client learns
 *       it from the closed connection);</li>
 *   <li>when the heap is still over {@code heapShare} full after a garbage collection (told by the collector's own
 *       notification, at once), the Bolt worker running Cypher that allocated the most since the last look is
 *       stopped the same way.</li>
 * </ul>
 * Only threads that serve a Bolt connection (a worker's name carries the connection id while it serves one) and
 * are inside Cypher's runtime at that moment are stopped; transactions without a deadline are left to run. Each
 * stop is logged as {@code SGR-NEO4J-REAPED}.
 */
final class QueryReaper implements Runnable {
    private static final long TICK_MILLIS = 100;
    private final KernelTransactions transactions;
    private final NetworkConnectionTracker connections;
    private final long graceNanos;
    private final double heapShare;
    private final Set<String> heapPools = new HashSet<>();
    private final com.sun.management.ThreadMXBean threadBean;
    private final Map<Long, Long> stoppedAt = new HashMap<>();
    private final Map<Long, Long> allocated = new HashMap<>();
    private long lastHeapStop;

    private QueryReaper(KernelTransactions transactions, NetworkConnectionTracker connections, long graceMillis,
                        double heapShare) {
        this.transactions = transactions;
        this.connections = connections;
        this.graceNanos = graceMillis * 1_000_000L;
        this.heapShare = heapShare;
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            if (p.getType() == MemoryType.HEAP) {
                heapPools.add(p.getName());
            }
        }
        java.lang.management.ThreadMXBean tb = ManagementFactory.getThreadMXBean();
        this.threadBean = tb instanceof com.sun.management.ThreadMXBean t ? t : null;
    }

    /** Start the reaper for {@code db} as a daemon thread. */
    static void start(GraphDatabaseService db, long graceMillis, double heapShare) {
        var deps = ((GraphDatabaseAPI) db).getDependencyResolver();
        KernelTransactions txs = deps.resolveDependency(KernelTransactions.class);
        NetworkConnectionTracker conns = deps.resolveDependency(NetworkConnectionTracker.class);
        QueryReaper reaper = new QueryReaper(txs, conns, graceMillis, heapShare);
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof NotificationEmitter emitter) {
                emitter.addNotificationListener((n, handback) -> {
                    if (GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(n.getType())) {
                        reaper.afterGc(GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData()));
                    }
                }, null, null);
            }
        }
        Thread t = new Thread(reaper, "sgr-query-reaper");
        t.setDaemon(true);
        t.setPriority(Thread.MAX_PRIORITY);
        t.start();
    }

    /** After each collection: the heap still over {@code heapShare} full means live data is growing past it. */
    private void afterGc(GarbageCollectionNotificationInfo info) {
        try {
            long used = 0;
            for (Map.Entry<String, MemoryUsage> e : info.getGcInfo().getMemoryUsageAfterGc().entrySet()) {
                if (heapPools.contains(e.getKey())) {
                    used += e.getValue().getUsed();
                }
            }
            long max = Runtime.getRuntime().maxMemory();
            if (used >= heapShare * max) {
                guardHeap(used, max);
            }
        } catch (Throwable e) {  // never let the collector's notification thread die
            System.out.println("SGR-NEO4J-WARNING query reaper: " + e);
        }
    }

    @Override
    public void run() {
        while (true) {
            try {
                Thread.sleep(TICK_MILLIS);
                sweepDeadlines();
                sampleAllocations();
            } catch (InterruptedException e) {
                return;
            } catch (Throwable e) {  // OutOfMemoryError included: the reaper keeps running
                System.out.println("SGR-NEO4J-WARNING query reaper: " + e);
            }
        }
    }

    private synchronized void sweepDeadlines() {
        long now = System.nanoTime();
        Map<Long, Long> still = new HashMap<>();
        for (KernelTransactionHandle h : transactions.activeTransactions()) {
            if (!h.isOpen() || h.isClosing()) {
                continue;
            }
            long seq = h.getTransactionSequenceNumber();
            long timeout = h.timeout().timeoutNanos();
            Optional<TerminationMark> mark = h.terminationMark();
            if (mark.isEmpty()) {
                if (timeout > 0 && now - h.startTimeNanos() > timeout) {
                    h.markForTermination(Status.Transaction.TransactionTimedOut);
                }
                continue;
            }
            if (now - mark.get().getTimestampNanos() < graceNanos) {
                continue;
            }
            Long last = stoppedAt.get(seq);
            if (last != null && now - last < graceNanos) {
                still.put(seq, last);
                continue;
            }
            String conn = connectionOf(h);
            Thread worker = conn == null ? null : workerOf(conn);
            if (worker != null) {
                reap(worker, conn, "ran " + (now - h.startTimeNanos()) / 1_000_000L + " ms, past its timeout");
                still.put(seq, now);
            }
        }
        stoppedAt.clear();
        stoppedAt.putAll(still);
    }

    /** Remember what each Bolt worker running Cypher has allocated; the top allocator since the last look, or null. */
    private synchronized Map.Entry<Thread, String> sampleAllocations() {
        if (threadBean == null) {
            return null;
        }
        Map<Long, Long> seen = new HashMap<>();
        Thread top = null;
        String topConn = null;
        long topDelta = -1;
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            String conn = connectionTag(e.getKey().getName());
            if (conn == null || !inCypher(e.getValue())) {
                continue;
            }
            long id = e.getKey().getId();
            long bytes = threadBean.getThreadAllocatedBytes(id);
            seen.put(id, bytes);
            long delta = bytes - allocated.getOrDefault(id, bytes);  // first seen: no delta yet
            if (delta > topDelta) {
                top = e.getKey();
                topConn = conn;
                topDelta = delta;
            }
        }
        allocated.clear();
        allocated.putAll(seen);
        return top == null ? null : Map.entry(top, topConn);
    }

    private synchronized void guardHeap(long used, long max) {
        long now = System.nanoTime();
        if (now - lastHeapStop < graceNanos) {
            return;
        }
        Map.Entry<Thread, String> top = sampleAllocations();
        if (top == null) {
            return;
        }
        for (KernelTransactionHandle h : transactions.activeTransactions()) {
            if (top.getValue().equals(connectionOf(h))) {
                h.markForTermination(Status.General.TransactionOutOfMemoryError);
            }
        }
        lastHeapStop = now;
        reap(top.getKey(), top.getValue(), "allocated the most while the heap stayed " + (100 * used / max)
                + "% full after a garbage collection");
    }

    private static String connectionOf(KernelTransactionHandle h) {
        Optional<String> conn = h.clientInfo().map(ClientConnectionInfo::connectionId);
        return conn.isPresent() && conn.get() != null && !conn.get().isEmpty() ? conn.get() : null;
    }

    /** The connection id in a Bolt worker's name ({@code neo4j.BoltWorker-5 [bolt-5 - /127.0.0.1:35930]}), or null. */
    private static String connectionTag(String threadName) {
        int open = threadName.indexOf('[');
        int dash = threadName.indexOf(" - ", open + 1);
        return threadName.startsWith("neo4j.BoltWorker") && open > 0 && dash > open
                ? threadName.substring(open + 1, dash) : null;
    }

    private static boolean inCypher(StackTraceElement[] stack) {
        for (StackTraceElement frame : stack) {
            if (frame.getClassName().startsWith("org.neo4j.cypher.internal.runtime")) {
                return true;
            }
        }
        return false;
    }

    /** The Bolt worker serving connection {@code conn} while it runs Cypher, or null. */
    private static Thread workerOf(String conn) {
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            if (conn.equals(connectionTag(e.getKey().getName())) && inCypher(e.getValue())) {
                return e.getKey();
            }
        }
        return null;
    }

    /** Stop the worker, then close its Bolt connection: a stopped worker cannot answer, the closed socket tells. */
    @SuppressWarnings({"deprecation", "removal"})
    private void reap(Thread worker, String conn, String why) {
        System.out.println("SGR-NEO4J-REAPED " + conn + ": the query " + why);
        System.out.flush();
        worker.stop();
        TrackedNetworkConnection c = connections.get(conn);
        if (c != null) {
            c.close();
        }
    }
}
