package dev.sluice.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.LogAndContinueExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.processor.StreamPartitioner;
import org.apache.kafka.streams.processor.TimestampExtractor;
import org.apache.kafka.streams.state.Stores;

/**
 * Sluice's daily-revenue pipeline as a Kafka Streams application: orders of type {@code
 * order.placed} with {@code status = paid}, summed by {@code currency} in tumbling one-day
 * event-time windows, one final result per window and currency, exactly-once (v2).
 *
 * <p>Two things Kafka Streams does differently, and how this peer bridges them:
 *
 * <ul>
 *   <li>Stream time after a repartition is the largest timestamp a partition has seen, not the
 *       minimum over its upstream partitions as in Sluice; records arriving behind it by more
 *       than the grace period are dropped. The grace (GRACE_MS, one hour unless set) must cover
 *       how far one source task runs ahead of the others: the bench sets three days, as one task
 *       ran almost a day of event time ahead on its input.
 *   <li>Records that match no order (the bench's end-of-input ticks) carry time only. Kafka
 *       Streams has no watermark markers, so they are sent to every repartition partition
 *       (a multicast partitioner) under a key no currency has, and their windows are dropped
 *       from the output: that is what closes the last windows, as Sluice's markers do.
 * </ul>
 *
 * <p>Sums are exact (BigDecimal over the doubles' exact values, rounded once), as Sluice's are,
 * so the two systems' results can be compared for equality.
 */
public final class DailyRevenue {
  /** The group of time-only records; no currency is named this. */
  static final String TIME_ONLY = "\u0000time";

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final DateTimeFormatter ISO_MILLIS =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
  private static volatile boolean firstRecordSeen = false;

  private DailyRevenue() {}

  public static void main(String[] args) throws Exception {
    String source = required("SOURCE_TOPIC");
    String output = required("OUTPUT_TOPIC");
    String pipelineId = required("PIPELINE_ID");
    Duration grace = Duration.ofMillis(Long.parseLong(env("GRACE_MS", "3600000")));

    Properties config = new Properties();
    config.put(StreamsConfig.APPLICATION_ID_CONFIG, required("APPLICATION_ID"));
    config.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, env("KAFKA_BROKERS", "127.0.0.1:9092"));
    config.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    // One thread: the peer of one Sluice replica, whose processing runs on one event loop.
    config.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, env("STREAM_THREADS", "1"));
    config.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, env("COMMIT_INTERVAL_MS", "100"));
    config.put(
        StreamsConfig.STATE_DIR_CONFIG,
        Files.createTempDirectory("sluice-peer-state-").toString());
    config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    config.put(
        StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG,
        LogAndContinueExceptionHandler.class);

    KafkaStreams streams = new KafkaStreams(topology(source, output, pipelineId, grace), config);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  streams.close(Duration.ofSeconds(30));
                  stopped.countDown();
                }));
    streams.setStateListener(
        (now, before) -> line("state", "\"state\":\"" + now + "\""));
    streams.start();
    stopped.await();
  }

  static org.apache.kafka.streams.Topology topology(
      String source, String output, String pipelineId, Duration grace) {
    Duration day = Duration.ofDays(1);
    StreamsBuilder builder = new StreamsBuilder();
    builder.stream(
            source, Consumed.with(Serdes.String(), jsonSerde()).withTimestampExtractor(new EventTime()))
        .peek((key, event) -> firstRecord())
        .flatMap((key, event) -> contributions(event))
        .repartition(
            Repartitioned.<String, Double>as("by-currency")
                .withKeySerde(Serdes.String())
                .withValueSerde(Serdes.Double())
                .withStreamPartitioner(new TimeOnlyToEveryPartition()))
        .groupByKey(Grouped.with(Serdes.String(), Serdes.Double()))
        .windowedBy(TimeWindows.ofSizeAndGrace(day, grace))
        .aggregate(
            () -> Revenue.ZERO,
            (currency, total, revenue) -> Revenue.plus(revenue, total),
            Materialized.<String, String>as(
                    Stores.inMemoryWindowStore("revenue", day.plus(grace), day, false))
                .withKeySerde(Serdes.String())
                .withValueSerde(Serdes.String()))
        .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()))
        .toStream()
        .filter((window, revenue) -> !TIME_ONLY.equals(window.key()))
        .map(
            (window, revenue) ->
                KeyValue.pair(
                    window.key(),
                    result(pipelineId, window.key(), revenue, window.window().start(), window.window().end())))
        .to(output, Produced.with(Serdes.String(), Serdes.String()));
    return builder.build();
  }

  /** What one event contributes: a paid order's total under its currency, or time only. */
  static List<KeyValue<String, Double>> contributions(JsonNode event) {
    if (event == null) return List.of();
    if (!"order.placed".equals(text(event.get("event_type")))) {
      return List.of(KeyValue.pair(TIME_ONLY, 0.0));
    }
    JsonNode payload = event.get("payload");
    if (payload == null || !"paid".equals(text(payload.get("status")))) return List.of();
    String currency = text(payload.get("currency"));
    JsonNode total = payload.get("total");
    // As in Sluice: a missing value is skipped, not counted as 0.
    if (currency == null || total == null || !total.isNumber()) return List.of();
    return List.of(KeyValue.pair(currency, total.asDouble()));
  }

  static String result(String pipelineId, String currency, String revenue, long start, long end) {
    Revenue parsed = Revenue.parse(revenue);
    ObjectNode record = JSON.createObjectNode();
    record.put("pipeline_id", pipelineId);
    record.put("group", currency);
    record.put("function", "sum");
    record.put("value", parsed.sum.doubleValue());
    record.put("count", parsed.count);
    ObjectNode window = record.putObject("window");
    window.put("start", ISO_MILLIS.format(Instant.ofEpochMilli(start)));
    window.put("end", ISO_MILLIS.format(Instant.ofEpochMilli(end)));
    record.put("final", true);
    return record.toString();
  }

  /** The exact sum and count of a window, kept as text ("sum|count") in the window store. */
  record Revenue(BigDecimal sum, long count) {
    static final String ZERO = "0|0";

    static Revenue parse(String text) {
      int bar = text.indexOf('|');
      return new Revenue(new BigDecimal(text.substring(0, bar)), Long.parseLong(text.substring(bar + 1)));
    }

    static String plus(String text, double total) {
      Revenue revenue = parse(text);
      return revenue.sum.add(new BigDecimal(total)).toPlainString() + "|" + (revenue.count + 1);
    }
  }

  /** Event time is the envelope's ISO-8601 (or epoch ms) `timestamp`, as in Sluice. */
  static final class EventTime implements TimestampExtractor {
    @Override
    public long extract(ConsumerRecord<Object, Object> record, long partitionTime) {
      if (record.value() instanceof JsonNode event) {
        JsonNode timestamp = event.get("timestamp");
        if (timestamp != null && timestamp.isIntegralNumber()) return timestamp.asLong();
        if (timestamp != null && timestamp.isTextual()) {
          try {
            return Instant.parse(timestamp.asText()).toEpochMilli();
          } catch (DateTimeParseException invalid) {
            return -1; // dropped, as Sluice dead-letters it
          }
        }
      }
      return record.timestamp();
    }
  }

  /** Time-only records go to every partition; orders are partitioned by currency as usual. */
  static final class TimeOnlyToEveryPartition implements StreamPartitioner<String, Double> {
    @Override
    public Optional<Set<Integer>> partitions(
        String topic, String key, Double value, int numPartitions) {
      if (!TIME_ONLY.equals(key)) return Optional.empty();
      return Optional.of(IntStream.range(0, numPartitions).boxed().collect(Collectors.toSet()));
    }
  }

  static String text(JsonNode node) {
    return node != null && node.isTextual() ? node.asText() : null;
  }

  static Serde<JsonNode> jsonSerde() {
    Serializer<JsonNode> serializer =
        (topic, node) -> {
          try {
            return node == null ? null : JSON.writeValueAsBytes(node);
          } catch (Exception error) {
            throw new IllegalStateException(error);
          }
        };
    Deserializer<JsonNode> deserializer =
        (topic, bytes) -> {
          try {
            return bytes == null ? null : JSON.readTree(bytes);
          } catch (Exception error) {
            throw new IllegalArgumentException("not JSON", error);
          }
        };
    return Serdes.serdeFrom(serializer, deserializer);
  }

  private static void firstRecord() {
    if (firstRecordSeen) return;
    firstRecordSeen = true;
    line("first_record", "\"time\":" + System.currentTimeMillis());
  }

  /** One JSON line on stdout: what the bench reads. */
  static void line(String event, String fields) {
    System.out.println("{\"event\":\"" + event + "\"," + fields + "}");
    System.out.flush();
  }

  static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? fallback : value;
  }

  static String required(String name) {
    String value = System.getenv(name);
    if (value == null || value.isEmpty()) throw new IllegalArgumentException(name + " is required");
    return value;
  }
}
