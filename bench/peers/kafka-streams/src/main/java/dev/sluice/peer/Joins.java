package dev.sluice.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.LogAndContinueExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.state.Stores;

/**
 * The two joins of {@code npm run bench:join} as a Kafka Streams user writes them, exactly-once
 * (v2), one stream thread (JOIN selects one):
 *
 * <ul>
 *   <li>{@code interval}: orders ⋈ payments on {@code payload.key} within an hour either way, a
 *       KStream-KStream inner join ({@code JoinWindows.ofTimeDifferenceAndGrace}); both streams
 *       re-keyed, so both go through a repartition topic, as in Sluice.
 *   <li>{@code table}: orders ⋈ customers on {@code payload.key} = the row's {@code
 *       payload.customer}, a KStream-KTable left join over a versioned store, so each order gets
 *       the row current at its event time (Kafka Streams' temporal join, KIP-914), as in Sluice.
 * </ul>
 *
 * <p>Results are written as Sluice writes them (the same fields; numbers compare after the
 * bench's canonical JSON), so the two outputs can be compared record for record.
 */
public final class Joins {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final DateTimeFormatter ISO_MILLIS =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
  private static volatile boolean firstRecordSeen = false;

  private Joins() {}

  public static void main(String[] args) throws Exception {
    String join = DailyRevenue.required("JOIN");
    String left = DailyRevenue.required("LEFT_TOPIC");
    String right = DailyRevenue.required("RIGHT_TOPIC");
    String output = DailyRevenue.required("OUTPUT_TOPIC");
    String pipelineId = DailyRevenue.required("PIPELINE_ID");
    Duration grace = Duration.ofMillis(Long.parseLong(DailyRevenue.env("GRACE_MS", "86400000")));

    Properties config = new Properties();
    config.put(StreamsConfig.APPLICATION_ID_CONFIG, DailyRevenue.required("APPLICATION_ID"));
    config.put(
        StreamsConfig.BOOTSTRAP_SERVERS_CONFIG,
        DailyRevenue.env("KAFKA_BROKERS", "127.0.0.1:9092"));
    config.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    config.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, DailyRevenue.env("STREAM_THREADS", "1"));
    config.put(
        StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, DailyRevenue.env("COMMIT_INTERVAL_MS", "100"));
    config.put(
        StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("sluice-peer-join-").toString());
    config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    config.put(
        StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG,
        LogAndContinueExceptionHandler.class);

    Topology topology =
        "table".equals(join)
            ? table(left, right, output, pipelineId, grace)
            : interval(left, right, output, pipelineId, grace);
    KafkaStreams streams = new KafkaStreams(topology, config);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  streams.close(Duration.ofSeconds(30));
                  stopped.countDown();
                }));
    streams.setStateListener(
        (now, before) -> DailyRevenue.line("state", "\"state\":\"" + now + "\""));
    streams.start();
    stopped.await();
  }

  /** A source of envelopes of one type, re-keyed by {@code payload.<field>}. */
  private static KStream<String, JsonNode> keyed(
      StreamsBuilder builder, String topic, String type, String field) {
    return builder.stream(
            topic,
            Consumed.with(Serdes.String(), DailyRevenue.jsonSerde())
                .withTimestampExtractor(new DailyRevenue.EventTime()))
        .peek((key, event) -> firstRecord())
        .filter((key, event) -> event != null && type.equals(DailyRevenue.text(event.get("event_type"))))
        .filter((key, event) -> DailyRevenue.text(payload(event).get(field)) != null)
        .selectKey((key, event) -> DailyRevenue.text(payload(event).get(field)));
  }

  static Topology interval(
      String orders, String payments, String output, String pipelineId, Duration grace) {
    StreamsBuilder builder = new StreamsBuilder();
    KStream<String, JsonNode> left = keyed(builder, orders, "order.placed", "key");
    KStream<String, JsonNode> right = keyed(builder, payments, "payment.captured", "key");
    left.join(
            right,
            (key, order, payment) -> {
              ObjectNode result = base(pipelineId, "paid", key, Math.max(time(order), time(payment)));
              result.set("order", payload(order).get("amount"));
              result.set("paid", payload(payment).get("amount"));
              return result.toString();
            },
            JoinWindows.ofTimeDifferenceAndGrace(Duration.ofHours(1), grace),
            StreamJoined.with(Serdes.String(), DailyRevenue.jsonSerde(), DailyRevenue.jsonSerde()))
        .to(output, Produced.with(Serdes.String(), Serdes.String()));
    return builder.build();
  }

  static Topology table(
      String orders, String customers, String output, String pipelineId, Duration grace) {
    StreamsBuilder builder = new StreamsBuilder();
    KTable<String, JsonNode> rows =
        keyed(builder, customers, "customer.updated", "customer")
            .toTable(
                Materialized.<String, JsonNode>as(
                        Stores.persistentVersionedKeyValueStore("customers", Duration.ofDays(30)))
                    .withKeySerde(Serdes.String())
                    .withValueSerde(DailyRevenue.jsonSerde()));
    keyed(builder, orders, "order.placed", "key")
        .leftJoin(
            rows,
            (key, order, row) -> {
              ObjectNode result = base(pipelineId, "tiered", key, time(order));
              result.set("amount", payload(order).get("amount"));
              if (row == null) result.putNull("tier");
              else result.set("tier", payload(row).get("tier"));
              return result.toString();
            },
            Joined.<String, JsonNode, JsonNode>with(
                    Serdes.String(), DailyRevenue.jsonSerde(), DailyRevenue.jsonSerde())
                .withGracePeriod(grace))
        .to(output, Produced.with(Serdes.String(), Serdes.String()));
    return builder.build();
  }

  private static ObjectNode base(String pipelineId, String join, String key, long time) {
    ObjectNode result = JSON.createObjectNode();
    result.put("pipeline_id", pipelineId);
    result.put("join", join);
    result.put("key", key);
    result.put("event_time", ISO_MILLIS.format(Instant.ofEpochMilli(time)));
    return result;
  }

  private static JsonNode payload(JsonNode event) {
    JsonNode payload = event.get("payload");
    return payload == null ? JSON.createObjectNode() : payload;
  }

  private static long time(JsonNode event) {
    return new DailyRevenue.EventTime().extract(
        new org.apache.kafka.clients.consumer.ConsumerRecord<>("", 0, 0, null, event), -1);
  }

  private static void firstRecord() {
    if (firstRecordSeen) return;
    firstRecordSeen = true;
    DailyRevenue.line("first_record", "\"time\":" + System.currentTimeMillis());
  }
}
