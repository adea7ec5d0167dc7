/** What the REST API's OpenAPI document says about the surface as a whole: title and auth schemes. */
import type { AppContext } from '../../context.js';
import type { DocumentInfo } from '../common/openapi/document.js';

export function restDocumentInfo(ctx: AppContext): DocumentInfo {
  return {
    title: 'Stowage REST API',
    version: '0.7',
    description: [
      'Management API, compatible with the Uploadcare REST API v0.7.',
      'Every request sends `Accept: application/vnd.uploadcare-v0.7+json` (or `application/vnd.svc-v0.7+json`); another Accept answers 406.',
      'Errors are JSON `{"detail": "…"}`.',
      '**Try it out on this page**: the page sends the versioned Accept itself. To authorise its calls, either sign in to the dashboard (`/dashboard/`) in this browser (the page then calls with that session), ' +
        'or use Authorize with `uploadcareSimple` and `Uploadcare.Simple <public key>:<secret key>` (from this machine, or over HTTPS). ' +
        'The signature scheme cannot be used from a browser page: a page may not set the `Date` header it covers.',
    ].join('\n\n'),
    serverUrl: ctx.bases.rest,
    securitySchemes: {
      uploadcareSimple: {
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        description: '`Authorization: Uploadcare.Simple <public key>:<secret key>` (or `Svc.Simple`). Only over HTTPS (or from loopback while `STOWAGE_SIMPLE_AUTH_LOOPBACK` allows it).',
      },
      uploadcareSignature: {
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        description:
          '`Authorization: Uploadcare <public key>:<signature>` (or `Svc`) with a `Date` header: the signature is the hex HMAC-SHA1, keyed with the secret key, of ' +
          '`METHOD\\n<md5 hex of the body>\\n<Content-Type>\\n<Date>\\n<path and query>`. For programs: a browser page (this one included) cannot send it, because it may not set `Date`.',
      },
    },
  };
}
