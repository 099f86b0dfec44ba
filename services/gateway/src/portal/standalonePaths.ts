/**
 * The standalone portal's paths on an integrator's host name (decisions.md, "Standalone
 * white-label portal"): the portal itself, the start of a sign-in, the redirect URI registered at
 * the provider, and logging out (also the post-logout redirect URI). `session` is where the page
 * trades the sign-in's cookie for the portal session it sends as a bearer token, as the embedded
 * portal's page does with its link.
 */
export const STANDALONE_PATHS = {
  portal: '/',
  login: '/auth/login',
  callback: '/auth/oidc/callback',
  logout: '/auth/logout',
  session: '/auth/portal_session',
} as const;
