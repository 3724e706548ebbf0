import { randomUUID } from 'node:crypto';

import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { GraphDefinitionSchema, PipelineDefinitionSchema } from '@sluice/contracts';
import { Logger } from 'nestjs-pino';

import { AppModule } from './app.module';
import type { AdminConfig } from './config/admin-config';
import { MetricsService } from './metrics/metrics.service';

export const BODY_LIMIT_BYTES = 1024 * 1024;
const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'];

/** Builds the admin app (not yet listening): used by main.ts and by the end-to-end tests. */
export async function createAdminApp(config: AdminConfig): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: true,
    // Request ids: the caller's X-Request-Id when it sends one, a UUID otherwise; logs and
    // 500 bodies carry it.
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forConfig(config),
    adapter,
    { bufferLogs: true },
  );
  app.useLogger(app.get(Logger));
  app.enableShutdownHooks();

  const fastify = app.getHttpAdapter().getInstance();
  // YAML bodies stay text; the pipelines controller parses them with the same rules as JSON.
  fastify.addContentTypeParser(
    YAML_TYPES,
    { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES },
    (_request, body, done) => done(null, body),
  );

  const metrics = app.get(MetricsService);
  fastify.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });

  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Sluice admin API')
      .setDescription(
        'Pipeline definitions: create, version, validate, preview, reset and observe. docs/design.md §6.',
      )
      .setVersion('1')
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'SLUICE_ADMIN_TOKEN' })
      .build(),
  );
  document.components = {
    ...document.components,
    schemas: {
      ...document.components?.schemas,
      // Either form: AllSource's linear definition, or a graph (docs/design.md §9).
      PipelineDefinition: { oneOf: [PipelineDefinitionSchema, GraphDefinitionSchema] } as never,
    },
  };
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/json' });
  return app;
}
