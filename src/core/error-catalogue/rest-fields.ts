/**
 * The REST API's field checks: a query parameter or body field that fails its check answers 400
 * `{"detail": message}`, or on the DRF-style routes (file search, webhooks) the message under its
 * field. The wording is the hosted service's where the SDK suites compare it, so quotes, backticks
 * and trailing dots are part of each message.
 */
import { fixed, worded } from './define.js';

/** A field check's message that names nothing. */
const field = (message: string) => fixed(400, 'BadRequest', message);

export const restFieldErrors = {
  // Query parameters of the list routes
  notTrueOrFalse: worded(400, 'BadRequest', (name: string) => `\`${name}\` must be true or false.`),
  limitOutOfRange: worded(400, 'BadRequest', (max: number) => `\`limit\` must be an integer from 1 to ${max}.`),
  orderingNotField: worded(400, 'BadRequest', (name: string) => `\`ordering\` must be ${name} or -${name}.`),
  orderingNotOneOf: worded(400, 'BadRequest', (allowed: readonly string[]) => `\`ordering\` must be one of ${allowed.flatMap((f) => [f, `-${f}`]).join(', ')}.`),
  notDateTime: worded(400, 'BadRequest', (name: string) => `\`${name}\` must be an ISO 8601 date-time such as 2024-01-01T00:00:00Z.`),
  offsetNegative: field('`offset` must be a non-negative integer.'),
  includeNotAllowed: worded(400, 'BadRequest', (name: string, allowed: readonly string[]) => `\`${name}\` accepts only: ${allowed.join(', ')}.`),
  sizeCursorInvalid: worded(400, 'BadRequest', (name: string) => `\`${name}\` must be a size in bytes when ordering by size.`),

  // File search (DRF style: the message goes under its field)
  searchLimitOutOfRange: field('Must be an integer from 1 to 100.'),
  searchOffsetNegative: field('Must be a non-negative integer.'),
  searchIncludeOnlyAppdata: field('Only appdata can be included.'),

  // Signed CDN URL tokens
  tokenPathRequired: field('`path` is required: a CDN path starting with a file UUID or group id, or a CDN URL.'),
  tokenExpireOutOfRange: worded(400, 'BadRequest', (max: number) => `\`expire_in\` must be an integer number of seconds from 1 to ${max}.`),
  tokenWildcardAndExactUrl: field('`wildcard` and `exact_url` exclude each other.'),

  // Conversions and copies
  paramNotTrueOrFalse: worded(400, 'BadRequest', (name: string) => `\`${name}\` parameter should be \`true\` or \`false\`.`),
  pathsRequired: field('“paths” parameter is required.'),
  pathsNotList: field('“paths” parameter must be a list of strings.'),
  pathsTooMany: worded(400, 'BadRequest', (max: number) => `“paths” parameter has more than ${max} paths.`),
  sourceRequired: field('`source` parameter is required.'),
  sourceInvalid: field('Bad `source` parameter. Use UUID or CDN URL.'),
  sourceNotReady: field('File is not ready yet.'),
  targetParamRequired: field('`target` parameter is required.'),
  metadataNotObject: field('`metadata` must be an object of string keys to string values.'),

  // Webhook subscriptions (DRF wording)
  blank: field('This field may not be blank.'),
  tooLong: worded(400, 'BadRequest', (max: number) => `Ensure this field has no more than ${max} characters.`),
  urlInvalid: field('Enter a valid URL.'),
  notAChoice: worded(400, 'BadRequest', (value: unknown) => `"${String(value)}" is not a valid choice.`),
  notBoolean: field('Must be a valid boolean.'),
  notString: field('Not a valid string.'),
  controlCharacters: field('Control characters are not allowed.'),
};

/** An add-on call's `params` that fail their check; the message names `params.<key>`. */
const addonParam = <A extends unknown[]>(message: (...args: A) => string) => worded(400, 'InvalidAddonParams', message);

export const addonParamErrors = {
  notObject: addonParam(() => '`params` must be a JSON object.'),
  unknownKey: addonParam((key: string) => `\`params.${key}\` is not a parameter of this add-on.`),
  notBoolean: addonParam((key: string) => `\`params.${key}\` must be a boolean.`),
  notString: addonParam((key: string) => `\`params.${key}\` must be a string.`),
  notOneOf: addonParam((key: string, allowed: readonly string[]) => `\`params.${key}\` must be one of ${allowed.join(', ')}.`),
  confidenceOutOfRange: addonParam(() => '`params.min_confidence` must be a number from 0 to 100.'),
  // remove_bg
  percentOver100: addonParam((key: string) => `\`params.${key}\` must be at most 100%.`),
  notLength: addonParam((key: string, text: string) => `\`params.${key}\` must be a length in px or % (e.g. "30px" or "10%"), got "${text}".`),
  notPercentage: addonParam((key: string, text: string) => `\`params.${key}\` must be a percentage from 0% to 100%, got "${text}".`),
  scaleOutOfRange: addonParam(() => '`params.scale` must be from 10% to 100% (or "original").'),
  positionInvalid: addonParam(() => '`params.position` must be "original", "center", "N%" or "N% M%".'),
  roiInvalid: addonParam(() => '`params.roi` must be four lengths "x1 y1 x2 y2" (px or %).'),
};
