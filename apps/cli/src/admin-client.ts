import { CliError } from './errors';

export interface AdminResponse<T> {
  status: number;
  body: T;
  headers: Headers;
}

interface ApiErrorBody {
  error?: string;
  message?: string;
  details?: { path: string; message: string }[];
}

/**
 * The admin's REST API (docs/design.md §6) as the CLI uses it. Every failure becomes a CliError that
 * says what to do; `expect` lists statuses the caller handles itself (a 404 on lookup, say).
 */
export class AdminClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string | undefined,
  ) {}

  async request<T>(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; expect?: number[] } = {},
  ): Promise<AdminResponse<T>> {
    if (!this.token) {
      throw new CliError('SLUICE_ADMIN_TOKEN is not set', [
        'export SLUICE_ADMIN_TOKEN=<the admin token> (npm start prints it)',
      ]);
    }
    const url = `${this.baseUrl}/api/v1${path}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...options.headers,
        },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(`cannot reach the admin at ${this.baseUrl}`, [
        `${cause?.code ?? cause?.message ?? (error as Error).message}`,
        'is it running? SLUICE_URL names it (default http://127.0.0.1:3900)',
      ]);
    }
    const text = await response.text();
    let body: unknown = undefined;
    try {
      body = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    if (response.ok || options.expect?.includes(response.status)) {
      return { status: response.status, body: body as T, headers: response.headers };
    }
    throw apiError(response.status, body as ApiErrorBody | undefined);
  }
}

function apiError(status: number, body: ApiErrorBody | undefined): CliError {
  if (status === 401) {
    return new CliError('the admin refused the token (401)', [
      'check SLUICE_ADMIN_TOKEN: it must be a token the admin knows (its own SLUICE_ADMIN_TOKEN, or one of its SLUICE_API_TOKENS_FILE)',
    ]);
  }
  const message = body?.message ?? `the admin answered ${status}`;
  const details = (body?.details ?? []).map((d) => `${d.path}: ${d.message}`);
  return new CliError(`${message} (${status}${body?.error ? ` ${body.error}` : ''})`, details);
}
