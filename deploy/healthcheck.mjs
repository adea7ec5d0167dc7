// The image's HEALTHCHECK: /readyz of the first surface the container serves (STOWAGE_ONLY lists
// them; a node serving everything answers on REST). Exit 0 when ready, 1 otherwise.
const PORTS = {
  rest: process.env.STOWAGE_REST_PORT || '8080',
  upload: process.env.STOWAGE_UPLOAD_PORT || '8081',
  cdn: process.env.STOWAGE_CDN_PORT || '8082',
};
const first = (process.env.STOWAGE_ONLY || 'rest').split(',')[0].trim();
const port = PORTS[first] ?? PORTS.rest;
fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3000) }).then(
  (res) => process.exit(res.ok ? 0 : 1),
  () => process.exit(1),
);
