// Waits until the broker (or every node of a cluster) answers a metadata request
// (describeCluster), printing progress. Run as a single-file program on the broker's own
// classpath, so kafka:up needs no npm install.
// Usage: java -cp 'libs/*' WaitReady.java <host:port[,host:port…]> <timeout-seconds> [brokers]
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;

public class WaitReady {
  public static void main(String[] args) throws Exception {
    String broker = args.length > 0 ? args[0] : "127.0.0.1:9092";
    long timeoutMs = (args.length > 1 ? Long.parseLong(args[1]) : 90) * 1000;
    long deadline = System.currentTimeMillis() + timeoutMs;
    int expected = args.length > 2 ? Integer.parseInt(args[2]) : 1;
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker);
    props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "2000");
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "2000");
    props.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
    int attempt = 0;
    try (Admin admin = Admin.create(props)) {
      while (true) {
        attempt++;
        try {
          DescribeClusterResult cluster =
              admin.describeCluster(new DescribeClusterOptions().timeoutMs(2000));
          String id = cluster.clusterId().get(3, TimeUnit.SECONDS);
          int brokers = cluster.nodes().get(3, TimeUnit.SECONDS).size();
          if (brokers < expected) throw new IllegalStateException(brokers + " of " + expected + " brokers up");
          System.out.printf("[kafka:up] broker answers metadata: cluster %s, %d broker(s)%n", id, brokers);
          return;
        } catch (Exception e) {
          if (System.currentTimeMillis() > deadline) {
            System.err.printf("[kafka:up] no metadata answer from %s after %d s: %s%n",
                broker, timeoutMs / 1000, e.getMessage());
            System.exit(1);
          }
          if (attempt % 5 == 0) System.out.printf("[kafka:up] waiting for %s (%d tries)...%n", broker, attempt);
          Thread.sleep(500);
        }
      }
    }
  }
}
