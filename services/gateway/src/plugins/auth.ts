import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Principal } from '@efs/contracts';
import { Errors } from '@efs/errors';
import type { Logger } from '@efs/logging';
import { bearerChallenge, credentialPresented, type AuthRule, type Authenticator } from '../auth/authenticate.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling, set by the auth plugin on every route that declares an auth rule. */
    principal?: Principal;
  }
  interface FastifyContextConfig {
    /** The token kinds a route accepts; routes without one (health, OpenAPI, the portal) are public. */
    auth?: AuthRule;
  }
}

/** The principal of an authenticated route's request. */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw Errors.INTERNAL_ERROR(undefined, { cause: new Error(`${req.method} ${req.url} has no auth rule`) });
  return req.principal;
}

/** The request goes on as the principal's; anything that throws here is the request's error, as in an async hook. */
function admit(req: FastifyRequest, principal: Principal, done: (err?: Error) => void): void {
  try {
    req.principal = principal;
    // The request's own logger (a child made for it) takes the bindings: no second child per request.
    (req.log as Logger).setBindings({ principal_kind: principal.kind, token_id: principal.token_id });
  } catch (err) {
    return done(err as Error);
  }
  done();
}

const auth: FastifyPluginAsyncZod<{ authenticator: Authenticator }> = async (app, { authenticator }) => {
  app.decorateRequest('principal', undefined);
  // onRequest precedes body parsing and validation: an anonymous or wrong caller learns nothing
  // about the body, and is not counted against anyone's limit (the rate limit runs after this).
  // Callback form: a client token or utility key is known from memory at once, without the promise
  // an async hook costs per request; a signed token goes on once its signature is checked.
  app.addHook('onRequest', (req, _reply, done) => {
    const rule = req.routeOptions.config.auth;
    if (!rule) return done();
    let principal: Principal | Promise<Principal>;
    try {
      principal = authenticator.authenticate(req, rule);
    } catch (err) {
      return done(err as Error);
    }
    if (principal instanceof Promise) principal.then((p) => admit(req, p, done), done);
    else admit(req, principal, done);
  });
  // Every 401 of the listener, whoever answers it, tells the client how to authenticate (RFC 6750).
  app.addHook('onSend', (req, reply, payload, done) => {
    if (reply.statusCode === 401) reply.header('www-authenticate', bearerChallenge(credentialPresented(req)));
    done(null, payload);
  });
};

/**
 * Authentication of every route with an auth rule (`config.auth`): 401 or 403 before anything
 * else; every 401 of the listener carries `WWW-Authenticate: Bearer`.
 */
export const authPlugin = fp(auth, { name: 'efs-auth' });
