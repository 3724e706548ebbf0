import type { TlsOptions } from 'node:tls';

import { DataSource } from 'typeorm';

import { ENTITIES } from './entities';
import type { PostgresConnection } from './postgres-tls';
import { InitialSchema1764403200000 } from './migrations/1764403200000-InitialSchema';
import { DefinitionsAsWritten1764921600000 } from './migrations/1764921600000-DefinitionsAsWritten';
import { VersionNotes1767225600000 } from './migrations/1767225600000-VersionNotes';
import { Replays1767312000000 } from './migrations/1767312000000-Replays';

export const MIGRATIONS = [
  InitialSchema1764403200000,
  DefinitionsAsWritten1764921600000,
  VersionNotes1767225600000,
  Replays1767312000000,
];

/** The admin's PostgreSQL connection pool; `connection` from postgresConnection (TLS). */
export function createDataSource(connection: PostgresConnection): DataSource {
  return new DataSource({
    type: 'postgres',
    url: connection.url,
    // Client-side TLS options (checkServerIdentity included), which pg hands to tls.connect;
    // TypeORM's type names the server-side ones.
    ssl: connection.ssl as boolean | TlsOptions,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'sluice_migrations',
    synchronize: false,
    // Fail fast when PostgreSQL is away, so requests answer 503 instead of hanging.
    extra: { max: 10, connectionTimeoutMillis: 3000, query_timeout: 15000 },
  });
}
