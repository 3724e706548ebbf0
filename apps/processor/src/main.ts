// The processor replica's entry point: configuration from the environment (docs/design.md §7), metrics
// and health on METRICS_PORT, a clean hand-over on SIGTERM/SIGINT.
import 'reflect-metadata';

import { assertPatchedKafkajs, UnpatchedKafkajsError } from '@sluice/kafka';

import { ConfigurationError, loadProcessorConfig } from './config/processor-config';
import { createLogger } from './logging/logger';
import { startObservabilityServer } from './observability/http-server';
import { Processor } from './processor';

async function main(): Promise<void> {
  let config;
  try {
    config = loadProcessorConfig();
    assertPatchedKafkajs();
  } catch (error) {
    if (error instanceof ConfigurationError || error instanceof UnpatchedKafkajsError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger({
    level: config.logLevel,
    format: config.logFormat,
    processorId: config.processorId,
  });
  const processor = new Processor(config, logger);
  const server = await startObservabilityServer(
    config.metricsPort,
    processor.metrics.registry,
    () => processor.health(),
    config.metricsToken,
  );
  logger.info({ port: config.metricsPort }, 'metrics and health listening');

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: finishing the batch in hand, committing, leaving the group');
    processor
      .stop()
      .then(() => server.close())
      .then(
        () => process.exit(0),
        (error: Error) => {
          logger.error({ err: error }, 'stopping failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  try {
    await processor.start();
  } catch (error) {
    logger.fatal({ err: error }, 'the processor could not start');
    await processor.stop().catch(() => undefined);
    server.close();
    process.exit(1);
  }
}

void main();
