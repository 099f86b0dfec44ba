import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { Errors } from '@efs/errors';
import { sendError } from '@efs/http';
import { refusedRequests } from './refusedRequests.ts';
import type { InFlightLimit } from '../limits/inFlightLimit.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route without an auth rule that still does work (the OpenADR face, which authenticates itself) is shed too. */
    shed?: true;
  }
}

const loadShed: FastifyPluginAsyncZod<{ limit: InFlightLimit; listener: string }> = async (app, { limit, listener }) => {
  const refused = refusedRequests(listener, 'load_shed');
  // The first hook of the listener: a request over the limit costs no authentication, parsing or
  // message. Only routes that do work count (those with an auth rule, or marked `shed`); health
  // checks never shed.
  // Callback form (it never waits): an async hook costs a promise per request. Answering, it calls no `done`.
  app.addHook('onRequest', (req, reply, done) => {
    const config = req.routeOptions.config;
    if (!config.auth && !config.shed) return done();
    if (!limit.tryAcquire()) {
      refused();
      return void sendError(reply, Errors.SERVICE_UNAVAILABLE(`The gateway is at capacity (${limit.max} requests in flight); nothing was done, retry later`));
    }
    // 'close' comes once whatever happens to the answer (sent, failed, or the client went away).
    reply.raw.once('close', () => limit.release());
    done();
  });
};

/**
 * Load shedding: at most GATEWAY_MAX_IN_FLIGHT requests in flight over all listeners; the next
 * answers 503 with Retry-After and the error body at once, before any work.
 */
export const loadShedPlugin = fp(loadShed, { name: 'efs-load-shed' });
