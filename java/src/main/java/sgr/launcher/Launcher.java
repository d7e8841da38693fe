package sgr.launcher;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import inet.ipaddr.IPAddressString;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.io.ByteUnit;

/**
 * Starts an embedded Neo4j 5.26 Community DBMS that serves Bolt on 127.0.0.1 only, locked down.
 *
 * <p>Usage: {@code Launcher --home DIR --port PORT --import-dir DIR [--password-file FILE | --no-auth]
 * [--plugins DIR] [--procedures a.b,c.*] [--pagecache 512m] [--transaction-timeout SECONDS]
 * [--transaction-memory SIZE] [--transaction-memory-total SIZE] [--reap-grace-ms N] [--reap-heap-share F]}. ({@code sgr.graph.server} always passes one
 * of the two auth flags; an invocation with neither, from an sgr that predates them, runs without
 * authentication and logs a warning. {@code --import-dir} defaults to {@code DIR/import}.)
 *
 * <ul>
 *   <li>Authentication is on: the user {@code neo4j} gets the password read from {@code --password-file}
 *       (first line; never taken from the command line, which other users can see). {@code --no-auth} turns
 *       authentication off instead.</li>
 *   <li>No file or network access from Cypher: {@code LOAD CSV} may not use file URLs, its import root is
 *       {@code --import-dir} (an empty folder), and every address is on the Cypher IP blocklist, so
 *       {@code LOAD CSV FROM "http://…"} cannot reach the network.</li>
 *   <li>Only the plugin procedures named by {@code --procedures} are loaded (the allowlist; they may
 *       leave the sandbox, as {@code apoc.meta.stats} must). The HTTP connector is off.</li>
 *   <li>Every transaction has a deadline ({@code db.transaction.timeout}, unless the client sets its own) and a memory
 *       limit ({@code db.memory.transaction.max}, {@code dbms.memory.transaction.total.max}); {@link QueryReaper}
 *       makes the deadline hold while Cypher evaluates one long expression ({@code --reap-grace-ms 0}: off).</li>
 * </ul>
 *
 * <p>The store lives under {@code DIR/data} and persists between runs. Prints
 * {@code SGR-NEO4J-READY bolt://127.0.0.1:PORT} once the default database accepts queries and the password
 * is set, then runs until SIGTERM, when it shuts the DBMS down cleanly.
 */
public final class Launcher {
    private Launcher() {}

    private static void fail(String message) {
        System.err.println("SGR-NEO4J-ERROR " + message);
        System.exit(2);
    }

    public static void main(String[] args) throws Exception {
        Path home = null;
        int port = 7687;
        Path plugins = null;
        Path importDir = null;
        Path passwordFile = null;
        boolean auth = true;
        List<String> procedures = new ArrayList<>();
        String pagecache = "512m";
        long txTimeoutSeconds = 0;
        String txMemory = null;
        String txMemoryTotal = null;
        long reapGraceMillis = 500;
        double reapHeapShare = 0.85;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (a) {
                case "--home" -> { home = Path.of(v); i++; }
                case "--port" -> { port = Integer.parseInt(v); i++; }
                case "--plugins" -> { plugins = Path.of(v); i++; }
                case "--import-dir" -> { importDir = Path.of(v); i++; }
                case "--password-file" -> { passwordFile = Path.of(v); i++; }
                case "--no-auth" -> auth = false;
                case "--procedures" -> {
                    Arrays.stream(v.split(",")).map(String::trim).filter(s -> !s.isEmpty()).forEach(procedures::add);
                    i++;
                }
                case "--pagecache" -> { pagecache = v; i++; }
                case "--transaction-timeout" -> { txTimeoutSeconds = Long.parseLong(v); i++; }
                case "--transaction-memory" -> { txMemory = v; i++; }
                case "--transaction-memory-total" -> { txMemoryTotal = v; i++; }
                case "--reap-grace-ms" -> { reapGraceMillis = Long.parseLong(v); i++; }
                case "--reap-heap-share" -> { reapHeapShare = Double.parseDouble(v); i++; }
                default -> fail("unknown argument: " + a);
            }
        }
        if (home == null) {
            fail("--home is required");
        }
        if (importDir == null) {
            importDir = home.resolve("import");
        }
        if (auth && passwordFile == null) {
            // an older sgr that predates authentication: keep it working, and say so in the log
            System.out.println("SGR-NEO4J-WARNING no --password-file given: authentication is off (update sgr)");
            auth = false;
        }
        String password = null;
        if (auth) {
            List<String> lines = Files.readAllLines(passwordFile, StandardCharsets.UTF_8);
            password = lines.isEmpty() ? "" : lines.get(0).strip();
            if (password.length() < 8) {
                fail("the password in " + passwordFile + " is shorter than 8 characters");
            }
        }
        Files.createDirectories(home);
        Files.createDirectories(importDir);

        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .setConfig(HttpConnector.enabled, false)
                // NOOP keep-alives during every request and a receive-timeout hint to the driver (10 s x 3):
                // a client is never left waiting forever on an answer the server failed to send
                .setConfig(BoltConnector.connection_keep_alive_type, BoltConnector.KeepAliveRequestType.ALL)
                .setConfig(BoltConnector.connection_keep_alive, Duration.ofSeconds(10))
                .setConfig(BoltConnector.connection_keep_alive_probes, 3)
                .setConfig(GraphDatabaseSettings.auth_enabled, auth)
                .setConfig(GraphDatabaseSettings.allow_file_urls, false)
                .setConfig(GraphDatabaseSettings.load_csv_file_url_root, importDir.toAbsolutePath())
                .setConfig(GraphDatabaseInternalSettings.cypher_ip_blocklist,
                        List.of(new IPAddressString("0.0.0.0/0"), new IPAddressString("::/0")))
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.parse(pagecache))
                .setConfig(GraphDatabaseSettings.procedure_unrestricted, procedures)
                .setConfig(GraphDatabaseSettings.procedure_allowlist, procedures)
                // a deadline for every transaction that does not bring its own (a client's timeout replaces it)
                .setConfig(GraphDatabaseSettings.transaction_timeout, Duration.ofSeconds(txTimeoutSeconds));
        if (txMemory != null) {  // one transaction may not take the whole heap; nor may all of them together
            builder.setConfig(GraphDatabaseSettings.memory_transaction_max_size, ByteUnit.parse(txMemory));
        }
        if (txMemoryTotal != null) {
            builder.setConfig(GraphDatabaseSettings.memory_transaction_global_max_size, ByteUnit.parse(txMemoryTotal));
        }
        if (plugins != null && Files.isDirectory(plugins)) {
            builder.setConfig(GraphDatabaseSettings.plugin_dir, plugins.toAbsolutePath());
        }
        DatabaseManagementService dbms = builder.build();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("SGR-NEO4J-STOPPING");
            dbms.shutdown();
            stopped.countDown();
        }, "sgr-neo4j-shutdown"));

        if (auth) {
            setPassword(dbms, password);
        }
        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        if (!db.isAvailable(Duration.ofMinutes(2).toMillis())) {
            System.err.println("SGR-NEO4J-ERROR database did not become available");
            System.exit(1);
        }
        db.executeTransactionally("RETURN 1");
        if (reapGraceMillis > 0) {
            QueryReaper.start(db, reapGraceMillis, reapHeapShare);
        }
        System.out.println("SGR-NEO4J-READY bolt://127.0.0.1:" + port + (auth ? "" : " (authentication off)"));
        System.out.flush();
        stopped.await();
    }

    /** Give the user {@code neo4j} this password (no change required); the password itself is never printed. */
    private static void setPassword(DatabaseManagementService dbms, String password) {
        GraphDatabaseService system = dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME);
        if (!system.isAvailable(Duration.ofMinutes(2).toMillis())) {
            fail("the system database did not become available");
        }
        try {
            system.executeTransactionally("ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
        } catch (RuntimeException e) {
            String msg = String.valueOf(e.getMessage());
            if (!msg.contains("Old password and new password cannot be the same")) {
                fail("could not set the password of user neo4j: " + msg.replace(password, "***"));
            }
        }
    }
}
