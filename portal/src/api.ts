import type {
  DeviceRecordType,
  EnrollmentCreateType,
  EnrollmentType,
  PortalSessionResponseType,
  ProgramType,
  SiteEventPatchType,
  SiteEventType,
  SiteRecordType,
  SiteUpdateType,
} from '@efs/api';
import type { ErrorBody } from '@efs/errors';

export class ApiError extends Error {
  readonly status: number;
  readonly body: ErrorBody;

  constructor(status: number, body: ErrorBody) {
    super(body.message);
    this.status = status;
    this.body = body;
  }

  get code(): string {
    return this.body.code;
  }
}

const isErrorBody = (v: unknown): v is ErrorBody =>
  typeof v === 'object' && v !== null && typeof (v as ErrorBody).code === 'string' && typeof (v as ErrorBody).message === 'string' && Array.isArray((v as ErrorBody).errors);

const failure = (status: number, code: string, message: string): ApiError => new ApiError(status, { code, message, status_code: status, detail: [], errors: [] });

async function send<T>(method: string, url: string, headers: Record<string, string>, body?: unknown, credentials: RequestCredentials = 'omit'): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { accept: 'application/json', ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      // No cookie is part of the portal's API calls (the embedded portal runs in cross-site
      // iframes); only the standalone portal's exchange sends its first-party login cookie.
      credentials,
      cache: 'no-store',
    });
  } catch {
    throw failure(0, 'NETWORK_ERROR', 'The service could not be reached. Check your connection and try again.');
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (response.ok) return parsed as T;
  if (isErrorBody(parsed)) throw new ApiError(response.status, parsed);
  throw failure(response.status, `HTTP_${response.status}`, `The service answered with an error (${response.status}). Try again later.`);
}

/** Redeems the page's single-use token into a portal session (once: a second try is refused). */
export function redeem(token: string): Promise<PortalSessionResponseType> {
  return send('POST', '/auth/session_token', {}, { token });
}

/**
 * The standalone portal: trades the first-party login cookie (HttpOnly, this origin only) for a
 * short portal session for one of the user's sites, the same bearer the embedded portal gets.
 */
export function standaloneSession(sessionUrl: string, siteId: string): Promise<PortalSessionResponseType> {
  return send('POST', sessionUrl, {}, { site_id: siteId }, 'same-origin');
}

/**
 * The site's end-user API on the portal's own origin, with the portal session as a bearer token.
 * A 401 means the session ended (expired, or its issuer revoked): a standalone portal first
 * `renew`s it once with its login cookie; otherwise, or when that fails, `onSessionEnded` is told.
 */
export class PortalApi {
  readonly siteId: string;
  private session: string;
  private readonly onSessionEnded: () => void;
  private readonly renew: (() => Promise<string>) | undefined;

  constructor(session: string, siteId: string, onSessionEnded: () => void, renew?: () => Promise<string>) {
    this.session = session;
    this.siteId = siteId;
    this.onSessionEnded = onSessionEnded;
    this.renew = renew;
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const once = () => send<T>(method, `/v1/site/${encodeURIComponent(this.siteId)}${path}`, { authorization: `Bearer ${this.session}` }, body);
    const ended = (err: unknown) => err instanceof ApiError && err.status === 401;
    try {
      return await once();
    } catch (err) {
      if (!ended(err)) throw err;
      const renewed = this.renew ? await this.renew().catch(() => undefined) : undefined;
      if (renewed === undefined) {
        this.onSessionEnded();
        throw err;
      }
      this.session = renewed;
      try {
        return await once();
      } catch (again) {
        if (ended(again)) this.onSessionEnded();
        throw again;
      }
    }
  }

  site = () => this.call<SiteRecordType>('GET', '');
  updateSite = (patch: SiteUpdateType) => this.call<SiteRecordType>('PATCH', '', patch);
  devices = () => this.call<DeviceRecordType[]>('GET', '/devices');
  programs = () => this.call<ProgramType[]>('GET', '/programs');
  program = (id: string) => this.call<ProgramType>('GET', `/program/${encodeURIComponent(id)}`);
  enrollments = (status?: string) => this.call<EnrollmentType[]>('GET', `/enrollments${status ? `?status=${encodeURIComponent(status)}` : ''}`);
  enroll = (body: EnrollmentCreateType) => this.call<EnrollmentType>('POST', '/enrollments', body);
  unenroll = (id: string) => this.call<EnrollmentType>('DELETE', `/enrollment/${encodeURIComponent(id)}`);
  events = () => this.call<SiteEventType[]>('GET', '/events');
  updateEvent = (id: string, patch: SiteEventPatchType) => this.call<SiteEventType>('PATCH', `/event/${encodeURIComponent(id)}`, patch);
}
