/**
 * The outbound client's errors. Codes and messages are the Upload API's wire values
 * (wire-reference §1.2) so the from_url status endpoint can report them verbatim.
 *
 * URL errors are 400: the caller's URL is at fault and /from_url/ answers them synchronously.
 * Download errors happen after the URL was accepted and normally travel only as
 * error_code + message in /from_url/status/; the statuses given here are what a synchronous caller
 * (e.g. a remote copy) would answer: 400 when the remote resource is at fault (too big, 4xx),
 * 502/504 when the remote side failed or was too slow.
 */
import { fixed, worded } from './define.js';

const bad = (code: string, message: string) => fixed(400, code, message);

export const urlErrors = {
  parsingFailed: bad('URLParsingFailedError', 'Failed to parse URL.'),
  schemeRequired: bad('URLSchemeRequiredError', 'No URL scheme supplied.'),
  schemeInvalid: bad('URLSchemeInvalidError', 'Invalid URL scheme.'),
  hostRequired: bad('URLHostRequiredError', 'No URL host supplied.'),
  hostMalformed: bad('URLHostMalformedError', 'URL host is malformed.'),
  hostNotFound: bad('HostnameNotFoundError', 'Host does not exist.'),
  privateIp: bad('URLHostPrivateIPForbiddenError', 'Only public IPs are allowed.'),
  redirectsLimit: bad('URLRedirectsLimitExceededError', 'Too many redirects.'),
};

export const downloadErrors = {
  tooBig: worded(400, 'DownloadFileSizeLimitExceededError', (size: number, max: number) => `Downloaded file is too big: ${size} > ${max}.`),
  clientError: worded(400, 'DownloadFileHTTPClientError', (status: number) => `HTTP client error: ${status}.`),
  serverError: worded(502, 'DownloadFileHTTPServerError', (status: number) => `HTTP server error: ${status}.`),
  timeout: fixed(504, 'DownloadFileTimeLimitExceededError', 'Download time limit exceeded.'),
  /** `reason` is a system error code such as ECONNREFUSED; never a stack or an internal message. */
  network: worded(502, 'DownloadFileHTTPNetworkError', (reason: string) => `HTTP network error: ${reason}.`),
};
