package sgr.launcher;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.io.ByteUnit;

/**
 * Starts an embedded Neo4j 5.26 Community DBMS that serves Bolt on 127.0.0.1.
 *
 * <p>Usage: {@code Launcher --home DIR --port PORT [--plugins DIR] [--pagecache 512m] [--tx-timeout 0s]}.
 * The store lives under {@code DIR/data} and persists between runs. Authentication is off
 * (loopback only). Prints {@code SGR-NEO4J-READY bolt://127.0.0.1:PORT} once the default
 * database accepts queries, then runs until SIGTERM, when it shuts the DBMS down cleanly.
 */
public final class Launcher {
    private Launcher() {}

    public static void main(String[] args) throws Exception {
        Path home = null;
        int port = 7687;
        Path plugins = null;
        String pagecache = "512m";
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (a) {
                case "--home" -> { home = Path.of(v); i++; }
                case "--port" -> { port = Integer.parseInt(v); i++; }
                case "--plugins" -> { plugins = Path.of(v); i++; }
                case "--pagecache" -> { pagecache = v; i++; }
                default -> {
                    System.err.println("unknown argument: " + a);
                    System.exit(2);
                }
            }
        }
        if (home == null) {
            System.err.println("--home is required");
            System.exit(2);
        }
        Files.createDirectories(home);

        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.parse(pagecache))
                .setConfig(GraphDatabaseSettings.procedure_unrestricted, List.of("apoc.*"))
                .setConfig(GraphDatabaseSettings.procedure_allowlist, List.of("*"));
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

        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        if (!db.isAvailable(Duration.ofMinutes(2).toMillis())) {
            System.err.println("database did not become available");
            System.exit(1);
        }
        db.executeTransactionally("RETURN 1");
        System.out.println("SGR-NEO4J-READY bolt://127.0.0.1:" + port);
        System.out.flush();
        stopped.await();
    }
}
