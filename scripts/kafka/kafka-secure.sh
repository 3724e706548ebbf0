# Sourced by kafka-up.sh when SLUICE_KAFKA_SECURE=1 (one node): the broker also listens with
# SASL_SSL (SCRAM-SHA-512, SCRAM-SHA-256, PLAIN) on KAFKA_SECURE_PORT (default KAFKA_PORT + 100)
# and with SSL and required client certificates (mTLS) two ports above, authorizes with
# StandardAuthorizer and ACLs, and keeps PLAINTEXT for development (its clients, the broker and
# the controller are User:ANONYMOUS, a super user). Everything it makes is under
# $SLUICE_KAFKA_HOME/secure: a CA, the broker's keystore, a client certificate for mTLS, the users'
# passwords, and secure.env with what a client needs as user `sluice`.
secure_dir="$home/secure"
# Bumped whenever the users change: they are made at format time, so older storage must go.
secure_version=2
# `sluice` may do anything (an operator's own client); `limited` has no ACL at all; `processor`,
# `admin` and `cli` get the least-privilege ACLs a test grants them (README, "Kafka ACLs").
secure_users=(sluice limited processor admin cli)
secure_port="${KAFKA_SECURE_PORT:-$((base_port + 100))}"
mtls_port=$((secure_port + 2))

# The CA, the broker's and the mTLS client's certificates, and the passwords: made once.
secure_material() {
  [[ "$(cat "$secure_dir/.complete" 2>/dev/null)" == "$secure_version" ]] && return 0
  rm -rf "$secure_dir"
  mkdir -p "$secure_dir"
  (
    cd "$secure_dir"
    local ssl=(openssl)
    "${ssl[@]}" req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=sluice-local-ca \
      -keyout ca.key -out ca.pem 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >broker.ext
    "${ssl[@]}" req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout broker.key -out broker.csr 2>/dev/null
    "${ssl[@]}" x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile broker.ext -out broker.crt 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\n' >client.ext
    "${ssl[@]}" req -newkey rsa:2048 -nodes -subj /CN=sluice-mtls -keyout client-mtls.key -out client.csr 2>/dev/null
    "${ssl[@]}" x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile client.ext -out client-mtls.pem 2>/dev/null
    "${ssl[@]}" rand -hex 16 >keystore.password
    "${ssl[@]}" pkcs12 -export -in broker.crt -inkey broker.key -certfile ca.pem -name broker \
      -out broker.p12 -passout "pass:$(cat keystore.password)"
    local user
    for user in "${secure_users[@]}"; do "${ssl[@]}" rand -hex 16 >"$user.password"; done
    chmod 600 ./*.key ./*.password broker.p12
    cat >secure.env <<ENV
KAFKA_BROKERS=127.0.0.1:$secure_port
KAFKA_SSL=true
KAFKA_SSL_CA_FILE=$secure_dir/ca.pem
KAFKA_SASL_MECHANISM=scram-sha-512
KAFKA_SASL_USERNAME=sluice
KAFKA_SASL_PASSWORD_FILE=$secure_dir/sluice.password
ENV
    echo "$secure_version" >.complete
  )
}

# The secured listeners and the authorizer, over the template's PLAINTEXT-only lines.
secure_properties() {
  local props="$1" port="$2" cport="$3" ks_pw sluice_pw limited_pw
  ks_pw="$(cat "$secure_dir/keystore.password")"
  sluice_pw="$(cat "$secure_dir/sluice.password")"
  limited_pw="$(cat "$secure_dir/limited.password")"
  sed -i -e '/^listeners=/d' -e '/^advertised.listeners=/d' -e '/^listener.security.protocol.map=/d' "$props"
  cat >>"$props" <<PROPS

# SLUICE_KAFKA_SECURE=1 (scripts/kafka/kafka-secure.sh)
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport,SASL_SSL://127.0.0.1:$secure_port,SSL://127.0.0.1:$mtls_port
advertised.listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport,SASL_SSL://127.0.0.1:$secure_port,SSL://127.0.0.1:$mtls_port
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL
sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256,PLAIN
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_sluice="$sluice_pw" user_limited="$limited_pw";
ssl.keystore.type=PKCS12
ssl.keystore.location=$secure_dir/broker.p12
ssl.keystore.password=$ks_pw
ssl.key.password=$ks_pw
ssl.truststore.type=PEM
ssl.truststore.location=$secure_dir/ca.pem
listener.name.ssl.ssl.client.auth=required
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:ANONYMOUS
allow.everyone.if.no.acl.found=false
PROPS
}

# SCRAM credentials are written into the metadata log when the storage is formatted.
secure_format_args() {
  local user
  printf '%s\n' --add-scram "SCRAM-SHA-256=[name=sluice,password=$(cat "$secure_dir/sluice.password")]"
  for user in "${secure_users[@]}"; do
    printf '%s\n' --add-scram "SCRAM-SHA-512=[name=$user,password=$(cat "$secure_dir/$user.password")]"
  done
}

# `sluice` (SASL) and the mTLS client may create and use any topic, group and transactional id
# and act on the cluster (WriteTxnMarkers needs ClusterAction); the others get none here.
secure_acls() {
  local principal
  for principal in User:sluice User:CN=sluice-mtls; do
    java -Xmx128m -Dlog4j2.level=OFF -cp "$classpath" org.apache.kafka.tools.AclCommand \
      --bootstrap-server "127.0.0.1:$base_port" --add --allow-principal "$principal" \
      --operation All --topic '*' --group '*' --transactional-id '*' --cluster >/dev/null
  done
}
