import { Catch, HttpException, Logger } from '@nestjs/common';
import type { ArgumentsHost, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { DomainError, ERROR_CODES } from './domain-error';
import type { ErrorBody, ErrorCode } from './domain-error';

const BODY_LIMIT_TEXT = '1 MiB';

/** Fastify's own errors (body parsing, limits) that reach Nest, by their code. */
const FASTIFY_ERRORS: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_body',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_body',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_body',
};

const HTTP_STATUS_CODES: Partial<Record<number, ErrorCode>> = {
  400: 'invalid_body',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  412: 'precondition_failed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/**
 * The one place errors become HTTP responses: domain errors by their code, framework errors by
 * their status, anything else a 500 that is logged with the request id and shows no internals.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('ApiExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const body = this.toBody(exception, request);
    // A body the parser refused (not JSON, a `__proto__` key, …) is wrong at its root: every
    // 400 about the body names a path, as validation errors do.
    if (body.error === 'invalid_body' && body.details.length === 0)
      body.details = [{ path: '$', message: body.message }];
    if (body.error === 'payload_too_large')
      body.message = `the request body is larger than ${BODY_LIMIT_TEXT}`;
    void reply
      .status(ERROR_CODES[body.error])
      .header('content-type', 'application/json; charset=utf-8')
      .send(body);
  }

  private toBody(exception: unknown, request: FastifyRequest): ErrorBody {
    if (exception instanceof DomainError) {
      return { error: exception.code, message: exception.message, details: exception.details };
    }
    const fastifyCode = (exception as { code?: unknown } | null)?.code;
    if (typeof fastifyCode === 'string' && FASTIFY_ERRORS[fastifyCode]) {
      const code = FASTIFY_ERRORS[fastifyCode]!;
      const message =
        code === 'payload_too_large'
          ? 'the request body is larger than 1 MiB'
          : (exception as Error).message;
      return { error: code, message, details: [] };
    }
    if (exception instanceof HttpException) {
      const code = HTTP_STATUS_CODES[exception.getStatus()];
      if (code) return { error: code, message: exception.message, details: [] };
    }
    const status = (exception as { statusCode?: unknown } | null)?.statusCode;
    if (typeof status === 'number' && HTTP_STATUS_CODES[status]) {
      return {
        error: HTTP_STATUS_CODES[status]!,
        message: (exception as Error).message,
        details: [],
      };
    }
    this.logger.error(
      { err: exception, request_id: request.id, method: request.method, url: request.url },
      'unexpected error',
    );
    return {
      error: 'internal',
      message: 'an unexpected error occurred; it has been logged',
      details: [],
      request_id: String(request.id),
    };
  }
}
