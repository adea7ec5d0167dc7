/** Path parameters shared by the files feature's REST routes. */
import { z } from 'zod';
import { validateMetadataKey } from '../core/metadata.js';
import { checked, uuidText } from '../http/common/route.js';
import { fileNotFound } from './service.js';

/** The file's UUID, canonical; one that is not a UUID names no file (404). */
export const fileParams = z.object({ uuid: uuidText(fileNotFound, "The file's UUID.") });

/**
 * A file and one of its metadata keys. The key is checked first (the shape's order is the order of
 * the issues), so a bad key answers its 400 whatever the uuid, as the service always did.
 */
export const metadataKeyParams = z.object({
  key: checked(z.string(), (key) => {
    validateMetadataKey(key);
    return key;
  }).meta({ type: 'string', description: 'The metadata key.' }),
  uuid: fileParams.shape.uuid,
});
