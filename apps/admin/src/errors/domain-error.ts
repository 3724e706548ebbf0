import type { ValidationIssue } from '@sluice/contracts';

/** The closed set of error codes the API answers with; the filter maps each to a status. */
export const ERROR_CODES = {
  validation_failed: 400,
  invalid_body: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  internal: 500,
  database_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** An error the API reports to its client as `{ error, message, details }`. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ValidationIssue[] = [],
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  details: ValidationIssue[];
  request_id?: string;
}
