import { STATUS_CODES } from 'node:http';
import type { onSendHookHandler } from 'fastify';

/** The OpenADR 3.1 yaml's `problem` (RFC 7807): what every error of the OpenADR face answers. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
}

export function problem(status: number, detail?: string): Problem {
  return { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, ...(detail ? { detail } : {}) };
}

/** Our own error body (`@efs/errors`), as the gateway's shared hooks and handlers answer it. */
function isErrorBody(v: unknown): v is { code: string; message: string; status_code: number } {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o.code === 'string' && typeof o.message === 'string' && typeof o.status_code === 'number';
}

/**
 * Every error answered under the OpenADR prefix leaves in the `problem` shape, whoever answered it:
 * the listener's shared hooks (load, request-line and input checks), its error handler (validation,
 * body parsing, sizes) and this face's own refusals all answer our error body, which this onSend
 * hook rewrites as the last step before it is sent: one mechanism instead of a copy of each check.
 */
export const problemBodies: onSendHookHandler = (_req, reply, payload, next) => {
  if (reply.statusCode < 400 || typeof payload !== 'string') return next(null, payload);
  let body: unknown;
  try {
    body = JSON.parse(payload);
  } catch {
    return next(null, payload);
  }
  if (!isErrorBody(body)) return next(null, payload);
  reply.type('application/json; charset=utf-8');
  next(null, JSON.stringify(problem(reply.statusCode, body.message)));
};
