/** What the Upload API's OpenAPI document says about the surface as a whole: title and auth schemes. */
import type { AppContext } from '../../context.js';
import type { DocumentInfo } from '../common/openapi/document.js';

export function uploadDocumentInfo(ctx: AppContext): DocumentInfo {
  return {
    title: 'Stowage Upload API',
    version: '1',
    description: [
      'Upload API, compatible with the Uploadcare Upload API (the official upload client and widget work against it).',
      'Parameters may come in the query string or the body (multipart or urlencoded); the body wins.',
      'Errors are plain text with the real status; with `jsonerrors=1` they are a 200 carrying `{"error": {"status_code", "content", "error_code"}}`.',
    ].join('\n\n'),
    serverUrl: ctx.bases.upload,
    securitySchemes: {
      publicKey: {
        type: 'apiKey',
        in: 'query',
        name: 'pub_key',
        description: 'The project\'s public key: `pub_key`, or `UPLOADCARE_PUB_KEY` on `/base/` and `/multipart/start/` (also as a body field).',
      },
      signedUpload: {
        type: 'apiKey',
        in: 'query',
        name: 'signature',
        description:
          'Signed uploads (required when the project enables them): `signature` = hex HMAC-SHA256 of `expire` keyed with the secret key, with `expire` a Unix time in the future; both as fields or query parameters.',
      },
      uploadToken: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'Instead of `signature`: `Authorization: Bearer <HS256 JWT signed with the secret key>`, with `exp` and optionally `scope` (paths) and an operations limit (docs/uploads.md).',
      },
    },
  };
}
