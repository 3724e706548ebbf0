import 'reflect-metadata';

import { assertPatchedKafkajs, UnpatchedKafkajsError } from '@sluice/kafka';

import { ConfigurationError, loadAdminConfig } from './config/admin-config';
import { createAdminApp } from './admin-app';

async function main(): Promise<void> {
  let config;
  try {
    config = loadAdminConfig();
    assertPatchedKafkajs();
  } catch (error) {
    if (error instanceof ConfigurationError || error instanceof UnpatchedKafkajsError) {
      process.stderr.write(`sluice-admin: ${error.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
  const app = await createAdminApp(config);
  await app.listen({ port: config.port, host: '0.0.0.0' });
}

void main();
