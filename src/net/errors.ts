/**
 * Error catalogue of the outbound client. Codes and messages are the Upload API's wire values
 * (wire-reference §1.2) so the from_url status endpoint can report them verbatim.
 *
 * URL errors are 400: the caller's URL is at fault and /from_url/ answers them synchronously.
 * Download errors happen after the URL was accepted and normally travel only as
 * error_code + message in /from_url/status/; the statuses given here are what a synchronous caller
 * (e.g. a remote copy) would answer: 400 when the remote resource is at fault (too big, 4xx),
 * 502/504 when the remote side failed or was too slow.
 */
import { AppError } from '../core/errors.js';

const bad = (code: string, message: string) => () => new AppError(400, code, message);

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
  tooBig: (size: number, max: number) =>
    new AppError(400, 'DownloadFileSizeLimitExceededError', `Downloaded file is too big: ${size} > ${max}.`),
  clientError: (status: number) => new AppError(400, 'DownloadFileHTTPClientError', `HTTP client error: ${status}.`),
  serverError: (status: number) => new AppError(502, 'DownloadFileHTTPServerError', `HTTP server error: ${status}.`),
  timeout: () => new AppError(504, 'DownloadFileTimeLimitExceededError', 'Download time limit exceeded.'),
  /** `reason` is a system error code such as ECONNREFUSED; never a stack or an internal message. */
  network: (reason: string) => new AppError(502, 'DownloadFileHTTPNetworkError', `HTTP network error: ${reason}.`),
};
