import { NotFoundException } from '@nestjs/common';
import type { ArgumentsHost } from '@nestjs/common';

import { ApiExceptionFilter } from './api-exception.filter';
import { DomainError } from './domain-error';

function respond(exception: unknown) {
  const reply = {
    statusCode: 0,
    body: undefined as unknown,
    headers: {} as Record<string, string>,
  };
  const fake = {
    status(code: number) {
      reply.statusCode = code;
      return fake;
    },
    header(name: string, value: string) {
      reply.headers[name] = value;
      return fake;
    },
    send(body: unknown) {
      reply.body = body;
      return fake;
    },
  };
  const host = {
    switchToHttp: () => ({
      getRequest: () => ({ id: 'req-42', method: 'GET', url: '/api/v1/pipelines' }),
      getResponse: () => fake,
    }),
  } as unknown as ArgumentsHost;
  new ApiExceptionFilter().catch(exception, host);
  return reply;
}

describe('ApiExceptionFilter', () => {
  it('maps domain errors by code', () => {
    const reply = respond(
      new DomainError('validation_failed', 'bad', [{ path: 'name', message: 'is required' }]),
    );
    expect(reply.statusCode).toBe(400);
    expect(reply.body).toEqual({
      error: 'validation_failed',
      message: 'bad',
      details: [{ path: 'name', message: 'is required' }],
    });
  });

  it('maps framework errors by status and Fastify errors by code', () => {
    expect(respond(new NotFoundException('Cannot GET /nope')).body).toMatchObject({
      error: 'not_found',
    });
    const tooLarge = Object.assign(new Error('Request body is too large'), {
      code: 'FST_ERR_CTP_BODY_TOO_LARGE',
      statusCode: 413,
    });
    expect(respond(tooLarge)).toMatchObject({
      statusCode: 413,
      body: { error: 'payload_too_large', message: 'the request body is larger than 1 MiB' },
    });
    const badJson = Object.assign(new Error('Unexpected token } in JSON'), {
      code: 'FST_ERR_CTP_INVALID_JSON_BODY',
      statusCode: 400,
    });
    expect(respond(badJson)).toMatchObject({
      statusCode: 400,
      body: { error: 'invalid_body', details: [{ path: '$', message: expect.any(String) }] },
    });
    // Fastify's parser refuses `__proto__` keys with a plain 400 (found by the fuzz test).
    const forbidden = Object.assign(
      new SyntaxError('Object contains forbidden prototype property'),
      {
        statusCode: 400,
      },
    );
    expect(respond(forbidden)).toMatchObject({
      statusCode: 400,
      body: { error: 'invalid_body', details: [{ path: '$' }] },
    });
  });

  it('turns anything else into a 500 with the request id and no internals', () => {
    const reply = respond(new TypeError("Cannot read properties of undefined (reading 'secret')"));
    expect(reply.statusCode).toBe(500);
    expect(reply.body).toEqual({
      error: 'internal',
      message: 'an unexpected error occurred; it has been logged',
      details: [],
      request_id: 'req-42',
    });
    expect(JSON.stringify(reply.body)).not.toContain('secret');
  });
});
