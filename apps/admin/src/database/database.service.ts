import { Inject, Injectable, Logger } from '@nestjs/common';
import type { OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';

import { ADMIN_CONFIG } from '../config/admin-config';
import type { AdminConfig } from '../config/admin-config';
import { DomainError } from '../errors/domain-error';
import { createDataSource } from './data-source';

// SQLSTATE classes and driver errors that mean "PostgreSQL is not reachable right now".
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed|Connection ended/i;

export function isDatabaseUnavailable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08')))
    return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message);
}

/**
 * Owns the TypeORM DataSource. The admin starts even when PostgreSQL is away: the connection is
 * retried in the background, requests meanwhile answer 503, and the pool reconnects by itself
 * after an outage.
 */
@Injectable()
export class DatabaseService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Database');
  readonly dataSource: DataSource;
  private connecting: Promise<void> | undefined;
  private closed = false;

  constructor(@Inject(ADMIN_CONFIG) config: AdminConfig) {
    this.dataSource = createDataSource(config.database);
  }

  /** Waits for the first connection a few seconds at most; retries go on in the background. */
  async onModuleInit(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, 5000)));
    await Promise.race([this.connect(), timeout]);
    clearTimeout(timer);
  }

  /** After every worker stopped in onModuleDestroy (Nest runs shutdown hooks after those). */
  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }

  get ready(): boolean {
    return this.dataSource.isInitialized;
  }

  /** Resolves once connected; retries every 2 s until then. */
  connect(): Promise<void> {
    this.connecting ??= (async () => {
      for (let attempt = 1; !this.closed; attempt++) {
        try {
          await this.dataSource.initialize();
          this.logger.log('connected to PostgreSQL');
          return;
        } catch (error) {
          if (attempt === 1 || attempt % 15 === 0) {
            this.logger.warn(
              `PostgreSQL is not reachable yet (${(error as Error).message}); retrying every 2 s`,
            );
          }
          await new Promise((resolve) => setTimeout(resolve, 2000));
        }
      }
    })();
    return this.connecting;
  }

  /** Runs `work` in a transaction; PostgreSQL being away becomes a 503 `database_unavailable`. */
  async transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.guard(() => this.dataSource.transaction(work));
  }

  async query<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.guard(() => work(this.dataSource.manager));
  }

  private async guard<T>(work: () => Promise<T>): Promise<T> {
    if (!this.dataSource.isInitialized) {
      throw new DomainError(
        'database_unavailable',
        'PostgreSQL is not reachable; try again shortly',
      );
    }
    try {
      return await work();
    } catch (error) {
      if (isDatabaseUnavailable(error)) {
        throw new DomainError(
          'database_unavailable',
          'PostgreSQL is not reachable; try again shortly',
        );
      }
      throw error;
    }
  }
}
