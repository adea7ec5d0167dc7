/**
 * Errors of the operator's tools: the `stowage` CLI's project and storage commands and the
 * dashboard (whose JSON calls render like REST, `{"detail": message}`).
 */
import { fixed, worded } from './define.js';

export const adminErrors = {
  projectNameEmpty: fixed(400, 'InvalidName', 'project name must not be empty'),
  publicKeyInvalid: fixed(400, 'InvalidKey', 'public key must be 4-64 characters of A-Z a-z 0-9 _ -'),
  secretKeyInvalid: fixed(400, 'InvalidKey', 'secret key must be 16-128 characters of A-Z a-z 0-9 _ -'),
  projectNotFound: worded(404, 'ProjectNotFound', (pubKey: string) => `no project with public key ${pubKey}`),
  keyNotFound: worded(404, 'KeyNotFound', (keyId: number, pubKey: string) => `no active secret key ${keyId} in project ${pubKey}`),
  lastKey: fixed(400, 'LastKey', 'cannot revoke the last active secret key; add another first'),
  purgePathInvalid: fixed(400, 'InvalidPath', 'path must be a CDN path starting with a file UUID or group id, or a CDN URL'),
  unknownAddon: worded(400, 'UnknownAddon', (name: string, known: readonly string[]) => `unknown add-on "${name}" (known: ${known.join(', ')})`),
  storageNameInvalid: fixed(400, 'InvalidName', 'storage name must be 1-64 characters of A-Z a-z 0-9 _ . -'),
  storageBucketInvalid: fixed(400, 'InvalidBucket', 'bucket must be a valid S3 bucket name'),
  storageEndpointInvalid: fixed(400, 'InvalidEndpoint', 'endpoint must be an http(s) URL without a path, e.g. https://s3.example.com'),
  storageExists: worded(409, 'StorageExists', (name: string) => `the project already has a storage named ${name}`),

  // Dashboard
  badCredentials: fixed(401, 'BadCredentials', 'Unknown public key, or the secret key or admin token does not match.'),
  notSigned: fixed(404, 'NotSigned', 'This project does not require signed uploads.'),
  bodyNotObject: fixed(400, 'BadBody', 'Expected a JSON object.'),
  bodyFieldTooLong: worded(400, 'BadBody', (key: string, max: number) => `\`${key}\` must be a string of at most ${max} characters.`),
  publicKeyMissing: fixed(400, 'BadBody', '`public_key` is missing.'),
  secretOrToken: fixed(400, 'BadBody', 'Give `secret_key` or `admin_token` (one of them).'),
  insecureTransport: fixed(403, 'InsecureTransport', 'Signing in sends the secret key: use HTTPS.'),
  crossSite: fixed(403, 'CrossSiteRequest', 'Cross-site request refused.'),
  sessionEnded: fixed(401, 'SessionEnded', 'The dashboard session ended: sign in again.'),
  notSignedIn: fixed(401, 'NotSignedIn', 'Sign in to the dashboard first.'),
  notFromDashboard: worded(401, 'NotSignedIn', (header: string) => `Only the dashboard's pages call this (the ${header} header).`),
};
