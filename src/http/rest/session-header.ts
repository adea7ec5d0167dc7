/**
 * The header a browser page of this server sends with the REST calls it makes on a session cookie
 * (the dashboard's pages, the docs page's "Try it out"): a form on another site cannot set it, and
 * a script on another origin cannot send it with the cookie without a CORS preflight we refuse.
 */
export const SESSION_HEADER = 'x-stowage-dashboard';
