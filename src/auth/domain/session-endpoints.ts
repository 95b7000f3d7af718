/**
 * The paths of the browser session's endpoints. Two of them are part of this service's
 * registration at the OpenID provider, not only routes: the callback (with the public origin, the
 * redirect URI) and the back-channel logout URI. The session's rules build the redirect URI from it.
 */
export const SESSION_PATHS = {
  login: '/api/v1/session/login',
  callback: '/api/v1/session/callback',
  logout: '/api/v1/session/logout',
  backchannelLogout: '/api/v1/session/backchannel-logout',
} as const;
