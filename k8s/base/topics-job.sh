#!/bin/sh
# The sluice-topics Job (topics-job.yaml): creates the internal and source topics up front, as
# sized here, rerunnable (--if-not-exists). On a secured Kafka it connects as the apps do, from
# the same variables (kafka-secret.template.yaml: KAFKA_SSL…, KAFKA_SASL_…), written into a
# client properties file for kafka-topics.
set -eu

bin="${KAFKA_BIN:-/opt/kafka/bin}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
config="$work/client.properties"
umask 077
: >"$config"

protocol=PLAINTEXT
if [ "${KAFKA_SSL:-false}" = true ]; then
  protocol=SSL
  if [ -n "${KAFKA_SSL_CA_FILE:-}" ]; then
    printf 'ssl.truststore.type=PEM\nssl.truststore.location=%s\n' "$KAFKA_SSL_CA_FILE" >>"$config"
  fi
  if [ -n "${KAFKA_SSL_CERT_FILE:-}" ]; then
    # Kafka's PEM keystore is one file: the (PKCS#8, unencrypted) key, then the certificate.
    cat "$KAFKA_SSL_KEY_FILE" "$KAFKA_SSL_CERT_FILE" >"$work/keystore.pem"
    printf 'ssl.keystore.type=PEM\nssl.keystore.location=%s\n' "$work/keystore.pem" >>"$config"
  fi
fi

mechanism="$(printf '%s' "${KAFKA_SASL_MECHANISM:-}" | tr '[:lower:]' '[:upper:]')"
if [ -n "$mechanism" ]; then
  if [ "$protocol" = SSL ]; then protocol=SASL_SSL; else protocol=SASL_PLAINTEXT; fi
  password="${KAFKA_SASL_PASSWORD:-}"
  if [ -n "${KAFKA_SASL_PASSWORD_FILE:-}" ]; then password="$(cat "$KAFKA_SASL_PASSWORD_FILE")"; fi
  case "$mechanism" in
    PLAIN) module=org.apache.kafka.common.security.plain.PlainLoginModule ;;
    *) module=org.apache.kafka.common.security.scram.ScramLoginModule ;;
  esac
  # Quoted for JAAS (\ and "), then for a properties file (\ again).
  quoted() { printf '%s' "$1" | sed -e 's/\\/\\\\\\\\/g' -e 's/"/\\\\"/g'; }
  printf 'sasl.mechanism=%s\nsasl.jaas.config=%s required username="%s" password="%s";\n' \
    "$mechanism" "$module" "$(quoted "$KAFKA_SASL_USERNAME")" "$(quoted "$password")" >>"$config"
fi
printf 'security.protocol=%s\n' "$protocol" >>"$config"

t() {
  "$bin/kafka-topics.sh" --bootstrap-server "$KAFKA_BROKERS" --command-config "$config" \
    --create --if-not-exists "$@"
}
prefix="${SLUICE_TOPIC_PREFIX:-sluice}"
t --topic "$prefix.pipelines" --partitions 1 --config cleanup.policy=compact
t --topic "$prefix.stats" --partitions 1 --config cleanup.policy=compact
t --topic "$prefix.dlq" --partitions 3
for topic in $(echo "${SOURCE_TOPICS:-events}" | tr ',' ' '); do
  t --topic "$topic" --partitions "${SOURCE_PARTITIONS:-6}"
done
